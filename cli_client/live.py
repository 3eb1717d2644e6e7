"""Live updates: a thread follows WatchGame and hands what it sees to the game loop.

The open stream is also the player's presence: while it is open the player is there,
however long it thinks (the matchmaker warns and then forfeits only a player whose streams
have all ended). The thread remembers the last version it received. When the stream
breaks (the matchmaker restarts, the network drops) it reports the loss once, probes with
GetGame until the matchmaker answers, reports the reconnection, and watches again from
that version, so no update is missed or shown twice.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Any

import grpc

from cli_client.connection import Connection
from cli_client.errors import ClientError, UnreachableError
from wargame.v1 import matchmaker_pb2

# Failures that retrying cannot fix.
_FATAL = frozenset(
    {
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)
_TRANSIENT_REASONS = frozenset(
    {"ENGINE_UNAVAILABLE", "STORE_UNAVAILABLE", "RATE_LIMITED", "TOO_MANY_WATCHERS"}
)


@dataclass(frozen=True)
class Update:
    """One committed change of the game."""

    message: matchmaker_pb2.WatchGameResponse


@dataclass(frozen=True)
class Lost:
    """The connection broke; the watcher is reconnecting."""

    reason: str


@dataclass(frozen=True)
class Reconnected:
    """The matchmaker answers again; watching resumes after `version`."""

    version: int


@dataclass(frozen=True)
class Ended:
    """The stream ended because the game is over (following a rematch: once one was
    offered, or the matchmaker stopped waiting for one)."""


@dataclass(frozen=True)
class Failed:
    """Watching cannot go on."""

    error: ClientError


Item = Update | Lost | Reconnected | Ended | Failed


def transient(error: ClientError) -> bool:
    """Whether a failure may go away by retrying."""
    return (
        isinstance(error, UnreachableError)
        or error.reason in _TRANSIENT_REASONS
        or error.code
        in {
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.StatusCode.INTERNAL,
            grpc.StatusCode.UNKNOWN,
            grpc.StatusCode.CANCELLED,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        }
    )


class Watcher:
    """Follows one game's updates in a background thread."""

    def __init__(
        self,
        connection: Connection,
        game_id: str,
        after_version: int,
        *,
        follow_rematch: bool = False,
    ) -> None:
        self.connection = connection
        self.game_id = game_id
        self.last = after_version
        self.follow_rematch = follow_rematch
        self.items: queue.Queue[Item] = queue.Queue()
        self._stop = threading.Event()
        self._call: Any = None
        self._lock = threading.Lock()
        _ = connection.matchmaker  # open the channel in the caller's thread
        self._thread = threading.Thread(target=self._run, name=f"watch-{game_id}", daemon=True)

    def start(self) -> Watcher:
        """Start following."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop following (cancels the stream)."""
        self._stop.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()
        self._thread.join(2)

    def drain(self) -> list[Item]:
        """Everything reported since the last drain."""
        out: list[Item] = []
        while True:
            try:
                out.append(self.items.get_nowait())
            except queue.Empty:
                return out

    def _run(self) -> None:
        lost = False
        delay = 0.2
        while not self._stop.is_set():
            if lost:
                try:
                    self.connection.get_game(self.game_id, timeout=2.0)
                except ClientError as error:
                    if not transient(error):
                        self.items.put(Failed(error))
                        return
                    self._stop.wait(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                lost, delay = False, 0.2
                self.items.put(Reconnected(self.last))
            finished = False
            try:
                call = self.connection.watch(
                    self.game_id, self.last, follow_rematch=self.follow_rematch
                )
                with self._lock:
                    self._call = call
                if self._stop.is_set():
                    call.cancel()
                    return
                for message in call:
                    self.last = max(self.last, int(message.version))
                    self.items.put(Update(message))
                    if (
                        message.HasField("game")
                        and message.game.status == matchmaker_pb2.GAME_STATUS_FINISHED
                    ):
                        finished = True
            except grpc.RpcError as error:
                if self._stop.is_set():
                    return
                failure = self.connection.matchmaker_error(error)
                if error.code() in _FATAL and not transient(failure):
                    self.items.put(Failed(failure))
                    return
                self.items.put(Lost(failure.message))
                lost = True
                self._stop.wait(delay)
                continue
            if self._stop.is_set():
                return
            if finished:
                self.items.put(Ended())
                return
            # The matchmaker closed the stream (shutting down): find it again.
            self.items.put(Lost("the matchmaker closed the stream"))
            lost = True

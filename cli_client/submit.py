"""Sending a player's actions: at the version seen, retried while the servers cannot answer.

The policy, with no terminal in it:

- every submission carries the version the player saw and an idempotency key, so a retry
  of the same submission is applied once;
- while the matchmaker (or its engine or Redis) cannot be reached, the same submission is
  sent again with the same key, for up to `RETRY_SECONDS`;
- when the game moved on before the submission arrived (VERSION_CONFLICT) but the position
  the player decided on is unchanged (a draw offer answered, a clock read), the same
  actions are sent again at the new version, a few times at most; when the position did
  change, the conflict is the player's to see.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from cli_client.connection import Connection
from cli_client.errors import ClientError, UnreachableError
from cli_client.session import GameSession
from wargame.v1 import game_pb2, matchmaker_pb2

RETRY_SECONDS = 30.0
RETRY_PAUSE = 0.5
MAX_CONFLICTS = 3
_UNAVAILABLE = frozenset({"ENGINE_UNAVAILABLE", "STORE_UNAVAILABLE"})


def position(state: game_pb2.GameState) -> bytes:
    """The state without the draw offer and the count of actions: what a decision rests on.

    (Offering or answering a draw counts as an action in `ply` but moves nothing; the
    position text writes both, so it is left out, with the engine's tag of it, and the view
    compared.)
    """
    copy = game_pb2.GameState()
    copy.CopyFrom(state)
    copy.ClearField("draw_offer")
    copy.ClearField("ply")
    copy.ClearField("position")
    copy.ClearField("position_tag")
    return copy.SerializeToString(deterministic=True)


def retryable(error: ClientError) -> bool:
    """Whether sending the same submission again may succeed (nothing was decided)."""
    return isinstance(error, UnreachableError) or error.reason in _UNAVAILABLE


class Submitter:
    """Submits one player's actions in one game, with the retry policy above."""

    def __init__(
        self,
        connection: Connection,
        session: GameSession,
        *,
        catch_up: Callable[[], None] | None = None,
        warn: Callable[[str], None] = lambda _: None,
        retry_seconds: float = RETRY_SECONDS,
        pause: float = RETRY_PAUSE,
    ) -> None:
        self.connection = connection
        self.session = session
        self.catch_up = catch_up or self.fetch
        self.warn = warn
        self.retry_seconds = retry_seconds
        self.pause = pause

    def fetch(self) -> None:
        """Bring the session to the matchmaker's version (the default way to catch up)."""
        self.session.update(self.connection.get_game(self.session.game_id))

    def submit(self, actions: list[game_pb2.Action]) -> matchmaker_pb2.SubmitActionsResponse:
        """Submit `actions`; the matchmaker's reply, or the ClientError to show."""
        key = uuid.uuid4().hex
        deadline = time.monotonic() + self.retry_seconds
        warned = False
        conflicts = 0
        session = self.session
        while True:
            seen = position(session.state)
            try:
                reply: matchmaker_pb2.SubmitActionsResponse = self.connection.submit(
                    session.game_id, session.version, key, actions
                )
                return reply
            except ClientError as error:
                if error.reason == "VERSION_CONFLICT":
                    self.catch_up()
                    conflicts += 1
                    if (
                        conflicts <= MAX_CONFLICTS
                        and session.my_turn
                        and position(session.state) == seen
                    ):
                        key = uuid.uuid4().hex
                        continue
                    raise
                if not retryable(error) or time.monotonic() > deadline:
                    raise
                if not warned:
                    self.warn(f"{error.message}; retrying…")
                    warned = True
                time.sleep(self.pause)

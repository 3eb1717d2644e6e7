"""The matchmaker restarts under a playing client: it says so, reconnects, and resumes.

The opponent is a second player talking gRPC directly to the matchmaker (a real client,
not a stand-in); the `wargame` process is in a pty. The matchmaker process is killed and
started again on the same port with the same Redis, first while the client waits for the
opponent (the watch stream resumes from the last version it saw), then while the client
sends a move (the submission is retried with the same idempotency key).
"""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest

from tests.system.cli_support import Cli, Stack, game_id_of, run
from wargame.v1 import game_pb2, matchmaker_pb2, matchmaker_pb2_grpc

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-reconnect")]


class Opponent:
    """A registered player using the Matchmaker API directly."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.channel = grpc.insecure_channel(address)
        self.stub = matchmaker_pb2_grpc.MatchmakerStub(self.channel)
        reply = self.stub.RegisterPlayer(
            matchmaker_pb2.RegisterPlayerRequest(display_name="remote"), timeout=10
        )
        self.metadata = (("authorization", f"Bearer {reply.token}"),)

    def join(self, code: str) -> matchmaker_pb2.GameView:
        request = matchmaker_pb2.JoinGameRequest(invite_code=code)
        return self.stub.JoinGame(request, metadata=self.metadata, timeout=10).game

    def play(self, game_id: str, text: str) -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                view = self.stub.GetGame(
                    matchmaker_pb2.GetGameRequest(game_id=game_id),
                    metadata=self.metadata,
                    timeout=5,
                ).game
                action = game_pb2.Action(side=view.your_side, notation=text)
                request = matchmaker_pb2.SubmitActionsRequest(
                    game_id=game_id,
                    expected_version=view.version,
                    idempotency_key=f"{game_id}-{text}",
                    actions=[action],
                )
                self.stub.SubmitActions(request, metadata=self.metadata, timeout=10)
                return
            except grpc.RpcError as error:  # the restarted matchmaker may still be coming up
                if error.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def close(self) -> None:
        self.channel.close()


def test_the_client_reconnects_after_the_matchmaker_restarts(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = run(clients, ["play", "war", "--invite", "--side", "south"], tmp_path, stack)
    cli.expect(r"Invite code: (\S+) ")
    code = cli.child.match.group(1)
    game_id = game_id_of(cli)
    opponent = Opponent(stack.address)
    try:
        opponent.join(code)
        cli.expect(r"South > ")
        cli.send("e3-e4")
        cli.expect_text("You: e3-e4")
        cli.expect(r"waiting for North \(remote\)")

        # 1. While the client waits for the opponent.
        assert stack.matchmaker is not None
        stack.matchmaker.kill()
        cli.expect(r"lost connection to the matchmaker \([^)]*\); reconnecting", timeout=20)
        stack.start_matchmaker()
        cli.expect_text("reconnected to the matchmaker; catching up with the game", timeout=30)
        opponent.play(game_id, "e8-e7")
        cli.expect_text("North: e8-e7", timeout=20)
        cli.expect(r"South > ")

        # 2. While the client sends a move.
        stack.matchmaker.kill()
        cli.expect(r"lost connection to the matchmaker", timeout=20)
        cli.send("c3-c4")
        cli.expect(
            r"cannot reach the matchmaker at 127\.0\.0\.1:\d+ - start it with `make run`; retrying",
            timeout=20,
        )
        stack.start_matchmaker()
        cli.expect_text("You: c3-c4", timeout=30)
        cli.expect(r"waiting for North \(remote\)")
        opponent.play(game_id, "g8-g7")
        cli.expect_text("North: g8-g7", timeout=20)
        cli.send("quit")
        cli.expect_text(f"you left game {game_id}; it goes on")
        assert cli.wait() == 0
    finally:
        opponent.close()

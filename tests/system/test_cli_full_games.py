"""A whole game of each kind against the bot at level 1, from the first move to the last.

A real `wargame` in a pty plays from the standard start; a scripted player types, each
time the client waits for it, the action the engine suggests for its side (what `hint`
offers), and the bot answers through the matchmaker. Nothing assumes who moves first or
how fast the bot answers: the script waits for the client's prompt and for the client's
own account of each action. The game ends however the rules end it; the client shows the
result and offers to play again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.system.cli_support import Cli, Player, Stack, game_id_of, play_out, run
from wargame.v1 import matchmaker_pb2

pytestmark = [pytest.mark.system, pytest.mark.slow, pytest.mark.xdist_group("cli-full-games")]

# Each game with its default options, but Napoleonic Chess, whose default ends only with
# the Guards: its own turn limit (adjudicated by material) bounds it, as a ranked game is.
GAMES = {
    "war": (["--side", "south"], r"^South >$"),
    "battle": (["--side", "attacker"], r"^Attacker >$"),
    "napoleonic": (
        ["--side", "red", "-o", "turn_limit=40", "-o", "adjudicate_by_material=true"],
        r"^Red - [a-z ()]+ >$",
    ),
}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("game", list(GAMES))
def test_a_whole_game_against_the_bot_at_level_1(
    stack: Stack, clients: list[Cli], tmp_path: Path, game: str
) -> None:
    options, prompt = GAMES[game]
    args = ["play", game, "--level", "1", "--plain", *options]
    cli = run(clients, args, tmp_path, stack)
    cli.expect(r"against the bot at level 1 of 5")
    game_id = game_id_of(cli)
    player = Player(stack, tmp_path)
    try:
        view = play_out(cli, player, game_id, prompt)
    finally:
        player.close()
    assert view.status == matchmaker_pb2.GAME_STATUS_FINISHED
    bot = next(seat for seat in view.seats if seat.kind == matchmaker_pb2.SEAT_KIND_BOT)
    assert bot.bot_level == 1
    # (play_out read the screen as it came: what the game's end showed is on it.)
    cli.wait_screen(r"Game over: (you win|you lose|draw)")
    cli.wait_screen(r"Play again: `rematch`")
    cli.wait_screen(r"rematch or quit >\s*$")
    cli.quit()

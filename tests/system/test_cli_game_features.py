"""What a terminal-chess player reaches for, typed into a real `wargame` in a pty against a
real engine, matchmaker and Redis: `abort` before the second turns (and refused after),
`undo` against the bot, and the chat (`say`, `mute`) between players that a spectator reads,
in each game (the chat of the Game of Battle and Napoleonic Chess in `make test-slow`), read
on screens of 120x45 and 80x24, in colour and NO_COLOR."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import seeds
from tests.system.cli_support import Cli, Launch, Player, Stack, echoed, game_id_of, prompt_row, run
from wargame.v1 import game_pb2, matchmaker_pb2

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-game-features")]


def _type_a_move(cli: Cli, player: Player, game_id: str) -> None:
    """Wait for the player's turn, then type the engine's suggestion and see it played."""
    cli.wait_screen(
        lambda _: (
            (view := player.game(game_id)).your_side in view.state.to_act
            and "South >" in prompt_row(cli)
        )
    )
    echo = f"You: {player.suggest(player.game(game_id))}"
    before = cli.screen().count(echo)
    cli.send(echo.removeprefix("You: "))
    echoed(cli, echo, before)


@contextmanager
def _against_the_bot(
    launch: Launch, stack: Stack, tmp_path: Path, moves: int = 0
) -> Iterator[tuple[Cli, Player, str]]:
    """`wargame play war --vs bot` as South, the player also seen through a connection of
    its own, after South's first `moves` moves typed; the client quits cleanly after."""
    cli = launch(["play", "war", "--vs", "bot", "--side", "south"])
    cli.expect(r"South > ")
    player = Player(stack, tmp_path)
    try:
        game_id = game_id_of(cli)
        for _ in range(moves):
            _type_a_move(cli, player, game_id)
        yield cli, player, game_id
    finally:
        player.close()
    cli.quit()


def test_abort_ends_a_bot_game_before_the_second_turn_with_no_result(
    launch: Launch, stack: Stack, tmp_path: Path
) -> None:
    with _against_the_bot(launch, stack, tmp_path, moves=1) as (cli, player, game_id):
        cli.send("abort")
        cli.expect_text("Game over: aborted")
        cli.expect_text("no result")
        view = player.game(game_id)
        assert view.status == matchmaker_pb2.GAME_STATUS_FINISHED
        assert view.outcome.reason == game_pb2.OUTCOME_REASON_ABORTED
        assert "draw" not in cli.screen().split("Game over:")[-1].splitlines()[0]


def test_abort_after_the_second_turn_is_refused_with_the_reason(
    launch: Launch, stack: Stack, tmp_path: Path
) -> None:
    with _against_the_bot(launch, stack, tmp_path, moves=2) as (cli, player, game_id):
        cli.send("abort")
        cli.expect_text("before any side's second turn")
        assert player.game(game_id).status == matchmaker_pb2.GAME_STATUS_RUNNING


def test_undo_takes_back_the_players_move_and_the_bots_answer(
    launch: Launch, stack: Stack, tmp_path: Path
) -> None:
    with _against_the_bot(launch, stack, tmp_path) as (cli, player, game_id):
        cli.send("undo")
        cli.expect_text("you have no action to take back yet")
        _type_a_move(cli, player, game_id)
        _type_a_move(cli, player, game_id)
        cli.wait_screen(lambda _: len(player.game(game_id).moves) == 4)
        four = player.game(game_id)
        answer = f"North: {four.moves[3]}"  # the client holds the bot's answer
        cli.wait_screen(lambda c: answer in c.screen() and "South >" in prompt_row(c))
        cli.send("takeback")  # the same as `undo`
        cli.expect_text("You take back: ")
        view = player.game(game_id)
        assert list(view.moves) == list(four.moves)[:2]
        cli.wait_screen(lambda c: "South >" in prompt_row(c))
        line = next(row for row in reversed(cli.rows()) if "You take back: " in row)
        assert line.count(",") == 1  # the player's move and the bot's answer


# Each game with the player's side as shown, its options, and how many of its turns it
# plays before abort is refused (a side has begun its second turn): in the Game of Battle
# the bot opens, so its answer to the player's first move is its second turn. Napoleonic
# Chess with Marching Orders (rules 10.2): a deployment placed openly, a placement a turn.
GAMES: dict[str, tuple[str, list[str], int]] = {
    "war": ("South", [], 2),
    "battle": ("Defender", [], 1),
    "napoleonic": ("Red", ["-o", "deployment=marching_orders"], 2),
}


def _on_screen(cli: Cli, text: str) -> None:
    """Wait until the screen (not only the output) shows `text`."""
    cli.wait_screen(lambda c: text in " ".join(c.text().split()))


def _at_prompt(cli: Cli, side: str) -> bool:
    """Whether the cursor is on the input line of `side` (a screen just made smaller may
    still have it below its last row)."""
    rows = cli.rows()
    return cli.view.cursor.y < len(rows) and prompt_row(cli).startswith(side)


def _act(cli: Cli, player: Player, game_id: str, side: str) -> None:
    """Wait for the player's turn (by the matchmaker, and by the client: its log shows the
    last action played, its panel marks the player to act and its prompt is on the input
    line), type the engine's suggestion and wait for the bot's answer: the player's turn
    again. (The client refuses an action typed before it has shown the bot's answer: "not
    your turn". The panel and the prompt alone may still be those of the turn before, drawn
    before the player's action was sent.)"""

    def mine(c: Cli) -> bool:
        now = player.game(game_id)
        shown = not now.moves or f": {now.moves[-1]}" in c.text()
        marked = any("(you)" in row and "◀" in row for row in c.rows())
        return now.your_side in now.state.to_act and shown and marked and _at_prompt(c, side)

    cli.wait_screen(mine)
    played = len(player.game(game_id).moves)
    cli.send(player.suggest(player.game(game_id)))
    cli.wait_screen(lambda c: len(player.game(game_id).moves) > played + 1 and mine(c))


# Each set is a game against the bot: `make test` plays three of the six a day (each game
# once, in colour or not by turns), `make test-slow` the other three.
@pytest.mark.parametrize(
    ("game", "mode"),
    seeds.by_turns(
        [
            pytest.param(game, mode, id=f"{game}-{mode}")
            for game, modes in zip(
                GAMES,
                (("colour", "NO_COLOR"), ("NO_COLOR", "colour"), ("colour", "NO_COLOR")),
                strict=True,
            )
            for mode in modes
        ],
        every=2,
    ),
)
def test_undo_and_abort_read_on_the_screen_in_every_game(
    launch: Launch, stack: Stack, tmp_path: Path, game: str, mode: str
) -> None:
    # Against the bot: nothing to take back yet; once a side has begun its second turn
    # abort is refused; `undo` takes back the player's last turn and the bot's answer, and
    # abort then ends the game with no result. Read at 120x45, then at 80x24 after a live
    # resize.
    side, options, turns = GAMES[game]
    env = {"NO_COLOR": "1"} if mode == "NO_COLOR" else {}
    args = ["play", game, "--vs", "bot", "--side", side.lower(), "--level", "1", *options]
    cli = launch(args, size=(45, 120), env=env, ascii_only=False)
    cli.wait_screen(lambda c: _at_prompt(c, side))
    game_id = game_id_of(cli)
    player = Player(stack, tmp_path)
    try:
        cli.send("undo")
        _on_screen(cli, "you have no action to take back yet")
        before_last: list[str] = []
        for _ in range(turns):
            before_last = list(player.game(game_id).moves)
            _act(cli, player, game_id, side)
        cli.send("abort")
        _on_screen(cli, "before any side's second turn")
        assert player.game(game_id).status == matchmaker_pb2.GAME_STATUS_RUNNING
        cli.resize(24, 80)
        cli.wait_screen(lambda c: _at_prompt(c, side))
        cli.send("undo")
        _on_screen(cli, "You take back: ")
        cli.wait_screen(lambda _: len(player.game(game_id).moves) == len(before_last))
        assert list(player.game(game_id).moves) == before_last
        cli.send("abort")
        _on_screen(cli, "Game over: aborted")
        _on_screen(cli, "no result")
        view = player.game(game_id)
        assert view.status == matchmaker_pb2.GAME_STATUS_FINISHED
        assert view.outcome.reason == game_pb2.OUTCOME_REASON_ABORTED
        assert all(len(row) <= 80 for row in cli.rows())
        colours = {char.fg for row in cli.view.buffer.values() for char in row.values()}
        assert (colours == {"default"}) == (mode == "NO_COLOR"), colours
    finally:
        player.close()
    cli.quit()


# Each game's two sides as shown: the one that invites (and acts first) and the other.
CHAT_SIDES = {"war": ("South", "North"), "battle": ("Attacker", "Defender"),
              "napoleonic": ("Red", "Black")}  # fmt: skip


@pytest.mark.parametrize(
    "game", ["war", pytest.param("battle", marks=pytest.mark.slow),
             pytest.param("napoleonic", marks=pytest.mark.slow)],
)  # fmt: skip
def test_players_chat_a_spectator_reads_it_safely_and_mute_hides_it(
    stack: Stack, clients: list[Cli], tmp_path: Path, game: str
) -> None:
    # The inviter at the default size in colour, the joiner at 80x24 in NO_COLOR, the
    # spectator at 120x45: each reads the chat on its screen.
    first, second = CHAT_SIDES[game]
    args = ["play", game, "--invite", "--side", first.lower(), "--name", "alice"]
    south = run(clients, args, tmp_path / "alice", stack)
    south.expect(r"Invite code: (\S+) ")
    code = south.child.match.group(1)
    game_id = game_id_of(south)
    north = run(
        clients, ["play", "--join", code, "--name", "bob"], tmp_path / "bob", stack,
        size=(24, 80), env={"NO_COLOR": "1"},
    )  # fmt: skip
    north.expect_text(f"Game {game_id}: you play {second}")
    watcher = run(clients, ["watch", game_id], tmp_path / "carol", stack, size=(45, 120))
    watcher.expect(r"watching")
    south.expect(rf"{first}[^>\n]*> ")
    south.send("say good luck, have fun")
    south.expect_text("[chat] You: good luck, have fun")
    north.expect_text(f"[chat] {first} (alice): good luck, have fun")
    watcher.expect_text(f"[chat] {first} (alice): good luck, have fun")
    for client in (north, watcher):
        client.wait_screen(lambda c: f"[chat] {first} (alice): good luck" in c.text())
    alice = Player(stack, tmp_path / "alice")  # a line with escapes, as any client may send
    try:
        alice.connection.send_chat(game_id, "clear\x1b[2J\x1b]0;pwned\x07 me")
    finally:
        alice.close()
    north.expect_text(f"[chat] {first} (alice): clear[2J]0;pwned me")
    watcher.expect_text(f"[chat] {first} (alice): clear[2J]0;pwned me")
    north.send("mute")
    north.expect_text("chat muted")
    south.send("say can you hear me")
    watcher.expect_text(f"[chat] {first} (alice): can you hear me")
    north.send("unmute")
    north.expect_text("chat shown again")
    assert "can you hear me" not in north.screen()
    south.send("say now?")
    north.expect_text(f"[chat] {first} (alice): now?")
    watcher.send("say hello")
    watcher.expect_text("you are watching this game")
    south.send("resign!")
    south.expect_text("Game over")
    south.send("say gg")  # after the game too
    south.expect_text("[chat] You: gg")
    north.expect_text(f"[chat] {first} (alice): gg")
    for client in (south, north, watcher):
        client.quit()

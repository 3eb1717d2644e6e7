"""The command line: every command has help, flags and WARGAME_* variables give addresses."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_client.arguments import build_parser
from cli_client.lobby import is_game_id
from cli_client.main import main
from cli_client.subcommands import _game_request
from wargame.v1 import matchmaker_pb2

COMMANDS = ("games", "rules", "play", "watch", "resume", "record", "replay", "leaderboard")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: wargame {command}")
    assert "--ascii" in out
    if command not in {"replay", "games", "rules"}:
        assert "WARGAME_MATCHMAKER" in out
    if command in {"games", "rules", "play", "replay"}:
        assert "WARGAME_ENGINE" in out


def test_addresses_from_flags_then_environment_then_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("WARGAME_ENGINE")  # set by tests/conftest.py: no test uses a default
    monkeypatch.delenv("WARGAME_MATCHMAKER")
    defaults = build_parser().parse_args(["play", "war"])
    assert (defaults.engine, defaults.matchmaker) == ("127.0.0.1:50051", "127.0.0.1:50052")
    monkeypatch.setenv("WARGAME_ENGINE", "10.0.0.1:1")
    monkeypatch.setenv("WARGAME_MATCHMAKER", "10.0.0.2:2")
    from_env = build_parser().parse_args(["play", "war"])
    assert (from_env.engine, from_env.matchmaker) == ("10.0.0.1:1", "10.0.0.2:2")
    flags = build_parser().parse_args(["play", "war", "--engine", "h:3", "--matchmaker", "h:4"])
    assert (flags.engine, flags.matchmaker) == ("h:3", "h:4")


def test_play_options(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(
        ["play", "war", "--vs", "bot", "-o", "compulsion=huff", "--option", "en_passant=none",
         "--preset", "casual", "--side", "north", "--clock", "10+5", "--setup", "X", "--rated"]
    )  # fmt: skip
    assert args.option == ["compulsion=huff", "en_passant=none"]
    assert (args.vs, args.preset, args.side, args.clock, args.setup, args.rated) == (
        "bot", "casual", "north", "10+5", "X", True,
    )  # fmt: skip
    with pytest.raises(SystemExit) as done:
        main(["play", "war", "--queue", "--invite"])
    assert done.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["play", "war", "--rated"], "games against the bot are never rated: leave out --rated"),
        (["play", "war", "--vs", "bot", "--rated"], "games against the bot are never rated"),
        (["play", "war", "--invite", "--level", "2"], "--level is for games against the bot"),
        (["play", "war", "--queue", "--bot-time", "1"], "--bot-time is for games against the bot"),
        (["play", "war", "--level", "6"], "argument --level: invalid choice: 6"),
        (["play", "napoleonic", "--bot-seats", "black"], "--bot-seats is for games with people"),
        (
            ["play", "napoleonic", "--invite", "--bot-seats", "black", "--rated"],
            "games with a bot seat are never rated",
        ),
        (
            ["play", "napoleonic", "--invite", "--bot-seats", "black:9"],
            "--bot-seats: bot seat 'black:9' is not SIDE or SIDE:LEVEL (a level 1 to 5)",
        ),
        (
            ["play", "napoleonic", "--invite", "--bot-seats", "black:,green"],
            "--bot-seats: bot seat 'black:' is not SIDE or SIDE:LEVEL",
        ),
        (
            ["play", "napoleonic", "--invite", "--bot-seats", ":3"],
            "--bot-seats: bot seat ':3' is not SIDE or SIDE:LEVEL",
        ),
        (
            ["play", "napoleonic", "--scenario", "three_way", "-o", "scenario=standard"],
            "--scenario and --option scenario=... disagree",
        ),
    ],
)
def test_what_a_game_against_the_bot_cannot_be_is_refused_before_calling(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str], nowhere: str
) -> None:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--matchmaker", nowhere, "--engine", nowhere])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "cannot reach" not in err


def test_levels_for_the_bot(nowhere: str) -> None:
    args = build_parser().parse_args(["play", "war", "--level", "1"])
    assert args.level == 1 and not args.rated
    assert build_parser().parse_args(["play", "war"]).level == 0  # chosen below


def test_one_default_level_the_last_asked_for_else_the_easiest(tmp_path: Path) -> None:
    from cli_client.identity import Store
    from cli_client.lobby import GameRequest
    from cli_client.subcommands import _bot_level

    store = Store(tmp_path)
    assert _bot_level(GameRequest("war"), 0, store).level == 1  # a first game: the easiest
    assert _bot_level(GameRequest("war"), 4, store).level == 4
    again = Store(tmp_path)  # the next run of the client reads it from the config file
    assert _bot_level(GameRequest("battle"), 0, again).level == 4


def test_the_hint_s_level_from_the_flag_or_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build_parser().parse_args(["play", "war"]).hint_level == 0  # the coach picks
    assert build_parser().parse_args(["resume", "--hint-level", "3"]).hint_level == 3
    monkeypatch.setenv("WARGAME_HINT_LEVEL", "2")
    assert build_parser().parse_args(["play", "war"]).hint_level == 2
    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", "war", "--hint-level", "6"])
    assert "a level is 1 to 5, not 6" in capsys.readouterr().err
    monkeypatch.setenv("WARGAME_HINT_LEVEL", "9")
    with pytest.raises(SystemExit):
        build_parser()
    assert (
        "$WARGAME_HINT_LEVEL='9' is not a valid value for --hint-level" in capsys.readouterr().err
    )


def test_a_battle_of_many_players_by_scenario_and_seat() -> None:
    args = build_parser().parse_args(
        ["play", "napoleonic", "--scenario", "grand_battle_2v2", "--seat", "blue", "--invite",
         "--bot-seats", "black, green", "--level", "2"]
    )  # fmt: skip
    request = _game_request(args, build_parser())
    assert request.options == {"scenario": "grand_battle_2v2"} and request.side == "blue"
    create = request.create(matchmaker_pb2.SEAT_KIND_HUMAN, matchmaker_pb2.VISIBILITY_PRIVATE)
    assert list(create.bot_sides) == ["black", "green"] and create.bot_level == 2
    assert is_game_id("gb7ggkg63mzecmn") and not is_game_id("7K3M-9QX2-HF4P-T8WZ")


def test_a_level_per_bot_seat() -> None:
    """`--bot-seats black:3,green:5,red`: black and green at their own levels, red at
    --level (the game's level)."""
    args = build_parser().parse_args(
        ["play", "napoleonic", "--scenario", "grand_battle_2v2", "--seat", "blue", "--invite",
         "--bot-seats", "black:3, Green:5,red", "--level", "2"]
    )  # fmt: skip
    request = _game_request(args, build_parser())
    create = request.create(matchmaker_pb2.SEAT_KIND_HUMAN, matchmaker_pb2.VISIBILITY_PRIVATE)
    assert list(create.bot_sides) == ["black", "green", "red"] and create.bot_level == 2
    assert dict(create.bot_levels) == {"black": 3, "green": 5}

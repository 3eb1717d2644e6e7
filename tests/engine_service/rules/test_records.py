"""Game records (engine_service/rules/record.py): PGN-like tags, then one numbered action per
line with its acting side; `#` lines and blank lines are ignored. Written, parsed, replayed
and refused, with the real games.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from engine_service.rules import rulesets
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game
from engine_service.rules.record import (
    MAX_RECORD_ACTIONS,
    Record,
    parse_record,
    record_of,
    replay,
    replay_steps,
    write_record,
)

RULESETS = rulesets(bytes(range(32)))
WAR = RULESETS["war"]
EMPTY_WAR = "k9/10/10/10/10/10/10/10/10/K9 S -:- citadels=a1,a10"


def _refusal(text: str) -> RuleError:
    with pytest.raises(RuleError) as refusal:
        parse_record(text)
    assert refusal.value.reason == Reason.INVALID_RECORD
    return refusal.value


# --- writing ----------------------------------------------------------------------------------


def test_a_record_is_its_tags_a_blank_line_and_one_numbered_action_a_line() -> None:
    text = write_record(
        "war",
        {"compulsion": "legality", "passing_allowed": "true"},
        "k9/10/10/10/10/10/10/10/10/K9 S -:-",
        [("south", "Kf1-f2"), ("north", "resign")],
        result="north resigns; south wins",
        tags={"White": "Ann", "Date": "2026-01-02"},
    )
    assert text == (
        '[Game "war"]\n'
        '[White "Ann"]\n'
        '[Date "2026-01-02"]\n'
        '[Option "compulsion=legality"]\n'
        '[Option "passing_allowed=true"]\n'
        '[Setup "k9/10/10/10/10/10/10/10/10/K9 S -:-"]\n'
        '[Result "north resigns; south wins"]\n'
        "\n"
        "1. south Kf1-f2\n"
        "2. north resign\n"
    )


def test_quotes_and_backslashes_in_tag_values_are_escaped_and_read_back() -> None:
    setup = 'board 8x8; options: initial_position="a \\"b\\""'
    text = write_record("napoleonic", {"note": 'x"y\\z'}, setup, [], tags={"Event": 'the "cup"'})
    assert '[Setup "board 8x8; options: initial_position=\\"a \\\\\\"b\\\\\\"\\""]' in text
    assert '[Option "note=x\\"y\\\\z"]' in text
    assert '[Event "the \\"cup\\""]' in text
    record = parse_record(text)
    assert record.setup == setup
    assert record.options == {"note": 'x"y\\z'}
    assert record.tags == {"Event": 'the "cup"'}


# --- parsing ----------------------------------------------------------------------------------


def test_a_record_is_parsed_into_its_game_options_setup_result_tags_and_actions() -> None:
    text = (
        "# a comment before the tags\n"
        '[Game "war"]\n'
        '[Site "here"]\n'
        '[Option " compulsion = huff "]\n'
        '[Option "initial_position=a=b"]\n'
        '[Setup "S"]\n'
        '[Result "drawn by agreement"]\n'
        "\n"
        "1. south  Kf1-f2  \n"
        "# a comment between the actions\n"
        "\n"
        "2.\tnorth offer draw\n"
    )
    record = parse_record(text)
    assert record == Record(
        game="war",
        options={"compulsion": "huff", "initial_position": "a=b"},
        setup="S",
        result="drawn by agreement",
        tags={"Site": "here"},
        actions=[("south", "Kf1-f2"), ("north", "offer draw")],
    )


def test_a_record_of_tags_alone_has_no_setup_result_or_actions() -> None:
    record = parse_record('[Game "battle"]\n')
    assert record == Record(game="battle", options={}, setup=None, result="", tags={}, actions=[])


def test_tag_names_are_told_apart_by_case() -> None:
    record = parse_record('[Game "war"]\n[setup "x"]\n[result "y"]\n[option "a=b"]\n')
    assert record.setup is None and record.result == "" and record.options == {}
    assert record.tags == {"setup": "x", "result": "y", "option": "a=b"}


def test_a_record_without_a_game_tag_is_refused() -> None:
    refusal = _refusal('[Setup "x"]\n1. south a1-a2\n')
    assert refusal.message == 'the record has no [Game "..."] tag'


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("south a1-a2", "'south a1-a2'"),
        ("1. south", "'1. south'"),
        ("[Game war]", "'[Game war]'"),
        ("1234567890. south a1-a2", "'1234567890. south a1-a2'"),
    ],
)
def test_a_line_neither_tag_nor_action_is_refused_naming_it(line: str, shown: str) -> None:
    refusal = _refusal(f'[Game "war"]\n\n{line}\n')
    assert refusal.message == (
        f"line 3: expected a tag [Key \"value\"] or '<n>. <side> <action>', got {shown}"
    )


def test_actions_are_numbered_from_one_without_a_gap() -> None:
    refusal = _refusal('[Game "war"]\n1. south a1-a2\n# skipped\n3. north a10-a9\n')
    assert refusal.message == "line 4: action number 3, expected 2"
    refusal = _refusal('[Game "war"]\n0. south a1-a2\n')
    assert refusal.message == "line 2: action number 0, expected 1"


def test_a_record_holds_at_most_its_limit_of_actions() -> None:
    sides = itertools.cycle(("south", "north"))
    lines = [f"{n}. {next(sides)} pass" for n in range(1, MAX_RECORD_ACTIONS + 1)]
    full = parse_record('[Game "war"]\n' + "\n".join(lines) + "\n")
    assert len(full.actions) == MAX_RECORD_ACTIONS
    over = '[Game "war"]\n' + "\n".join(lines) + f"\n{MAX_RECORD_ACTIONS + 1}. south pass\n"
    assert _refusal(over).message == f"a record holds at most {MAX_RECORD_ACTIONS} actions"


# --- replaying --------------------------------------------------------------------------------


def _war_record(*actions: tuple[str, str], setup: str | None = EMPTY_WAR) -> Record:
    return Record(game="war", setup=setup, actions=list(actions))


def test_a_replay_yields_the_initial_game_then_the_game_after_each_action() -> None:
    record = _war_record(("south", "Ka1-b2"), ("north", "Ka10-b9"))
    record.options = {"passing_allowed": "true"}
    final, history = replay(WAR, record)
    initial: Game[Any] = Game(
        WAR, WAR.new_game(WAR.resolve_options({"passing_allowed": "true"}), EMPTY_WAR)
    )
    assert history[0] == initial
    after_one, _ = initial.apply("south", initial.parse("Ka1-b2", "south"))
    assert history[1] == after_one
    after_two, _ = after_one.apply("north", after_one.parse("Ka10-b9", "north"))
    assert history == [initial, after_one, after_two] and final == after_two
    assert WAR.options_of(final.state)["passing_allowed"] is True


def test_a_record_without_a_setup_starts_from_the_initial_position() -> None:
    final, history = replay(WAR, _war_record(setup=None))
    assert history == [final]
    assert final == Game(WAR, WAR.new_game(WAR.resolve_options({})))


def test_a_side_not_to_move_may_resign_in_a_record() -> None:
    # South moves first; North's resignation is North's, not the side to move's.
    final, _ = replay(WAR, _war_record(("north", "resign"), setup=None))
    assert final.outcome is not None
    assert final.outcome.message == "north resigns; south wins"


def test_a_record_of_another_game_is_refused() -> None:
    with pytest.raises(RuleError) as refusal:
        next(replay_steps(WAR, Record(game="battle")))
    assert refusal.value.reason == Reason.INVALID_RECORD
    assert refusal.value.message == "record is for 'battle', not 'war'"


def test_an_illegal_action_is_refused_naming_its_number_side_and_text() -> None:
    record = _war_record(("south", "Ka1-b2"), ("north", "Ka10-a8"))
    with pytest.raises(RuleError) as refusal:
        replay(WAR, record)
    initial: Game[Any] = Game(WAR, WAR.new_game(WAR.resolve_options({}), EMPTY_WAR))
    after_one, _ = initial.apply("south", initial.parse("Ka1-b2", "south"))
    with pytest.raises(RuleError) as direct:
        after_one.apply("north", after_one.parse("Ka10-a8", "north"))
    assert refusal.value.reason == direct.value.reason
    assert refusal.value.message == f"action 2 (north Ka10-a8): {direct.value.message}"
    assert refusal.value.index == 1


def test_a_replay_stopped_early_never_reaches_a_later_action() -> None:
    record = _war_record(("south", "Ka1-b2"), ("north", "nonsense"))
    steps = replay_steps(WAR, record)
    first, second = next(steps), next(steps)
    assert first.ply == 0 and second.ply == 1


# --- the record of a played game --------------------------------------------------------------


def test_the_record_of_a_played_game_has_every_option_its_setup_actions_and_result() -> None:
    initial: Game[Any] = Game(WAR, WAR.new_game(WAR.resolve_options({}), EMPTY_WAR))
    king_step = initial.parse("Ka1-b2", "south")
    after, _ = initial.apply("south", king_step)
    resign = after.parse("resign", "north")
    text = record_of(initial, [("south", king_step), ("north", resign)], tags={"Round": "3"})
    options = "".join(
        f'[Option "{name}={value}"]\n'
        for name, value in WAR.options_of(initial.state).as_text().items()
    )
    assert text == (
        '[Game "war"]\n[Round "3"]\n'
        + options
        + f'[Setup "{WAR.setup_text(initial.state)}"]\n'
        + '[Result "north resigns; south wins"]\n'
        + "\n1. south Ka1-b2\n2. north resign\n"
    )
    final, _ = replay(WAR, parse_record(text))
    assert final.outcome is not None and final.outcome.winner == "south"


def test_the_record_of_an_unfinished_game_has_no_result() -> None:
    initial: Game[Any] = Game(WAR, WAR.new_game(WAR.resolve_options({}), EMPTY_WAR))
    text = record_of(initial, [("south", initial.parse("Ka1-b2", "south"))])
    assert "[Result" not in text and text.endswith("\n\n1. south Ka1-b2\n")

"""The position text (docs/positions.md): the repetition history it carries (ruling 19), and
what it refuses, naming the fault.

The history since the last capture is written as the moves that lead back through it
(`hist=`), and as raw keys where the writer gave keys (`histkeys=`); a text reads back to
an equal state and is written again the same.
"""

from __future__ import annotations

import pytest

from engine_service.rules.battle import BattleState
from engine_service.rules.battle.start import initial_board
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.position import keys_text
from tests.engine_service.rules.battle.helpers import RULES, position

PLATE_1 = (
    "W129A126A131C125C130I113I127I128I132I133L85L87L101L103t19a9a14c10c15i7i8i11i12i13l39l41l43l45"
)
# Plate 1 after 113-112 7-16 112-113 16-7 85-86: five moves without a capture.
AFTER_FIVE = PLATE_1.replace("L85", "L86") + " d quiet=5 hist=BUBVAPAGBvBwAGAPBwBv"


def _five_moves() -> BattleState:
    state = RULES.new_game(RULES.resolve_options({}))
    for text in ("113-112", "7-16", "112-113", "16-7", "85-86"):
        state, _ = RULES.apply(state, RULES.parse_action(state, text))
    return state


def _refusal(text: str) -> str:
    """The fault named when `text` is refused (without the format help that follows it)."""
    with pytest.raises(RuleError) as error:
        position(text)
    assert error.value.reason is Reason.INVALID_SETUP
    assert error.value.field == "setup"
    message, _, help_text = error.value.message.partition("; set-up text is ")
    assert help_text.startswith("'<attacker|defender> to move; attacker: <pieces>")
    return message


def test_3_the_initial_board_is_plate_1() -> None:
    plate = RULES.new_game(RULES.resolve_options({}))
    assert initial_board() == plate.board
    assert RULES.setup_text(BattleState(initial_board(), 0, plate.options)) == PLATE_1 + " a"


def test_ruling_19_history_is_written_as_the_moves_played() -> None:
    played = _five_moves()
    assert len(played.history) == 6 and played.quiet == 5
    assert RULES.setup_text(played) == AFTER_FIVE
    read = position(AFTER_FIVE)
    assert read == played and read.history == played.history
    assert RULES.setup_text(read) == AFTER_FIVE
    # a state that keeps only the keys (as a client sends it) finds the same moves from them
    keys_only = BattleState(played.board, played.side, played.options, 5, played.history)
    assert keys_only.steps is None
    assert RULES.setup_text(keys_only) == AFTER_FIVE
    # and a move played after reading the text continues the written history
    after = RULES.apply(read, RULES.parse_action(read, "7-16"))[0]
    assert len(after.history) == 7 and " a quiet=6 hist=" in RULES.setup_text(after)
    assert position(RULES.setup_text(after)) == after


def test_ruling_19_history_given_as_keys_stays_keys() -> None:
    played = _five_moves()
    keys = keys_text(list(reversed(played.history[:-1])))
    text = f"{PLATE_1.replace('L85', 'L86')} d quiet=5 histkeys={keys}"
    read = position(text)
    assert read == played
    assert RULES.setup_text(read) == text


def test_states_differ_by_position_side_counter_history_and_options() -> None:
    played = _five_moves()
    start = RULES.new_game(RULES.resolve_options({}))
    assert played != start  # same options, another position
    assert position(PLATE_1 + " a") == start
    assert position(PLATE_1 + " d") != start
    assert position(PLATE_1 + " a quiet=1") != start
    assert position(PLATE_1 + " a", forced_reply="lose_figure") != start


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("L85", "after the pieces comes the side to move, a (attacker) or d (defender)"),
        (
            PLATE_1 + " a foo=1",
            "'foo=1' is not one of the words quiet=, hist=, histkeys= (each once)",
        ),
        (PLATE_1 + " a quiet=1=2", "quiet: '1=2' is not a whole number 0..2147483647"),
        (PLATE_1 + " a histkeys=AAAA", "histkeys: 3 bytes is not a whole number of 8-byte keys"),
        (
            PLATE_1 + " a hist=BUBVAPAGBvBwAGAPBwBv",
            "hist: step 1 takes back no move of the side that made it",
        ),
        (
            "attacker to move; defender to move; attacker: W129; defender: T19",
            "the side to move is given twice",
        ),
        (
            "attacker to move; quiet: 1; attacker: W129; quiet: 2; defender: T19",
            "quiet is given twice",
        ),
    ],
)
def test_position_text_faults_are_named(text: str, fault: str) -> None:
    assert _refusal(text) == fault


def test_a_text_is_checked_as_a_state_from_a_client_is() -> None:
    # it reads, but its history is longer than its moves since the last capture
    with pytest.raises(RuleError) as error:
        position(AFTER_FIVE.replace("quiet=5", "quiet=2"))
    assert error.value.reason is Reason.INVALID_SETUP and error.value.field == "setup"
    assert error.value.message == (
        "the position history holds 6 positions but only 2 moves were made since the last capture"
    )

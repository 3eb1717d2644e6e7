"""The start of a game (section 3): the initial state from the options and a setup string,
and a state's setup string (`new_game` and `setup_text` of the ruleset).

The setup string format itself is `setup`'s; the Citadels of a game are the King squares
of the options' initial position (section 9).
"""

from __future__ import annotations

from engine_service.memo import memo
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options
from engine_service.rules.position import PositionError
from engine_service.rules.war.consistency import check_state
from engine_service.rules.war.options import rules_of
from engine_service.rules.war.pieces import SIDE_IDS, SIDE_NAMES
from engine_service.rules.war.position import history_of, history_parts
from engine_service.rules.war.setup import (
    SetupError,
    derived_setup_text,
    format_setup,
    parse_setup,
)
from engine_service.rules.war.state import WarState, position_key


@memo(256)  # keyed by the options of a game
def options_citadels(options: Options) -> tuple[int, int]:
    """The Citadels of the options' initial position: its Kings' squares (section 9)."""
    return _citadels_of(derived_setup_text(options))


@memo(256)  # keyed by text a client may send (initial_position)
def _citadels_of(text: str) -> tuple[int, int]:
    setup = parse_setup(text)
    if setup.citadels is not None:
        return setup.citadels
    south, north = setup.king_cells()
    if south is None or north is None:  # the option's check refuses this
        raise RuleError(
            Reason.INVALID_SETUP,
            "the initial position needs one King per side (or citadels=...)",
            field="options.initial_position",
        )
    return south, north


def new_game(
    options: Options, text: str | None, field: str = "setup", *, checked: bool = True
) -> WarState:
    """The position a setup string describes, in a game with these options.

    `text` None means the options' own initial position. INVALID_SETUP names what is wrong,
    including every problem `check_state` finds (not asked when `checked` is False).
    """
    initial = text is None  # the options' own initial position: no Troop has moved (11)
    if text is None:
        text = derived_setup_text(options)
        given: str = options["initial_position"]
        if given:
            field = "options.initial_position"
            first = SIDE_IDS.index(options["first_player"])
            if parse_setup(given).side != first:
                raise RuleError(
                    Reason.INVALID_SETUP,
                    f"initial_position has {SIDE_NAMES[1 - first]} to move but first_player "
                    f"is {options['first_player']}; make them agree",
                    field=field,
                )
    try:
        setup = parse_setup(text, initial=initial)
        board = bytes(setup.board)
        key = position_key(board, setup.side, setup.reserves, setup.huffable)
        history = history_of(
            board, setup.side, key, setup.huffable, back=setup.back, older=setup.older
        )
    except (SetupError, PositionError) as error:
        raise RuleError(Reason.INVALID_SETUP, f"setup: {error}", field=field) from None
    citadels = setup.citadels or options_citadels(options)
    rules = rules_of(options, citadels)
    state = WarState(
        board,
        setup.side,
        setup.reserves,
        setup.ep,
        setup.huffable,
        setup.quiet,
        setup.move,
        history,
        rules,
    )
    problems = check_state(state, keyed=True) if checked else []  # `history` ends with `key`
    if problems:
        raise RuleError(Reason.INVALID_SETUP, "setup: " + "; ".join(problems), field=field)
    return state


def setup_text_of(state: WarState) -> str:
    """The setup string of a position (section 3.2 format plus the extensions it needs): its
    position text, every field of the state written (docs/positions.md)."""
    rules = state.rules
    citadels = None if rules.citadels == options_citadels(rules.options) else rules.citadels
    back, older = history_parts(state)
    return format_setup(
        state.board,
        state.side,
        state.reserves,
        citadels=citadels,
        ep=state.ep,
        huffable=state.huffable,
        quiet=state.quiet,
        move=state.move,
        back=back,
        older=older,
    )

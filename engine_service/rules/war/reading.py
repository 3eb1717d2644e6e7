"""Reading notation against a position: text to the one legal action it names."""

from __future__ import annotations

from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.war import cached
from engine_service.rules.war.actions import Action, split_action
from engine_service.rules.war.board import NAMES
from engine_service.rules.war.explain import explain
from engine_service.rules.war.notation import (
    Parsed,
    format_action_text,
    letter_matches,
    man_on,
    read_text,
)
from engine_service.rules.war.pieces import KIND_NAMES, LETTER_KINDS, SIDE_NAMES
from engine_service.rules.war.state import WarState


def _same_frame(parsed: Parsed, action: Action) -> bool:
    parts = split_action(action)
    return (
        parts.huff == parsed.huff
        and parts.place == parsed.place
        and not parts.passes
        and parts.origin == parsed.path[0]
    )


def parse_action(state: WarState, text: str, side: int) -> Action:
    """The action `text` names for `side`; legal-action matching when `side` is to move.

    For the side not to move the literal action is returned (whoever applies it then says
    it is not that side's turn).
    """
    parsed = read_text(text)
    literal = parsed.action()
    if side != state.side:
        return literal
    legal = list(cached.legal(state)[0])
    if parsed.path and parsed.letter is not None:
        board = state.board
        origin = parsed.path[0]
        if not letter_matches(board, side, origin, parsed.letter):
            raise RuleError(
                Reason.NOTATION_INVALID,
                f"{text!r}: the piece letter {parsed.letter} means a "
                f"{KIND_NAMES[LETTER_KINDS[parsed.letter]]}, but {NAMES[origin]} holds "
                f"{_holding(state, origin)}",
            )
    if literal in cached.legal(state)[1]:
        return literal
    if len(parsed.path) == 2:
        # A chain named by its first and last squares ("a3:e7").
        chains = [
            a
            for a in legal
            if _same_frame(parsed, a)
            and split_action(a).path[-1] == parsed.path[1]
            and len(split_action(a).path) > 1
        ]
        if len(chains) == 1:
            return chains[0]
        if len(chains) > 1:
            raise RuleError(
                Reason.NOTATION_AMBIGUOUS,
                f"{text!r} fits several jump chains; write every landing square: "
                + ", ".join(format_action_text(state, a) for a in chains),
            )
    if not legal:
        raise RuleError(Reason.GAME_OVER, f"{text!r}: the game is over; no action is legal")
    try:
        split_action(literal)
    except ValueError as error:
        raise RuleError(Reason.NOTATION_INVALID, f"{text!r}: {error}") from None
    problem = explain(state, literal)
    raise RuleError(problem.reason, f"{text!r}: {problem.message}", field=problem.field)


def _holding(state: WarState, cell: int) -> str:
    piece = state.board[cell]
    if not piece:
        return "nothing"
    owner = SIDE_NAMES[(piece - 1) >> 3]
    return f"{owner}'s {man_on(state.board, cell)}"

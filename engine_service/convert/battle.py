"""Game of Battle states and actions to and from `wargame.v1` messages.

The common `pieces` list carries every piece, the Citadel (kind "citadel") and the Wagon
(kind "wagon") included, on cells "1".."139"; `BattleState` carries the side to move,
the moves since the last capture and the position keys since then. A state from the wire
that is malformed (unknown square or kind, two pieces on a square, more pieces than an
army has, the Citadel or the Wagon on the wrong side, a history that does not end with
the position) is refused here with the field named; whether the position is consistent
with the rules is `BattleRuleset.check_state`'s to say. Piece tags ("exposed",
"commanded") are derived and ignored on input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine_service.convert.base import GameConverter, invalid_state
from engine_service.rules.battle.actions import Move, move_of
from engine_service.rules.battle.board import NAMES, SQUARES
from engine_service.rules.battle.pieces import (
    ARMY,
    ATTACKER,
    CITADEL,
    DEFENDER,
    KIND_NAMES,
    KIND_OF_ID,
    SIDE_IDS,
    WAGON,
    code,
)
from engine_service.rules.battle.state import BattleState, position_key
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options
from wargame.v1 import game_pb2

_INDEX = {name: i for i, name in enumerate(NAMES)}
SQUARE_HELP = f"squares are 1..{SQUARES} (the river cells are not squares)"


def _square(name: str, field: str) -> int:
    cell = _INDEX.get(name)
    if cell is None:
        raise invalid_state(f"{name!r} is not a square of the board: {SQUARE_HELP}", field)
    return cell


def _side(name: str, field: str) -> int:
    if name not in SIDE_IDS:
        raise invalid_state(f"side {name!r} is neither attacker nor defender", field)
    return SIDE_IDS.index(name)


def _board(pieces: Sequence[game_pb2.Piece]) -> bytes:
    board = bytearray(SQUARES)
    counts: Counter[tuple[int, int]] = Counter()
    for i, piece in enumerate(pieces):
        where = f"state.pieces[{i}]"
        kind = KIND_OF_ID.get(piece.kind)
        if kind is None:
            raise invalid_state(
                f"unknown piece kind {piece.kind!r}; kinds: {', '.join(KIND_OF_ID)}",
                f"{where}.kind",
            )
        side = _side(piece.side, f"{where}.side")
        cell = _square(piece.cell, f"{where}.cell")
        if board[cell]:
            raise invalid_state(f"two pieces on square {piece.cell}", f"{where}.cell")
        if kind == CITADEL and side != DEFENDER:
            raise invalid_state("the Citadel belongs to the defender", f"{where}.side")
        if kind == WAGON and side != ATTACKER:
            raise invalid_state("the Wagon belongs to the attacker", f"{where}.side")
        if piece.id:
            raise invalid_state("Game of Battle pieces have no unit ids", f"{where}.id")
        if piece.moved:
            raise invalid_state("Game of Battle pieces are never marked as moved", f"{where}.moved")
        counts[side, kind] += 1
        if counts[side, kind] > ARMY[side][kind]:
            raise invalid_state(
                f"the {SIDE_IDS[side]} has more than {ARMY[side][kind]} {KIND_NAMES[kind]} "
                f"(section 3)",
                f"{where}.kind",
            )
        board[cell] = code(side, kind)
    return bytes(board)


class BattleConverter(GameConverter[BattleState, Move]):
    """War-Chess, or the Game of Battle: `BattleState` and `BattleAction`."""

    game = "battle"

    def detail_to_proto(self, state: BattleState, out: game_pb2.GameState) -> None:
        """Fill `out.battle`: side to move, moves since the last capture, position keys."""
        detail = out.battle
        detail.side_to_move = SIDE_IDS[state.side]
        detail.no_capture_plies = state.quiet
        detail.position_history.extend(state.history)

    def state_from_proto(self, msg: game_pb2.GameState, options: Options) -> BattleState:
        """The core state of `msg.pieces` and `msg.battle`; `invalid_state` if malformed."""
        if msg.WhichOneof("detail") != "battle":
            raise invalid_state("a battle state needs its detail in `battle`", "state.battle")
        detail = msg.battle
        board = _board(msg.pieces)
        side = _side(detail.side_to_move, "state.battle.side_to_move")
        quiet = detail.no_capture_plies
        history: tuple[int, ...] | None = None
        if detail.position_history:
            history = tuple(detail.position_history)
            if history[-1] != position_key(board, side):
                raise invalid_state(
                    "the last position key is not the key of the position sent (the history "
                    "ends with the current position)",
                    "state.battle.position_history",
                )
            if len(history) > quiet + 1:
                raise invalid_state(
                    f"{len(history)} position keys but only {quiet} moves since the last capture",
                    "state.battle.position_history",
                )
        return BattleState(board, side, options, quiet, history)

    def action_to_proto(self, action: Move, out: game_pb2.Action) -> None:
        """Fill `out.battle.move` with the origin and destination squares."""
        out.battle.move.origin = NAMES[action.origin]
        out.battle.move.destination = NAMES[action.destination]

    def action_from_proto(self, msg: game_pb2.Action, state: BattleState) -> Move:
        """The core move of `msg.battle`; RuleError naming the field if malformed."""
        if msg.battle.WhichOneof("kind") != "move":
            raise RuleError(
                Reason.ILLEGAL_ACTION, "a battle action is a move", field="action.battle.move"
            )
        move = msg.battle.move
        cells = []
        for name, field in ((move.origin, "origin"), (move.destination, "destination")):
            cell = _INDEX.get(name)
            if cell is None:
                raise RuleError(
                    Reason.UNKNOWN_CELL,
                    f"{field} {name!r} is not a square: {SQUARE_HELP}",
                    field=f"action.battle.move.{field}",
                )
            cells.append(cell)
        return move_of(cells[0], cells[1])

"""The Game of War's state detail and actions, to and from `wargame.v1` messages.

Structural problems of a state from the wire (unknown cells, kinds or sides, two pieces on
a cell, more men or Flying Machines than the armies have, a bad reserve or side to move)
are refused here with the field named; whether the position could arise in play is
`check_state`'s question.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NoReturn

from engine_service.convert.base import GameConverter, invalid_state
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options
from engine_service.rules.war.actions import Action, ActionParts, join_action, split_action
from engine_service.rules.war.board import CELLS, NAMES, cell_index
from engine_service.rules.war.options import rules_of
from engine_service.rules.war.pieces import (
    ARMY,
    CANNON,
    EMPTY,
    FLYING_MACHINE,
    FLYING_MACHINES_PER_SIDE,
    GENERAL,
    HORSE,
    KING,
    MORTAR,
    SIDE_IDS,
    TROOP,
    TROOP_MOVED,
    code,
)
from engine_service.rules.war.state import WarState, position_key
from wargame.v1 import game_pb2, war_pb2

KINDS = {
    "troop": TROOP,
    "king": KING,
    "general": GENERAL,
    "mortar": MORTAR,
    "cannon": CANNON,
    "horse": HORSE,
    "flying_machine": FLYING_MACHINE,
}


def _cell(name: str, field: str, what: str) -> int:
    cell = cell_index(name) if name == name.strip().lower() else None
    if cell is None:
        raise invalid_state(f"{what} {name!r} is not a cell a1..j10", field)
    return cell


_SIDE_INDEX = {name: index for index, name in enumerate(SIDE_IDS)}


def _side(name: str, field: str) -> int:
    if name not in SIDE_IDS:
        raise invalid_state(f"side {name!r} is neither south nor north", field)
    return SIDE_IDS.index(name)


def _action_cell(name: str, field: str) -> int:
    cell = cell_index(name)
    if cell is None:
        raise RuleError(
            Reason.UNKNOWN_CELL, f"{name!r} is not a cell of the board (a1..j10)", field=field
        )
    return cell


class WarConverter(GameConverter[WarState, Action]):
    """`WarState` <-> `GameState.pieces` + `WarState` message; actions <-> `WarAction`."""

    game = "war"

    def detail_to_proto(self, state: WarState, out: game_pb2.GameState) -> None:
        """Fill `out.war` from a core state."""
        detail = out.war
        detail.side_to_move = SIDE_IDS[state.side]
        detail.south_reserve, detail.north_reserve = state.reserves
        detail.south_citadel, detail.north_citadel = (NAMES[c] for c in state.rules.citadels)
        detail.no_progress_plies = state.quiet
        detail.position_history.extend(state.history)
        detail.huffable.extend(NAMES[c] for c in state.huffable)
        detail.en_passant = NAMES[state.ep] if state.ep >= 0 else ""
        detail.move_number = state.move

    def state_from_proto(self, msg: game_pb2.GameState, options: Options) -> WarState:
        """The core state of `msg.pieces` and `msg.war`; `invalid_state` if malformed."""
        if msg.WhichOneof("detail") != "war":
            raise invalid_state("a war state needs its detail in `war`", "state.war")
        detail = msg.war
        side = _side(detail.side_to_move, "state.war.side_to_move")
        reserves = (detail.south_reserve, detail.north_reserve)
        for name, count in zip(("south_reserve", "north_reserve"), reserves, strict=True):
            if count > FLYING_MACHINES_PER_SIDE:
                raise invalid_state(
                    f"{name} is {count}; a side has {FLYING_MACHINES_PER_SIDE} Flying Machines",
                    f"state.war.{name}",
                )
        citadels = (
            _cell(detail.south_citadel, "state.war.south_citadel", "south_citadel"),
            _cell(detail.north_citadel, "state.war.north_citadel", "north_citadel"),
        )
        if citadels[0] == citadels[1]:
            raise invalid_state("the two Citadels are the same cell", "state.war.north_citadel")
        board = self._board(msg.pieces, reserves)
        huffable = tuple(
            sorted(
                {
                    _cell(name, f"state.war.huffable[{i}]", "huffable cell")
                    for i, name in enumerate(detail.huffable)
                }
            )
        )
        ep = (
            _cell(detail.en_passant, "state.war.en_passant", "en_passant")
            if detail.en_passant
            else -1
        )
        key = position_key(board, side, reserves, huffable)
        history = tuple(detail.position_history) or (key,)
        return WarState(
            board,
            side,
            reserves,
            ep,
            huffable,
            detail.no_progress_plies,
            detail.move_number or 1,
            history,
            rules_of(options, citadels),
        )

    @staticmethod
    def _refuse_piece(board: list[int], i: int, piece: game_pb2.Piece) -> NoReturn:
        """Raise the precise error for a piece the fast path found wrong."""
        where = f"state.pieces[{i}]"
        kind = KINDS.get(piece.kind)
        if kind is None:
            raise invalid_state(
                f"unknown piece kind {piece.kind!r}; kinds: {', '.join(KINDS)}", f"{where}.kind"
            )
        _side(piece.side, f"{where}.side")
        cell = _cell(piece.cell, f"{where}.cell", "cell")
        if board[cell] != EMPTY:
            raise invalid_state(f"two pieces on {piece.cell}", f"{where}.cell")
        if piece.moved and kind != TROOP:
            raise invalid_state(
                f"only a Troop can be marked as moved, not a {piece.kind}", f"{where}.moved"
            )
        raise invalid_state("Game of War pieces have no unit ids", f"{where}.id")

    @staticmethod
    def _board(pieces: Sequence[game_pb2.Piece], reserves: tuple[int, int]) -> bytes:
        board = [EMPTY] * CELLS
        counts: list[Counter[str]] = [Counter(), Counter()]
        for i, piece in enumerate(pieces):
            kind = KINDS.get(piece.kind)
            side = _SIDE_INDEX.get(piece.side, -1)
            cell = cell_index(piece.cell)
            if (
                kind is None
                or side < 0
                or cell is None
                or piece.cell != piece.cell.strip().lower()
                or board[cell] != EMPTY
                or (piece.moved and kind != TROOP)
                or piece.id
            ):
                WarConverter._refuse_piece(board, i, piece)
            counts[side][piece.kind] += 1
            board[cell] = code(side, TROOP_MOVED if kind == TROOP and piece.moved else kind)
        for side in (0, 1):
            for kind_id, most in ARMY.items():
                if counts[side][kind_id] > most:
                    raise invalid_state(
                        f"{SIDE_IDS[side]} has {counts[side][kind_id]} {kind_id} pieces; "
                        f"an army has {most}",
                        "state.pieces",
                    )
            machines = counts[side]["flying_machine"] + reserves[side]
            if machines > FLYING_MACHINES_PER_SIDE:
                raise invalid_state(
                    f"{SIDE_IDS[side]} has {machines} Flying Machines placed and in reserve; a "
                    f"side has {FLYING_MACHINES_PER_SIDE}",
                    "state.pieces",
                )
        return bytes(board)

    def action_to_proto(self, action: Action, out: game_pb2.Action) -> None:
        """Fill `out.war` from a core action."""
        parts = split_action(action)
        detail = out.war
        if parts.huff is not None:
            detail.huff = NAMES[parts.huff]
        if parts.place is not None:
            detail.place.cell = NAMES[parts.place]
        if parts.passes:
            getattr(detail, "pass").SetInParent()
        elif parts.origin is not None:
            move = detail.move_after_placement if parts.place is not None else detail.move
            move.origin = NAMES[parts.origin]
            move.path.extend(NAMES[c] for c in parts.path)

    def action_from_proto(self, msg: game_pb2.Action, state: WarState) -> Action:
        """The core action of `msg.war`; RuleError naming the field if malformed."""
        detail: war_pb2.WarAction = msg.war
        field = "action.war"
        huff = _action_cell(detail.huff, f"{field}.huff") if detail.huff else None
        kind = detail.WhichOneof("kind")
        place: int | None = None
        passes = False
        move: war_pb2.WarMove | None = None
        if kind is None:
            raise RuleError(
                Reason.ILLEGAL_ACTION,
                "the action has no move, place or pass",
                field=f"{field}.kind",
            )
        if kind == "place":
            place = _action_cell(detail.place.cell, f"{field}.place.cell")
            if detail.HasField("move_after_placement"):
                move = detail.move_after_placement
        elif kind == "pass":
            passes = True
        else:
            move = detail.move
        if kind != "place" and detail.HasField("move_after_placement"):
            raise RuleError(
                Reason.ILLEGAL_ACTION,
                "move_after_placement needs a placement in `place`",
                field=f"{field}.move_after_placement",
            )
        origin: int | None = None
        path: tuple[int, ...] = ()
        if move is not None:
            where = f"{field}.{'move' if kind == 'move' else 'move_after_placement'}"
            if not move.path:
                raise RuleError(
                    Reason.ILLEGAL_ACTION,
                    "a move needs at least one landing cell",
                    field=f"{where}.path",
                )
            origin = _action_cell(move.origin, f"{where}.origin")
            path = tuple(
                _action_cell(name, f"{where}.path[{i}]") for i, name in enumerate(move.path)
            )
        return join_action(ActionParts(huff, place, origin, path, passes))

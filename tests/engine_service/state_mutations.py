"""Mutations of game states, each with what the rules make of the state it produces.

A mutation changes one thing in a valid state (from a game's start or from random play)
and says, from the rules and not from the engine, whether the result could arise in play:
REFUSE when it cannot (two pieces on one square, more pieces than the set-up has, a Troop
marked unmoved off its starting ranks, ...), ACCEPT when the change provably keeps the
state one that can arise (a fresh position history, an empty `to_act`, a resignation).
Mutations that change the position also empty the position history (which the engine
then starts afresh), so that the history's key check cannot hide the check under test.

`structural_problem` is an independent oracle for random mutations: structural facts any
state must have, read straight from the messages.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from wargame.v1 import game_pb2, napoleonic_pb2

REFUSE = "refuse"
ACCEPT = "accept"

SIDES = {
    "war": ("south", "north"),
    "battle": ("attacker", "defender"),
    "napoleonic": ("red", "black"),
}
STATE_FORMAT_VERSION = 1

Made = tuple[game_pb2.GameState, str] | None
# (the state to change, randomness, the game's initial state) -> (changed state, verdict)
Change = Callable[[game_pb2.GameState, random.Random, game_pb2.GameState], Made]


@dataclass(frozen=True)
class Mutation:
    """A named change of a state and the rules' verdict on its result."""

    name: str
    change: Change
    games: tuple[str, ...] = ()  # empty: every game

    def make(
        self, original: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
    ) -> Made:
        """The mutated copy of `original` and its verdict, or None if it does not apply."""
        return self.change(copy(original), rng, start)


def copy(state: game_pb2.GameState) -> game_pb2.GameState:
    """A deep copy."""
    out = game_pb2.GameState()
    out.CopyFrom(state)
    return out


def fresh_history(state: game_pb2.GameState) -> game_pb2.GameState:
    """Empty the position history (the engine starts it afresh at the position sent)."""
    detail = getattr(state, state.game)
    if state.game in ("war", "battle"):
        detail.ClearField("position_history")
    return state


def cells_of(game: str) -> list[str]:
    """Every cell name of a game's default board."""
    if game == "war":
        return [f"{f}{r}" for r in range(1, 11) for f in "abcdefghij"]
    if game == "battle":
        return [str(n) for n in range(1, 140)]
    return [f"{f}{r}" for r in range(1, 9) for f in "abcdefgh"]


def empty_cells(state: game_pb2.GameState) -> list[str]:
    """Cells nobody stands on (and, in the Game of War, no Citadel)."""
    taken = {p.cell for p in state.pieces}
    if state.game == "war":
        taken |= {state.war.south_citadel, state.war.north_citadel}
    return [cell for cell in cells_of(state.game) if cell not in taken]


def war_rank(side: str, cell: str) -> int:
    """A War cell's rank counted from `side`'s back rank (1) forward."""
    rank = int(cell[1:])
    return rank if side == "south" else 11 - rank


# -- every game ----------------------------------------------------------------------------


def two_pieces_on_one_cell(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    a, b = rng.sample(range(len(state.pieces)), 2)
    state.pieces[a].cell = state.pieces[b].cell
    return fresh_history(state), REFUSE


def piece_off_the_board(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    rng.choice(state.pieces).cell = rng.choice(["z99", "k1", "j11", "a0", "0", "140", ""])
    return fresh_history(state), REFUSE


def unknown_piece_kind(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    rng.choice(state.pieces).kind = rng.choice(["dragon", "", "Troop", "queen"])
    return fresh_history(state), REFUSE


def piece_of_no_side(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    rng.choice(state.pieces).side = rng.choice(["nobody", "", "white"])
    return fresh_history(state), REFUSE


def piece_beyond_the_army(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    """A piece more of a kind than the set-up gives its side (every game's section 1-3)."""
    initial = Counter((p.side, p.kind) for p in start.pieces)
    now = Counter((p.side, p.kind) for p in state.pieces)
    full = [p for p in state.pieces if now[p.side, p.kind] >= initial[p.side, p.kind]]
    free = empty_cells(state)
    if state.game == "war":  # mid-board: no Troop rank or back-rank rule is touched
        free = [c for c in free if war_rank("south", c) in range(4, 8)]
    if not full or not free:
        return None
    extra = state.pieces.add()
    extra.CopyFrom(rng.choice(full))
    extra.cell = rng.choice(free)
    extra.moved = state.game == "war" and extra.kind == "troop"
    if extra.id:
        extra.id = "X_EXTRA"
    return fresh_history(state), REFUSE


def wrong_format_version(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.format_version = rng.choice([0, STATE_FORMAT_VERSION + 1, 999])
    return state, REFUSE


def detail_of_another_game(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.game = rng.choice([g for g in SIDES if g != state.game])
    return state, REFUSE


def option_missing(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    del state.options[rng.choice(sorted(state.options))]
    return state, REFUSE


def option_value_unknown(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.options[rng.choice(sorted(state.options))] = "~no such value~"
    return state, REFUSE


def to_act_disagrees(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    if not state.to_act:
        return None
    others = [s for s in SIDES[state.game] if s not in state.to_act]
    state.ClearField("to_act")
    state.to_act.extend(others or ["nobody"])
    return state, REFUSE


def to_act_left_empty(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.ClearField("to_act")  # "on input it must be empty or agree"
    return state, ACCEPT


def ply_changed(state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState) -> Made:
    state.ply = rng.choice([0, 7, 10_000])  # a counter the position does not depend on
    return state, ACCEPT


def draw_offer_by_no_side(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.draw_offer = rng.choice(["nobody", "white", "South"])
    return state, REFUSE


def resignation(state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState) -> Made:
    if state.HasField("outcome"):
        return None
    state.outcome.reason = rng.choice(
        [game_pb2.OUTCOME_REASON_RESIGNATION, game_pb2.OUTCOME_REASON_TIME]
    )
    state.outcome.winner = rng.choice(SIDES[state.game])
    state.ClearField("to_act")  # nobody acts in a finished game
    return state, ACCEPT


def agreement_with_a_winner(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    if state.HasField("outcome"):
        return None
    state.outcome.reason = game_pb2.OUTCOME_REASON_AGREEMENT
    state.outcome.winner = rng.choice(SIDES[state.game])
    state.ClearField("to_act")
    return state, REFUSE


def ending_the_position_does_not_show(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    if state.HasField("outcome"):
        return None
    state.outcome.reason = rng.choice(
        [
            game_pb2.OUTCOME_REASON_CITADEL_CAPTURED,
            game_pb2.OUTCOME_REASON_WAGON_CAPTURED,
            game_pb2.OUTCOME_REASON_NO_LEGAL_MOVE,
            game_pb2.OUTCOME_REASON_REPETITION,
        ]
    )
    state.outcome.winner = rng.choice(SIDES[state.game])
    state.ClearField("to_act")
    return state, REFUSE


# -- The Game of War -----------------------------------------------------------------------


def war_troop_moved_to(
    state: game_pb2.GameState,
    rng: random.Random,
    troops: list[game_pb2.Piece],
    free: list[str],
    moved: bool,
) -> Made:
    """One of `troops` put on one of the `free` squares with its moved mark `moved`: a
    state to refuse (None without a troop or a square)."""
    if not free or not troops:
        return None
    troop = rng.choice(troops)
    troop.cell, troop.moved = rng.choice(free), moved
    return fresh_history(state), REFUSE


def war_unmoved_troop_off_its_ranks(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    """Section 7: only a Troop that never moved may double-step, so the flag is state; a
    Troop marked unmoved stands where it was set up, on its side's ranks 2-3."""
    troops = [p for p in state.pieces if p.kind == "troop"]
    away = [p for p in troops if war_rank(p.side, p.cell) not in (2, 3)]
    if away:
        rng.choice(away).moved = False
        return fresh_history(state), REFUSE
    free = [c for c in empty_cells(state) if war_rank("south", c) in range(4, 8)]
    return war_troop_moved_to(state, rng, [p for p in troops if p.side == "south"], free, False)


def war_moved_mark_on_a_non_troop(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    rng.choice([p for p in state.pieces if p.kind != "troop"]).moved = True
    return fresh_history(state), REFUSE


def war_troop_on_its_own_back_rank(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    """Section 7: Troops move only forward (backward_jumps off), never onto their back rank."""
    if state.options.get("backward_jumps") != "false":
        return None
    side = rng.choice(SIDES["war"])
    free = [c for c in empty_cells(state) if war_rank(side, c) == 1]
    troops = [p for p in state.pieces if p.kind == "troop" and p.side == side]
    return war_troop_moved_to(state, rng, troops, free, True)


def war_reserve_above_two(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    setattr(state.war, rng.choice(["south_reserve", "north_reserve"]), rng.choice([3, 7]))
    return fresh_history(state), REFUSE


def war_third_flying_machine(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    """Section 8: two Flying Machines a side, placed and in reserve together."""
    side = rng.choice(SIDES["war"])
    placed = sum(1 for p in state.pieces if p.kind == "flying_machine" and p.side == side)
    setattr(state.war, f"{side}_reserve", 2 - placed)
    free = empty_cells(state)
    if not free:
        return None
    state.pieces.add(kind="flying_machine", side=side, cell=rng.choice(free))
    return fresh_history(state), REFUSE


def war_flying_machine_on_a_citadel(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    """Section 8: a Flying Machine is never placed on a Citadel."""
    side = rng.choice(SIDES["war"])
    citadel = rng.choice([state.war.south_citadel, state.war.north_citadel])
    for i, piece in enumerate(state.pieces):
        if piece.cell == citadel:  # its King (or whoever stands there) was captured
            del state.pieces[i]
            break
    reserve = getattr(state.war, f"{side}_reserve")
    if not reserve:
        return None
    setattr(state.war, f"{side}_reserve", reserve - 1)
    state.pieces.add(kind="flying_machine", side=side, cell=citadel)
    return fresh_history(state), REFUSE


def war_one_citadel_for_both(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.war.north_citadel = state.war.south_citadel
    return fresh_history(state), REFUSE


def war_huffable_without_huffing(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    if state.options.get("compulsion") == "huff":
        return None
    troops = [p.cell for p in state.pieces if p.kind == "troop"]
    state.war.huffable.append(rng.choice(troops))
    return fresh_history(state), REFUSE


def war_en_passant_without_the_option(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    if state.options.get("en_passant") != "none":
        return None
    state.war.en_passant = rng.choice(empty_cells(state))
    return fresh_history(state), REFUSE


def war_other_side_to_move_same_history(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    """The history ends with the key of the position and the side to move (section 12)."""
    if not state.war.position_history:
        return None
    state.war.side_to_move = "north" if state.war.side_to_move == "south" else "south"
    state.ClearField("to_act")
    return state, REFUSE


def history_started_afresh(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    return fresh_history(state), ACCEPT


# -- The Game of Battle --------------------------------------------------------------------


def battle_citadel_or_wagon_changes_side(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    """Section 3: the Citadel is the defender's, the Wagon the attacker's."""
    pieces = [p for p in state.pieces if p.kind in ("citadel", "wagon")]
    if not pieces:
        return None
    piece = rng.choice(pieces)
    piece.side = "attacker" if piece.kind == "citadel" else "defender"
    return fresh_history(state), REFUSE


def battle_piece_marked_moved(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    rng.choice(state.pieces).moved = True
    return fresh_history(state), REFUSE


def piece_with_a_unit_id(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    rng.choice(state.pieces).id = "U1"
    return fresh_history(state), REFUSE


def battle_other_side_to_move_same_history(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    if not state.battle.position_history:
        return None
    state.battle.side_to_move = (
        "defender" if state.battle.side_to_move == "attacker" else "attacker"
    )
    state.ClearField("to_act")
    return state, REFUSE


def battle_history_longer_than_the_quiet_moves(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    if len(state.battle.position_history) < 2:
        return None
    state.battle.no_capture_plies = len(state.battle.position_history) - 2
    return state, REFUSE


# -- Napoleonic Chess ----------------------------------------------------------------------


def napoleonic_two_units_one_id(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    a, b = rng.sample(range(len(state.pieces)), 2)
    state.pieces[a].id = state.pieces[b].id
    return state, REFUSE


def napoleonic_active_player_unknown(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.napoleonic.active_player = rng.choice(["white", "", "nobody"])
    state.ClearField("to_act")
    return state, REFUSE


def napoleonic_quiet_turns_beyond_turns(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    detail = state.napoleonic
    detail.turns_since_elimination = detail.turn_number + rng.choice([1, 5])
    return state, REFUSE


def napoleonic_scenario_not_the_option(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.napoleonic.scenario = rng.choice(["grand_battle", "nowhere", ""])
    return state, REFUSE


def napoleonic_game_over_without_outcome(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    state.napoleonic.phase = napoleonic_pb2.NAPOLEONIC_PHASE_GAME_OVER
    state.ClearField("outcome")
    state.ClearField("to_act")
    return state, REFUSE


def napoleonic_army_of_unknown_units(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    rng.choice(state.napoleonic.armies).unit_types.append("dragoon_of_mars")
    return state, REFUSE


def napoleonic_board_size_impossible(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    setattr(state.napoleonic, rng.choice(["width", "height"]), rng.choice([0, 1, 1000]))
    return state, REFUSE


def napoleonic_unit_beyond_its_army(
    state: game_pb2.GameState, rng: random.Random, start: game_pb2.GameState
) -> Made:
    """A unit whose type its player's order of battle does not hold (section 2)."""
    army = rng.choice(state.napoleonic.armies)
    kinds = list(army.unit_types)
    kind = rng.choice(sorted(set(kinds)))
    army.ClearField("unit_types")
    army.unit_types.extend(k for k in kinds if k != kind)
    if not any(p.side == army.player and p.kind == kind for p in state.pieces):
        return None
    return state, REFUSE


def build() -> list[Mutation]:
    """Every mutation, each with the games it applies to."""
    every: list[Change] = [
        two_pieces_on_one_cell,
        piece_off_the_board,
        unknown_piece_kind,
        piece_of_no_side,
        wrong_format_version,
        detail_of_another_game,
        option_missing,
        option_value_unknown,
        to_act_disagrees,
        to_act_left_empty,
        ply_changed,
        draw_offer_by_no_side,
        resignation,
        agreement_with_a_winner,
        ending_the_position_does_not_show,
        piece_beyond_the_army,
    ]
    found = [Mutation(f.__name__, f) for f in every]
    groups: list[tuple[tuple[str, ...], list[Change]]] = [
        (
            ("war",),
            [
                war_unmoved_troop_off_its_ranks,
                war_moved_mark_on_a_non_troop,
                war_troop_on_its_own_back_rank,
                war_reserve_above_two,
                war_third_flying_machine,
                war_flying_machine_on_a_citadel,
                war_one_citadel_for_both,
                war_huffable_without_huffing,
                war_en_passant_without_the_option,
                war_other_side_to_move_same_history,
                piece_with_a_unit_id,
            ],
        ),
        (
            ("battle",),
            [
                battle_citadel_or_wagon_changes_side,
                battle_piece_marked_moved,
                battle_other_side_to_move_same_history,
                battle_history_longer_than_the_quiet_moves,
                piece_with_a_unit_id,
            ],
        ),
        (("war", "battle"), [history_started_afresh]),
        (
            ("napoleonic",),
            [
                napoleonic_two_units_one_id,
                napoleonic_active_player_unknown,
                napoleonic_quiet_turns_beyond_turns,
                napoleonic_scenario_not_the_option,
                napoleonic_game_over_without_outcome,
                napoleonic_army_of_unknown_units,
                napoleonic_board_size_impossible,
                napoleonic_unit_beyond_its_army,
            ],
        ),
    ]
    for games, changes in groups:
        prefix = "" if len(games) > 1 else f"{games[0]}_"
        for c in changes:
            name = c.__name__ if c.__name__.startswith(prefix) else prefix + c.__name__
            found.append(Mutation(name, c, games))
    return found


MUTATIONS = build()


def structural_problem(original: game_pb2.GameState, state: game_pb2.GameState) -> str | None:
    """A fact every state must have that `state` lacks, read from the messages alone."""
    if state.game not in SIDES:
        return f"unknown game {state.game!r}"
    if state.game != original.game or state.WhichOneof("detail") != state.game:
        return "the detail is not the game's"
    if state.format_version != STATE_FORMAT_VERSION:
        return f"format_version {state.format_version}"
    if not set(original.options) <= set(state.options):
        return "an option is missing"
    sides = SIDES[state.game]
    cells = Counter(p.cell for p in state.pieces)
    if any(count > 1 for count in cells.values()):
        return "two pieces on one cell"
    same_board = state.game != "napoleonic" or (
        (state.napoleonic.width, state.napoleonic.height)
        == (original.napoleonic.width, original.napoleonic.height)
    )
    if same_board and set(cells) - set(cells_of(state.game)):
        return "a piece off the board"
    if any(p.side not in sides for p in state.pieces):
        return "a piece of no side"
    if state.draw_offer and state.draw_offer not in sides:
        return "a draw offer by no side"
    if any(side not in sides for side in state.to_act):
        return "to_act names no side"
    return None

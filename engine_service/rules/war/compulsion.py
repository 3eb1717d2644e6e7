"""Compulsory capture (section 7.1) in its two forms: a legality rule, or the huff.

J is the set of enemy men that at least one of the mover's Troops could capture by a first
jump at the start of the turn. With `compulsion = legality` (the default), while J is not
empty the move must capture a member of J as its first capture, by any piece and any
method; everything else, placement included, is illegal.

With `compulsion = huff` (A13), nothing is illegal. Reading of the period checkers rule
(the specification leaves the details open; section 7.1): a turn that does not capture a
member of J leaves the Troops that could have jumped ("offenders", followed to their new
square if one of them moved) exposed to a huff. On the very next turn the opponent may,
before his own action and as part of it, remove one of them; the right lapses after that
turn. Removing a man by huff is not a move and not a capture, but it counts as progress
for no_progress_limit and resets the repetition history. The chain rules (7.5 must go on,
A14 longest) stay rules of legality under both forms: they say what a jump is.

With citadel_defence_overrides_compulsion (A12), capturing an enemy man standing on the
mover's own Citadel also satisfies the obligation. With jump_over_non_troops (A16) J holds
every enemy man a first jump could take, not only Troops.

longest_jump_required (A14), reading taken here (the specification leaves the scope open):
the majority rule of international draughts. A jump chain must capture as many men as the
longest chain any of the side's Troops has this turn; J is still every man a first jump
could take, and a displacement capture of a member of J still meets the obligation.
"""

from __future__ import annotations

from engine_service.memo import memo
from engine_service.rules.war.actions import Action
from engine_service.rules.war.board import BEHIND, FORWARD, JUMPED, WIDTH
from engine_service.rules.war.options import WarRules
from engine_service.rules.war.pieces import SIDE_SPAN, TROOP_MOVED
from engine_service.rules.war.state import Turn


def exposed_by_chains(chains: list[Action]) -> set[int]:
    """J (7.1) read off the side's jump chains: the man each chain jumps first."""
    return {JUMPED[chain[0] * 100 + chain[1]] for chain in chains}


def exposed(rules: WarRules, board: bytes | bytearray, side: int) -> dict[int, list[int]]:
    """Each Troop of `side` that can make a first jump, with the men it could jump (J)."""
    unmoved = 1 + SIDE_SPAN * side
    moved = unmoved + TROOP_MOVED
    forward = FORWARD[side]
    jumpable = rules.jumpable[side]
    jumps = rules.jumps[side]
    no_landing = rules.no_landing[side]
    found = {}
    for cell, piece in enumerate(board):
        if (piece in (unmoved, moved)) and forward[cell] >= 0:
            victims = [
                over
                for over, land in jumps[cell]
                if jumpable[(over << 5) | board[over]] and not board[land] and land != no_landing
            ]
            if victims:
                found[cell] = victims
    return found


@memo(256)
def offenders_of(rules: WarRules, board: bytes, side: int) -> tuple[dict[int, list[int]], set[int]]:
    """compulsion = huff: the Troops that could jump at the start of the turn, and J.

    Cached, because every action from one position shares the same answer.
    """
    found = exposed(rules, board, side)
    return found, {man for men in found.values() for man in men}


def victim_of(board: bytes | bytearray, side: int, ep: int, move: Action) -> int:
    """The cell of the man a plain move (origin, landing, ...) captures first, or -1."""
    origin, to = move[0], move[1]
    jumped = JUMPED[origin * 100 + to]
    piece = board[origin]
    base = 1 + SIDE_SPAN * side
    is_troop = base <= piece <= base + TROOP_MOVED
    if is_troop and jumped >= 0:
        return jumped
    if board[to]:
        return to
    if is_troop and to == ep and (to - origin) % WIDTH:
        return BEHIND[side][to]  # en passant: the Troop behind the square passed
    return -1


def allowed_victims(rules: WarRules, board: bytes, side: int, exposed_men: set[int]) -> set[int]:
    """The men whose capture meets the obligation: J, and the Citadel occupier under A12."""
    allowed = set(exposed_men)
    if rules.citadel_override:
        citadel = rules.citadels[side]
        occupier = board[citadel]
        if occupier and (occupier - 1) >> 3 != side:
            allowed.add(citadel)
    return allowed


def keep_compulsory(
    turn: Turn, moves: list[Action], chains: list[Action], exposed_men: set[int]
) -> list[Action]:
    """7.1 as a legality rule: only the moves whose first capture is a member of J.

    `chains` are the jump chains the player may choose from (after A14), `exposed_men` is J
    (every man some first jump could take, whatever the length of its chain).
    """
    rules, board, side, ep = turn
    allowed = allowed_victims(rules, board, side, exposed_men)
    kept = [m for m in moves if victim_of(board, side, ep, m) in allowed]
    return kept + chains


def longest_only(chains: list[Action]) -> list[Action]:
    """A14 = true: only the chains capturing as many men as the longest of the side's."""
    most = max(len(chain) for chain in chains)
    return [chain for chain in chains if len(chain) == most]

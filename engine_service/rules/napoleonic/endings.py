"""Victory and game end (spec 8): the Guards' fall, and the optional draw rules.

Eliminating an enemy commander (`commander_types`, by default the Guards) wins at once.
The termination options are off unless chosen (presets `casual` and `ranked`): a turn
limit (optionally adjudicated by material), a no-elimination limit, repetition of a
position (units, terrain, side to move) and insufficient force. They are checked at the
end of every player-turn.
"""

from __future__ import annotations

from engine_service.rules.base import Outcome, OutcomeReason
from engine_service.rules.draws import no_progress_draw, repetition_draw
from engine_service.rules.napoleonic.state import NapoleonicState

MAX_ATTACKERS = 8  # a square has at most eight neighbours, so at most eight attackers


def material(state: NapoleonicState, side: str) -> int:
    """Material points of a side (section 8: Inf 1, Cav 1, Art 2, Guards 0)."""
    return sum(state.stats(u).points for u in state.units if u.side == side)


def can_still_win(state: NapoleonicState, side: str) -> bool:
    """False when `side`'s attack values can never exceed an enemy commander's defence.

    Terrain and supports only raise a defence and terrain only lowers an attack, so the
    best a side can ever do is its eight strongest attack values against the commander's
    own defence value.
    """
    enemies = state.enemies(side)
    defences = [
        state.stats(u).defence
        for u in state.units
        if u.side in enemies and state.stats(u).is_commander
    ]
    if not defences:
        return False
    attacks = sorted((state.stats(u).attack for u in state.units if u.side == side), reverse=True)
    return sum(attacks[:MAX_ATTACKERS]) > min(defences)


def by_material(state: NapoleonicState, why: str) -> Outcome:
    """Adjudication by material (section 8's points): the player with more wins; in a game
    of alliances (10.6) the alliance with more, summed over its players still in the
    game; equal points draw (reason TURN_LIMIT)."""
    multi = state.multiplayer()
    scores: dict[str, int] = {}
    for player in state.players:
        if multi and player.out:
            continue
        key = player.alliance if multi else player.id
        scores[key] = scores.get(key, 0) + material(state, player.id)
    best = max(scores.values(), default=0)
    leaders = [key for key, score in scores.items() if score == best]
    detail = ", ".join(f"{key} {score}" for key, score in scores.items())
    if len(leaders) != 1:
        return Outcome(None, OutcomeReason.TURN_LIMIT, f"{why}; material {detail}: drawn")
    winner = leaders[0]
    winners = tuple(p.id for p in state.players if p.alliance == winner) if multi else ()
    return Outcome(
        winner, OutcomeReason.TURN_LIMIT, f"{why}; material {detail}: {winner} wins", winners
    )


def draw_outcome(state: NapoleonicState) -> Outcome | None:
    """The ending the termination options give at the end of a player-turn, if any."""
    rules = state.rules
    drawn = repetition_draw(state.position_history, rules.repetition) or no_progress_draw(
        state.turns_since_elimination,
        rules.no_elimination_limit,
        f"{rules.no_elimination_limit} player-turns without an elimination",
    )
    if drawn is not None:
        return drawn
    if rules.turn_limit and state.turn_number >= rules.turn_limit:
        if rules.adjudicate:
            return by_material(state, f"turn limit {rules.turn_limit} reached")
        return Outcome(
            None, OutcomeReason.TURN_LIMIT, f"turn limit {rules.turn_limit} reached: drawn"
        )
    if rules.insufficient_force and not any(can_still_win(state, p.id) for p in state.players):
        return Outcome(
            None,
            OutcomeReason.INSUFFICIENT_FORCE,
            "neither side can ever beat the enemy Guards' defence: drawn",
        )
    return None

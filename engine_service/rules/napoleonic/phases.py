"""The turn as a state machine (spec 6): what `EndPhase` does in each phase.

MOVEMENT -> ATTACK_DECLARATION -> (no attacks: END_OF_TURN) -> DEFENCE -> RESOLUTION ->
(a commander fell: GAME_OVER; nothing fell: END_OF_TURN) -> ADVANCE -> END_OF_TURN.
Resolution and the end of the turn are instantaneous; `auto_skip_defence` skips DEFENCE
when the defender has no legal support.
"""

from __future__ import annotations

from dataclasses import replace

from engine_service.rules.base import Event, EventKind, Outcome, OutcomeReason
from engine_service.rules.napoleonic.combat import legal_supports, resolve
from engine_service.rules.napoleonic.endings import draw_outcome, position_key
from engine_service.rules.napoleonic.state import EMPTY_TURN, NapoleonicState, Phase
from engine_service.rules.napoleonic.terrain import end_of_turn_redoubts
from engine_service.rules.napoleonic.words import side_title


def _phase_event(events: list[Event] | None, text: str, side: str | None) -> None:
    if events is not None:
        events.append(Event(EventKind.PHASE_CHANGED, text, side=side))


def _attacks_words(count: int) -> str:
    return "1 attack" if count == 1 else f"{count} attacks"


def end_movement(state: NapoleonicState, events: list[Event] | None) -> NapoleonicState:
    """MOVEMENT -> ATTACK_DECLARATION (by EndPhase, or implicitly by an attack)."""
    _phase_event(
        events,
        f"{side_title(state.active)}'s movement ends: attack declaration.",
        state.active,
    )
    return state.evolve(phase=Phase.ATTACK_DECLARATION)


def end_declaration(state: NapoleonicState, events: list[Event] | None) -> NapoleonicState:
    """The declaration is complete: pass (no attacks), or the defence phase, or resolution."""
    attacks = state.turn.attacks
    if not attacks:
        _phase_event(events, f"{side_title(state.active)} declares no attack.", state.active)
        return end_turn(state, events)
    units = state.by_id()
    owners = {units[t].side for _a, t in attacks}
    defenders = tuple(p.id for p in state.players if p.id in owners)
    state = state.evolve(phase=Phase.DEFENCE, turn=replace(state.turn, pending_defenders=defenders))
    if state.rules.auto_skip_defence and not any(legal_supports(state, d) for d in defenders):
        _phase_event(
            events,
            f"{_attacks_words(len(attacks))} declared; {' and '.join(defenders)} has no legal "
            "support, so combat is resolved at once (auto_skip_defence).",
            None,
        )
        return resolve_combat(state, events)
    _phase_event(
        events,
        f"{_attacks_words(len(attacks))} declared: {' and '.join(defenders)} allocates "
        "supports (defence).",
        defenders[0],
    )
    return state


def end_defence(state: NapoleonicState, side: str, events: list[Event] | None) -> NapoleonicState:
    """A defender's allocation is complete; when every defender is done, resolve."""
    pending = tuple(p for p in state.turn.pending_defenders if p != side)
    state = state.evolve(turn=replace(state.turn, pending_defenders=pending))
    if pending:
        return state
    _phase_event(events, f"{side_title(side)}'s supports are allocated: resolution.", side)
    return resolve_combat(state, events)


def resolve_combat(state: NapoleonicState, events: list[Event] | None) -> NapoleonicState:
    """Simultaneous resolution (7.3), then game over, the advance phase or the turn's end."""
    state, log, commander_lost = resolve(state)
    if events is not None:
        events.extend(log)
    state = state.evolve(turn=replace(state.turn, pending_defenders=()))
    if commander_lost:
        winner = state.active
        loser = next(
            (p for p in state.enemies(winner)),
            "",
        )
        outcome = Outcome(
            winner,
            OutcomeReason.GUARDS_ELIMINATED,
            f"{winner} eliminates {loser}'s Guards: {winner} wins",
        )
        if events is not None:
            events.append(Event(EventKind.GAME_OVER, outcome.message, side=winner))
        return state.evolve(phase=Phase.GAME_OVER, outcome=outcome)
    if state.turn.vacancies:
        squares = ", ".join(state.geo.names[v.cell] for v in state.turn.vacancies)
        _phase_event(
            events,
            f"{side_title(state.active)} may advance into {squares} (advance).",
            state.active,
        )
        return state.evolve(phase=Phase.ADVANCE)
    return end_turn(state, events)


def end_turn(state: NapoleonicState, events: list[Event] | None) -> NapoleonicState:
    """END_OF_TURN (6): redoubts, the draw options, the next player in movement."""
    terrain, log, completed = end_of_turn_redoubts(state)
    if events is not None:
        events.extend(log)
    eliminated = bool(state.turn.eliminated)
    ended = state.active
    following = state.next_player(ended)
    history = state.position_history
    if state.rules.repetition and (eliminated or completed):
        history = ()  # those positions can never come back
    state = state.evolve(
        terrain=terrain,
        turn=EMPTY_TURN,
        phase=Phase.MOVEMENT,
        active=following,
        turn_number=state.turn_number + 1,
        turns_since_elimination=0 if eliminated else state.turns_since_elimination + 1,
    )
    if state.rules.repetition:
        state = state.evolve(position_history=(*history, position_key(state)))
    if events is not None:
        events.append(
            Event(
                EventKind.TURN_ENDED,
                f"{side_title(ended)}'s turn ends (player-turn {state.turn_number}): "
                f"{following} to move.",
                side=following,
            )
        )
    outcome = draw_outcome(state)
    if outcome is not None:
        if events is not None:
            events.append(Event(EventKind.GAME_OVER, outcome.message))
        return state.evolve(phase=Phase.GAME_OVER, outcome=outcome)
    return state

"""The turn as a state machine (spec 6): who may act, what they may send in each phase
("Who may send what"), and what `EndPhase` does in each phase.

MOVEMENT -> ATTACK_DECLARATION -> (no attacks: END_OF_TURN) -> DEFENCE -> RESOLUTION ->
(a commander fell: GAME_OVER; nothing fell: END_OF_TURN) -> ADVANCE -> END_OF_TURN.
Resolution and the end of the turn are instantaneous; `auto_skip_defence` skips DEFENCE
when the defender has no legal support.
"""

from __future__ import annotations

from dataclasses import replace

from engine_service.rules.base import Event, EventKind, Outcome, OutcomeReason
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic import actions
from engine_service.rules.napoleonic.actions import Attack, NapoleonicAction
from engine_service.rules.napoleonic.combat import declare, legal_supports, resolve
from engine_service.rules.napoleonic.endings import draw_outcome
from engine_service.rules.napoleonic.state import (
    ACTIVE_PHASES,
    DEPLOY_PHASES,
    EMPTY_TURN,
    NapoleonicState,
    Phase,
    position_key,
)
from engine_service.rules.napoleonic.terrain import end_of_turn_redoubts
from engine_service.rules.napoleonic.words import side_title
from wargame.runtime.quoting import quoted


def _phase_event(events: list[Event] | None, text: str, side: str | None) -> None:
    if events is not None:
        events.append(Event(EventKind.PHASE_CHANGED, text, side=side))


def _attacks_words(count: int) -> str:
    return "1 attack" if count == 1 else f"{count} attacks"


def declare_attack(
    state: NapoleonicState, action: Attack, events: list[Event] | None, event: Event | None
) -> NapoleonicState:
    """A legal declaration entry: an attack sent during movement ends it first (6, T25)."""
    if state.phase is Phase.MOVEMENT:
        state = end_movement(state, events)
    if events is not None and event is not None:
        events.append(event)
    return declare(state, action)


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


def to_act(state: NapoleonicState) -> tuple[str, ...]:
    """The players that may act: the active player, the defenders, or the deployers."""
    phase = state.phase
    if state.outcome is not None:
        return ()
    if phase in ACTIVE_PHASES:
        return (state.active,)
    if phase is Phase.DEFENCE:
        return state.turn.pending_defenders
    dep = state.deployment
    if dep is None:
        return ()
    if phase is Phase.PLACEMENT:
        return (dep.next_placer,)
    done = {
        Phase.DEPLOY_COMMIT: dep.commitments,
        Phase.DEPLOY_REVEAL: dep.reveals,
        Phase.DEPLOY_SEALED: dep.sealed,
    }[phase]
    finished = {p for p, _x in done}
    return tuple(p for p in state.turn_order if p not in finished)


def end_phase(state: NapoleonicState, side: str, events: list[Event] | None) -> NapoleonicState:
    phase = state.phase
    if phase is Phase.MOVEMENT:
        return end_movement(state, events)
    if phase is Phase.ATTACK_DECLARATION:
        return end_declaration(state, events)
    if phase is Phase.DEFENCE:
        return end_defence(state, side, events)
    if events is not None:
        events.append(
            Event(
                EventKind.PHASE_CHANGED,
                f"{side_title(side)}'s advance phase ends.",
                side=side,
            )
        )
    return end_turn(state, events)


_PHASES_OF: dict[type, tuple[Phase, ...]] = {
    actions.Move: (Phase.MOVEMENT,),
    actions.Attack: (Phase.MOVEMENT, Phase.ATTACK_DECLARATION),
    actions.BeginRedoubt: ACTIVE_PHASES,
    actions.Advance: (Phase.ADVANCE,),
    actions.Support: (Phase.DEFENCE,),
    actions.EndPhase: (*ACTIVE_PHASES, Phase.DEFENCE),
    actions.Commit: (Phase.DEPLOY_COMMIT,),
    actions.Reveal: (Phase.DEPLOY_REVEAL,),
    actions.Seal: (Phase.DEPLOY_SEALED,),
    actions.Place: (Phase.PLACEMENT,),
}
_ACTIVE_KINDS = (actions.Move, actions.Attack, actions.Advance, actions.BeginRedoubt)
_WHAT = {
    actions.Move: "move",
    actions.Attack: "declare an attack",
    actions.Advance: "advance",
    actions.BeginRedoubt: "begin a redoubt",
    actions.Support: "allocate a support",
    actions.EndPhase: "end a phase",
    actions.Commit: "commit a deployment",
    actions.Reveal: "reveal a deployment",
    actions.Seal: "seal a deployment",
    actions.Place: "place a unit",
}


def check_turn(state: NapoleonicState, action: NapoleonicAction) -> None:
    """NOT_YOUR_TURN, WRONG_PHASE or ALREADY_DEPLOYED when the sender may not act now."""
    side = action.side
    players = [p.id for p in state.players]
    if side not in players:
        raise RuleError(
            Reason.NOT_YOUR_TURN, f"{quoted(side)} is no player; players: {', '.join(players)}"
        )
    kind = type(action)
    what = _WHAT[kind]
    to_act_now = to_act(state)
    if state.phase in _PHASES_OF[kind]:
        if side in to_act_now:
            return
        if state.phase in DEPLOY_PHASES and state.phase is not Phase.PLACEMENT:
            raise RuleError(
                Reason.ALREADY_DEPLOYED,
                f"{side} has already done its part of this deployment phase",
            )
        raise RuleError(
            Reason.NOT_YOUR_TURN,
            f"{side} cannot {what} now: {' and '.join(to_act_now) or 'nobody'} to act",
        )
    phase_words = str(state.phase).replace("_", " ")
    own_turn = side == state.active and state.phase not in DEPLOY_PHASES
    if (
        (isinstance(action, _ACTIVE_KINDS) and own_turn)
        or (isinstance(action, actions.Support) and side != state.active)
        or isinstance(action, actions.Commit | actions.Reveal | actions.Seal | actions.Place)
        or (isinstance(action, actions.EndPhase) and side in to_act_now)
    ):
        hint = ""
        if isinstance(action, actions.Move) and state.phase is not Phase.MOVEMENT:
            hint = " (movement ends when attacks are declared, 6)"
        raise RuleError(
            Reason.WRONG_PHASE,
            f"{side} cannot {what} in the {phase_words} phase{hint}",
        )
    raise RuleError(
        Reason.NOT_YOUR_TURN,
        f"{side} cannot {what} now: it is {state.active}'s turn ({phase_words})",
    )

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
from engine_service.rules.napoleonic.pieces import type_rank
from engine_service.rules.napoleonic.state import (
    ACTIVE_PHASES,
    DEPLOY_PHASES,
    EMPTY_TURN,
    NapoleonicState,
    Phase,
    Unit,
    crowd,
    position_key,
    sort_units,
    turn_opening,
)
from engine_service.rules.napoleonic.terrain import end_of_turn_redoubts
from engine_service.rules.napoleonic.words import side_title
from wargame.runtime.quoting import quoted


def _phase_event(events: list[Event] | None, text: str, side: str | None) -> None:
    if events is not None:
        events.append(Event(EventKind.PHASE_CHANGED, text, side=side))


def _attacks_words(count: int) -> str:
    return "1 attack" if count == 1 else f"{count} attacks"


def _players_words(players: tuple[str, ...] | list[str]) -> tuple[str, bool]:
    """'red', 'red and blue', 'red, blue and green', and whether that is several players
    (for the verb: 'red has', 'red and blue have')."""
    names = list(players)
    if len(names) <= 2:
        return " and ".join(names), len(names) > 1
    return f"{', '.join(names[:-1])} and {names[-1]}", True


def declarers(state: NapoleonicState) -> tuple[str, ...]:
    """Who declares attacks this turn (10.6): the acting player(s), then the allies in the
    game with units on the board, who may join the attacks without moving."""
    acting = state.acting()
    sides = {u.side for u in state.units}
    allies = tuple(p for p in state.allies(state.active) if p not in acting and p in sides)
    return acting + allies


def _still_pending(state: NapoleonicState, side: str) -> NapoleonicState | None:
    """`side` ends its part of an active phase; the state if others still have theirs."""
    pending = state.turn.pending_players
    if side not in pending:
        return None
    rest = tuple(p for p in pending if p != side)
    if not rest:
        return None
    return state.evolve(turn=replace(state.turn, pending_players=rest))


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
    """MOVEMENT -> ATTACK_DECLARATION (by EndPhase, or implicitly by an attack); with allies
    in the game, they declare too (10.6)."""
    pending = crowd(declarers(state))
    joined = f" ({', '.join(pending[1:])} may join without moving)" if pending else ""
    _phase_event(
        events,
        f"{side_title(state.active)}'s movement ends: attack declaration{joined}.",
        state.active,
    )
    return state.evolve(
        phase=Phase.ATTACK_DECLARATION, turn=replace(state.turn, pending_players=pending)
    )


def defenders_of(state: NapoleonicState) -> tuple[str, ...]:
    """Who allocates supports (7.2, 10.6): every player in the game with units under
    attack, or with allies under attack, in the order of the players."""
    units = state.by_id()
    owners = {units[t].side for _a, t in state.turn.attacks}
    if not state.multiplayer():
        return tuple(p.id for p in state.players if p.id in owners)
    alliances = {state.alliance_of(o) for o in owners}
    sides = {u.side for u in state.units}
    return tuple(
        p.id for p in state.players if not p.out and p.id in sides and p.alliance in alliances
    )


def end_declaration(state: NapoleonicState, events: list[Event] | None) -> NapoleonicState:
    """The declaration is complete: pass (no attacks), or the defence phase, or resolution."""
    attacks = state.turn.attacks
    state = state.evolve(turn=replace(state.turn, pending_players=()))
    if not attacks:
        _phase_event(events, f"{side_title(state.active)} declares no attack.", state.active)
        return end_turn(state, events)
    defenders = defenders_of(state)
    if state.multiplayer() and state.rules.auto_skip_defence:
        defenders = tuple(d for d in defenders if legal_supports(state, d)) or defenders
    state = state.evolve(phase=Phase.DEFENCE, turn=replace(state.turn, pending_defenders=defenders))
    if not defenders:  # 10.6: every attacked unit is inert, with no ally left to support it
        _phase_event(
            events,
            f"{_attacks_words(len(attacks))} declared; no player in the game defends the "
            "attacked units, so combat is resolved at once.",
            None,
        )
        return resolve_combat(state, events)
    who, several = _players_words(defenders)
    if state.rules.auto_skip_defence and not any(legal_supports(state, d) for d in defenders):
        _phase_event(
            events,
            f"{_attacks_words(len(attacks))} declared; {who} {'have' if several else 'has'} "
            "no legal support, so combat is resolved at once (auto_skip_defence).",
            None,
        )
        return resolve_combat(state, events)
    _phase_event(
        events,
        f"{_attacks_words(len(attacks))} declared: {who} {'allocate' if several else 'allocates'} "
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
    state, log, fallen = resolve(state)
    if events is not None:
        events.extend(log)
    state = state.evolve(turn=replace(state.turn, pending_defenders=()))
    if fallen and not state.multiplayer():
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
    if fallen:
        state = players_out(state, fallen, events, surrendered=False)
        if state.outcome is not None:
            return state
    if state.turn.vacancies:
        squares = ", ".join(state.geo.names[v.cell] for v in state.turn.vacancies)
        _phase_event(
            events,
            f"{side_title(state.active)} may advance into {squares} (advance).",
            state.active,
        )
        return state.evolve(
            phase=Phase.ADVANCE,
            turn=replace(state.turn, pending_players=crowd(state.acting())),
        )
    return end_turn(state, events)


def players_out(
    state: NapoleonicState,
    sides: tuple[str, ...],
    events: list[Event] | None,
    *,
    surrendered: bool,
    cause: str = "has lost its Guards",
) -> NapoleonicState:
    """10.6: players leave the game (their army's Guards fell, or they surrendered; `cause`
    says why the army left when it did not surrender). Their units go as on_commander_loss
    says; when one alliance is left, it wins."""
    gone: set[str] = set()
    for side in sides:
        player = state.player(side)
        army = player.army_id if player is not None else side
        # A surrender takes out one player; a fallen Guards every commander of its army.
        gone |= {side} if surrendered else {p.id for p in state.players if p.army_id == army}
    players = tuple(
        replace(p, out=True, surrendered=p.surrendered or (surrendered and p.id in sides))
        if p.id in gone and not p.out
        else p
        for p in state.players
    )
    newly = [p.id for p in state.players if p.id in gone and not p.out]
    state = state.evolve(players=players)
    state = dispose(state, newly, events, surrendered=surrendered)
    for side in newly:
        why = "surrenders" if surrendered else cause
        if events is not None:
            text = f"{side_title(side)} {why} and is out of the game."
            events.append(Event(EventKind.PLAYER_OUT, text, side=side))
    alliances = {p.alliance for p in state.players if not p.out}
    if len(alliances) > 1:
        return state
    # The game may end in a deployment too: nothing of it is left to lay out.
    outcome = alliance_victory(state, events)
    return state.evolve(phase=Phase.GAME_OVER, outcome=outcome, deployment=None)


def surrender(state: NapoleonicState, side: str) -> NapoleonicState:
    """10.6: `side` alone leaves a game of alliances. Its part of the turn is done
    without it: its own turn ends (a co-commander of a merged side-turn plays on), its
    declaration or defence is closed; a deployment goes on without it (the caller)."""
    state = players_out(state, (side,), None, surrendered=True)
    if state.outcome is not None or state.phase in DEPLOY_PHASES:
        return state
    turn = state.turn
    phase = state.phase
    pending = turn.pending_players or (state.active,)
    if side == state.active:
        heirs = [p for p in state.commanders(side) if p != side] if state.merged() else []
        if not heirs:  # its turn ends, whatever it had declared
            return end_turn(state.evolve(turn=replace(turn, pending_players=())), None)
        state = state.evolve(active=heirs[0])
        if phase is not Phase.DEFENCE:
            return _close_part(state, tuple(p for p in pending if p != side) or (heirs[0],))
    if phase is Phase.DEFENCE:
        if not state.turn.attacks:  # every attack was on its units, and they left the field
            return resolve_combat(state, None)
        if side in turn.pending_defenders:
            return end_defence(state, side, None)
        return state
    if side in pending:
        return _close_part(state, tuple(p for p in pending if p != side))
    return state


def _close_part(state: NapoleonicState, rest: tuple[str, ...]) -> NapoleonicState:
    """The active phase with `rest` still to end it (the phase ends when nobody is left)."""
    if not rest:
        return end_phase(state.evolve(turn=replace(state.turn, pending_players=())), "", None)
    keep = () if rest == (state.active,) else rest
    return state.evolve(turn=replace(state.turn, pending_players=keep))


def alliance_victory(state: NapoleonicState, events: list[Event] | None) -> Outcome:
    """The outcome when one alliance is left (10.6): it wins, every player of it listed."""
    alliance = next(p.alliance for p in state.players if not p.out)
    winners = tuple(p.id for p in state.players if p.alliance == alliance)
    outcome = Outcome(
        alliance,
        OutcomeReason.ENEMIES_OUT,
        f"every enemy player is out or has surrendered: {alliance} ({', '.join(winners)}) wins",
        winners,
    )
    if events is not None:
        events.append(Event(EventKind.GAME_OVER, outcome.message, side=alliance))
    return outcome


def dispose(
    state: NapoleonicState, sides: list[str], events: list[Event] | None, *, surrendered: bool
) -> NapoleonicState:
    """The units of players who left (option on_commander_loss): removed, left inert on
    the board, or passed to an ally still in the game. A surrendering commander's share of
    an army (10.6) passes to its co-commanders, the shared Guards with it."""
    loss = state.rules.commander_loss
    units = list(state.units)
    armies = {side: list(kinds) for side, kinds in state.armies}
    for side in sides:
        heirs = [c for c in state.commanders(side) if c != side] if surrendered else []
        if not heirs and loss == "army_passes_to_ally":
            heirs = list(state.allies(side))
        if heirs:
            heir = heirs[0]
            # A co-commander keeps the army's shared Guards; no one else inherits a Guards.
            keep_guards = heir in state.commanders(side)
            passed: list[Unit] = []
            for unit in units:
                if unit.side != side:
                    passed.append(unit)
                elif keep_guards or not state.stats(unit).is_commander:
                    passed.append(Unit(unit.id, heir, unit.kind, unit.cell))
                    armies[side].remove(unit.kind)  # the order of battle goes with it
                    armies[heir].append(unit.kind)
            units = passed
            _phase_event(events, f"{side_title(side)}'s units pass to {heir}.", heir)
        elif loss == "remove_army":
            units = [u for u in units if u.side != side]
            _phase_event(events, f"{side_title(side)}'s army leaves the field.", side)
    if sorted(units, key=lambda u: u.id) != list(state.units):
        state = state.with_units(
            sort_units(units),
            armies=tuple(
                (side, tuple(sorted(kinds, key=type_rank))) for side, kinds in armies.items()
            ),
        )
    return _withdraw(state)


def _withdraw(state: NapoleonicState) -> NapoleonicState:
    """The turn without what the players who left can no longer do (10.6): an army out of
    the game never acts, so its declared attacks and allocated supports are withdrawn
    (removed or inert alike; an army that passed to an ally keeps them, under its heir);
    and a support of a unit no longer under attack has no effect (7.2), so it goes too."""
    turn = state.turn
    units = state.by_id()

    def acts(unit_id: str) -> bool:
        unit = units.get(unit_id)
        return unit is not None and state.in_game(unit.side)

    attacks = tuple(
        (a, t) for a, t in turn.attacks if acts(a) and (t in units or t in turn.eliminated)
    )
    attacked = {t for _a, t in attacks}
    supports = tuple((s, t) for s, t in turn.supports if acts(s) and t in attacked and t in units)
    if (attacks, supports) == (turn.attacks, turn.supports):
        return state
    return state.evolve(turn=replace(turn, attacks=attacks, supports=supports))


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
    state = turn_opening(state)
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
        return state.turn.pending_players or (state.active,)
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
    return tuple(p for p in state.turn_order if p not in finished and state.in_game(p))


def end_phase(state: NapoleonicState, side: str, events: list[Event] | None) -> NapoleonicState:
    """`side` ends its part of the phase; the phase ends when nobody else has a part."""
    phase = state.phase
    if phase in ACTIVE_PHASES:
        waiting = _still_pending(state, side)
        if waiting is not None:
            _phase_event(events, f"{side_title(side)} ends its part of the {phase}.", side)
            return waiting
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
    return end_turn(state.evolve(turn=replace(state.turn, pending_players=())), events)


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


def _check_part(state: NapoleonicState, side: str, action: NapoleonicAction, what: str) -> None:
    """10.6: allies may only declare attacks in another's turn; with merged_side_turn an
    attack during movement waits until the other commanders have ended their movement."""
    if not state.turn.pending_players:
        return
    if (
        isinstance(action, _ACTIVE_KINDS)
        and not isinstance(action, Attack)
        and side not in state.acting()
    ):
        raise RuleError(
            Reason.WRONG_PHASE,
            f"{side} may only join {state.active}'s attacks, without moving (10.6); it "
            f"cannot {what} in {state.active}'s turn",
        )
    others = [p for p in state.turn.pending_players if p != side]
    if isinstance(action, Attack) and state.phase is Phase.MOVEMENT and others:
        who, several = _players_words(others)
        raise RuleError(
            Reason.WRONG_PHASE,
            f"{side} cannot declare an attack while {who} {'move' if several else 'moves'}: end "
            "the movement first (divided_command_turns = merged_side_turn)",
        )


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
            _check_part(state, side, action, what)
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

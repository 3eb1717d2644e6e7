"""`NapoleonicRuleset`: Napoleonic Chess behind the shared `Ruleset` interface.

Each phase of the turn (spec 6) is a set of small actions closed by `EndPhase`, so the
legal actions of any state stay few and every step is checked when it is made. Rulings
are options (section 14); scenarios are data (`scenarios.json`). The ruleset dispatches:
the start of a game is `start`'s, the turn protocol `phases`', each action's rule its
section's module (`movement`, `combat`, `terrain`, `deployment`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace

from engine_service.rules.base import (
    BoardDescription,
    Event,
    Outcome,
    OutcomeReason,
    PieceView,
    PositionStyle,
    Ruleset,
    ScenarioInfo,
    SideInfo,
)
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic import combat, deployment, movement, phases, terrain
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    BeginRedoubt,
    Commit,
    EndPhase,
    Move,
    NapoleonicAction,
    Place,
    Reveal,
    Seal,
    Support,
)
from engine_service.rules.napoleonic.consistency import check_state
from engine_service.rules.napoleonic.describe import describe_board
from engine_service.rules.napoleonic.events import attack_event, support_event
from engine_service.rules.napoleonic.legal import legal_actions
from engine_service.rules.napoleonic.notation import format_action, parse_action
from engine_service.rules.napoleonic.options import OPTION_SPECS, PRESETS
from engine_service.rules.napoleonic.position import turn_order_of
from engine_service.rules.napoleonic.scenarios import DEFAULT_PLAYERS, SCENARIOS, Scenario
from engine_service.rules.napoleonic.start import new_game, setup_text_of
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from engine_service.rules.options import Options, resolve_options

SECRET_PHASES = (Phase.DEPLOY_COMMIT, Phase.DEPLOY_REVEAL, Phase.DEPLOY_SEALED)


def scenario_sides(scenario: Scenario) -> tuple[SideInfo, ...]:
    """A scenario's players as sides, in turn order of the default options (10.6)."""
    return tuple(SideInfo(p.id, p.name, p.colour, p.alliance) for p in scenario.players)


def _completes_withheld(state: NapoleonicState, side: str) -> bool:
    """Whether `side`'s reveal or seal is the last one awaited (players out of the game
    are not, 10.6) while a server's copy of the state withholds another player's array:
    the arrays cannot be laid out from it (10.1)."""
    dep = state.deployment
    if dep is None or not dep.withheld:
        return False
    entries = dep.reveals if state.phase is Phase.DEPLOY_REVEAL else dep.sealed
    done = {player for player, _x in entries} | {side}
    return all(p.id in done for p in state.players if not p.out)


def _refuse_withheld(state: NapoleonicState) -> RuleError:
    assert state.deployment is not None
    withheld = " and ".join(sorted(state.deployment.withheld))
    return RuleError(
        Reason.INVALID_STATE,
        f"this copy of the state withholds {withheld}'s deployment, so the arrays cannot be "
        "laid out from it; send the whole state",
        field="state",
    )


def _noted(state: NapoleonicState, side: str) -> NapoleonicState:
    """`play` of the last reveal or seal on a copy that withholds arrays (the AI writing its
    line, say): the action is noted as withheld too, and nothing is laid out."""
    dep = state.deployment
    assert dep is not None
    if state.phase is Phase.DEPLOY_REVEAL:
        dep = replace(dep, reveals=(*dep.reveals, (side, ())))
    else:
        dep = replace(dep, sealed=(*dep.sealed, (side, b"")))
    return state.evolve(deployment=replace(dep, withheld=dep.withheld | {side}))


class NapoleonicRuleset(Ruleset[NapoleonicState, NapoleonicAction]):
    """Napoleonic Chess (Peter J Carroll, 2016), with its advanced scenarios (10.1-10.5)."""

    id = "napoleonic"
    title = "Napoleonic Chess"
    sides = (
        SideInfo("red", "Red", "#b22222"),
        SideInfo("black", "Black", "#202020"),
    )
    option_specs = OPTION_SPECS
    presets = PRESETS
    position_style = PositionStyle.SECTIONS

    def __init__(self, seal_key: bytes | None = None) -> None:
        super().__init__(seal_key)
        self._sealer = deployment.Sealer(seal_key) if seal_key else None

    # -- options and set-up ------------------------------------------------------------

    def read_options(self, given: Mapping[str, str], preset: str | None) -> Options:
        """Defaults < the scenario's values < the preset < `given` (scenarios are data)."""
        scenario = SCENARIOS.get(str(given.get("scenario", "standard")).strip())
        layered: dict[str, str] = {}
        if scenario is not None:
            preset_values = self.presets.get(preset or "", {})
            layered = {k: v for k, v in scenario.options.items() if k not in preset_values}
        layered.update(given)
        return resolve_options(self.option_specs, layered, presets=self.presets, preset=preset)

    def scenarios(self) -> tuple[ScenarioInfo, ...]:
        """Every scenario with its players (10.6), for lobbies."""
        return tuple(
            ScenarioInfo(s.id, s.title, s.description, scenario_sides(s))
            for s in SCENARIOS.values()
        )

    def sides_of(self, options: Options) -> tuple[SideInfo, ...]:
        """The players of the options' scenario, in its turn order (10.6)."""
        scenario = SCENARIOS[str(options["scenario"])]
        if scenario.players == DEFAULT_PLAYERS:
            return self.sides
        try:
            order = turn_order_of(options)
        except RuleError:
            order = scenario.player_ids
        by_id = {side.id: side for side in scenario_sides(scenario)}
        return tuple(by_id[side] for side in order)

    def players_of(self, state: NapoleonicState) -> tuple[str, ...]:
        """The players of this game (2 to 8, 10.6)."""
        return tuple(p.id for p in state.players)

    def remaining(self, state: NapoleonicState) -> tuple[str, ...]:
        """The players still in the game (not out, not surrendered)."""
        return tuple(p.id for p in state.players if not p.out)

    def surrender(
        self, state: NapoleonicState, side: str, reason: OutcomeReason
    ) -> NapoleonicState | None:
        """10.6: in a game of more than two players one player may surrender alone; its
        allies play on, and the game ends when one alliance is left."""
        if not state.multiplayer():
            return None
        player = state.player(side)
        if player is None or player.out:
            raise RuleError(Reason.ILLEGAL_ACTION, f"{side} is already out of the game")
        state = phases.surrender(state, side)
        if state.outcome is None and state.deployment is not None:
            state = deployment.after_leaving(state, self._sealer)
        return state

    def new_game(
        self, options: Options, setup: str | None = None, *, checked: bool = True
    ) -> NapoleonicState:
        """The initial state of the options' scenario, or of a set-up text."""
        return new_game(options, setup, self._sealer, checked=checked)

    def options_of(self, state: NapoleonicState) -> Options:
        """The options a state was created with."""
        return state.options

    def setup_text(self, state: NapoleonicState) -> str:
        """The whole position as set-up text (board, units with ids, armies, terrain)."""
        return setup_text_of(state)

    # -- play ------------------------------------------------------------------------

    def to_act(self, state: NapoleonicState) -> tuple[str, ...]:
        """The players that may act: the active player, the defenders, or the deployers."""
        return phases.to_act(state)

    def legal_actions(self, state: NapoleonicState) -> list[NapoleonicAction]:
        """Every listable legal action (secret deployments are not listed: see
        `random_action`)."""
        return legal_actions(state)

    def random_action(self, state: NapoleonicState, rng: random.Random) -> NapoleonicAction | None:
        """A random legal action; secret deployments get random (revealable) arrays."""
        if state.outcome is None and state.phase in SECRET_PHASES:
            return deployment.random_deployment(state, rng.choice(self.to_act(state)), rng)
        return super().random_action(state, rng)

    def check_turn(self, state: NapoleonicState, side: str, action: NapoleonicAction) -> None:
        """NOT_YOUR_TURN or WRONG_PHASE (T24, T25) when `side` may not send `action` now."""
        if action.side != side:
            raise RuleError(Reason.NOT_YOUR_TURN, f"{side} cannot act for {action.side}")
        phases.check_turn(state, action)

    def apply(
        self, state: NapoleonicState, action: NapoleonicAction
    ) -> tuple[NapoleonicState, list[Event]]:
        """Check an action against every rule and return the new state and its events."""
        self.require_ongoing(state)
        phases.check_turn(state, action)
        events: list[Event] = []
        if isinstance(action, Move):
            unit, dest = movement.check_move(state, action)
            return movement.apply_move(state, unit, dest, events), events
        if isinstance(action, Attack):
            attacker, target = combat.check_attack(state, action)
            event = attack_event(state, attacker, target)
            return phases.declare_attack(state, action, events, event), events
        if isinstance(action, Support):
            supporter, supported = combat.check_support(state, action)
            events.append(support_event(state, supporter, supported))
            return combat.allocate(state, action), events
        if isinstance(action, Advance):
            unit, dest, index = combat.check_advance(state, action)
            return combat.apply_advance(state, unit, dest, index, events), events
        if isinstance(action, EndPhase):
            return phases.end_phase(state, action.side, events), events
        if isinstance(action, BeginRedoubt):
            cell = terrain.check_begin_redoubt(state, action.side, action.cell)
            ground, event = terrain.begin_redoubt(state, action.side, cell)
            events.append(event)
            return state.evolve(terrain=ground), events
        return self._deploy(state, action, events, checked=True), events

    def play(self, state: NapoleonicState, action: NapoleonicAction) -> NapoleonicState:
        """The state after an action known to be legal (no checks, no events)."""
        if isinstance(action, Move):
            unit = state.by_id()[action.unit]
            return movement.apply_move(state, unit, state.geo.index[action.to], None)
        if isinstance(action, Attack):
            return phases.declare_attack(state, action, None, None)
        if isinstance(action, Support):
            return combat.allocate(state, action)
        if isinstance(action, Advance):
            unit = state.by_id()[action.unit]
            dest = state.geo.index[action.to]
            index = next(i for i, v in enumerate(state.turn.vacancies) if v.cell == dest)
            return combat.apply_advance(state, unit, dest, index, None)
        if isinstance(action, EndPhase):
            return phases.end_phase(state, action.side, None)
        if isinstance(action, BeginRedoubt):
            ground, _event = terrain.begin_redoubt(state, action.side, state.geo.index[action.cell])
            return state.evolve(terrain=ground)
        return self._deploy(state, action, [], checked=False)

    def _deploy(
        self,
        state: NapoleonicState,
        action: NapoleonicAction,
        events: list[Event],
        *,
        checked: bool,
    ) -> NapoleonicState:
        if isinstance(action, Reveal | Seal) and _completes_withheld(state, action.side):
            if checked:
                raise _refuse_withheld(state)
            return _noted(state, action.side)
        if isinstance(action, Commit):
            return deployment.apply_commit(state, action.side, action.digest, events)
        if isinstance(action, Reveal):
            return deployment.apply_reveal(
                state, action.side, action.placements, action.salt, events
            )
        if isinstance(action, Seal):
            if self._sealer is None:
                raise RuleError(
                    Reason.SEAL_KEY_UNAVAILABLE,
                    "the sealed Attack at Dawn needs the engine's seal key, which this engine "
                    "has not been given",
                )
            return deployment.apply_seal(
                state, self._sealer, action.side, action.placements, events
            )
        if isinstance(action, Place):
            if checked:
                cell = deployment.check_place(state, action.side, action.kind, action.cell)
            else:
                cell = state.geo.index[action.cell]
            return deployment.apply_place(state, action.side, action.kind, cell, events)
        raise RuleError(Reason.ILLEGAL_ACTION, f"{action!r} is no Napoleonic Chess action")

    def actor(self, state: NapoleonicState, action: NapoleonicAction) -> str:
        """The player that performs `action` (every action names it)."""
        return action.side

    def outcome(self, state: NapoleonicState) -> Outcome | None:
        """How the game ended by the rules, or None while it goes on."""
        return state.outcome

    # -- notation --------------------------------------------------------------------

    def format_action(self, state: NapoleonicState, action: NapoleonicAction) -> str:
        """The action's notation ('move c2-d4', 'attack d4>e5', 'end', ...)."""
        return format_action(state, action)

    def public_notation(self, state: NapoleonicState, action: NapoleonicAction) -> str | None:
        """What the opponent may see before the arrays are laid out (10.1): no squares, no salt."""
        if isinstance(action, Seal):
            return "seal (array hidden until both are in)"
        if isinstance(action, Reveal):
            return "reveal (array hidden until both are revealed)"
        return None

    def parse_action(
        self, state: NapoleonicState, text: str, side: str | None = None
    ) -> NapoleonicAction:
        """The action `text` names for `side` (default: the one player to act)."""
        if side is None:
            to_act = self.to_act(state)
            if len(to_act) != 1:
                raise RuleError(
                    Reason.NOTATION_AMBIGUOUS,
                    f"say which player acts: {' and '.join(to_act) or 'nobody'} may act now",
                )
            side = to_act[0]
        return parse_action(state, text, side)

    # -- inspection ------------------------------------------------------------------

    def check_state(self, state: NapoleonicState) -> list[str]:
        """Every inconsistency of a state that could not arise in play."""
        return check_state(state, self._sealer)

    def pieces(self, state: NapoleonicState) -> list[PieceView]:
        """The units, with tags for what they did this turn."""
        turn = state.turn
        attackers = {a for a, _t in turn.attacks}
        targets = {t for _a, t in turn.attacks}
        supporters = {s for s, _t in turn.supports}
        names = state.geo.names
        views: list[PieceView] = []
        for unit in sorted(state.units, key=lambda u: u.cell):
            tags = tuple(
                tag
                for tag, on in (
                    ("moved", unit.id in turn.moved),
                    ("attacking", unit.id in attackers),
                    ("under_attack", unit.id in targets),
                    ("supporting", unit.id in supporters),
                    ("commander", state.stats(unit).is_commander),
                )
                if on
            )
            views.append(PieceView(unit.kind, unit.side, names[unit.cell], unit.id, False, tags))
        return views

    def describe(self, options: Options) -> BoardDescription:
        """The scenario's board, terrain, unit types and rules summary."""
        return describe_board(self.title, self.sides_of(options), options)

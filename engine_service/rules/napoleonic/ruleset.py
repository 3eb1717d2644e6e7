"""`NapoleonicRuleset`: Napoleonic Chess behind the shared `Ruleset` interface.

Each phase of the turn (spec 6) is a set of small actions closed by `EndPhase`, so the
legal actions of any state stay few and every step is checked when it is made. Rulings
are options (section 14); scenarios are data (`scenarios.json`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping

from engine_service.rules.base import (
    BoardDescription,
    Event,
    EventKind,
    Outcome,
    PieceView,
    Ruleset,
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
from engine_service.rules.napoleonic.board import geometry
from engine_service.rules.napoleonic.consistency import check_state, deployment_mode
from engine_service.rules.napoleonic.describe import describe_board
from engine_service.rules.napoleonic.endings import position_key
from engine_service.rules.napoleonic.notation import format_action, parse_action
from engine_service.rules.napoleonic.options import OPTION_SPECS, PRESETS, rules_of
from engine_service.rules.napoleonic.pieces import type_rank
from engine_service.rules.napoleonic.scenarios import SCENARIOS, SIDES, Scenario
from engine_service.rules.napoleonic.setup import (
    ArrayError,
    Position,
    array_problems,
    format_setup_text,
    parse_array,
    parse_setup_text,
)
from engine_service.rules.napoleonic.state import (
    ACTIVE_PHASES,
    DEPLOY_PHASES,
    Construction,
    Deployment,
    NapoleonicState,
    Phase,
    Player,
    Terrain,
    Unit,
    sort_units,
)
from engine_service.rules.napoleonic.words import side_title
from engine_service.rules.options import Options, resolve_options

RANDOM_SEEDS = 1000  # random players' commitments are derived from a seed below this
_PHASES_OF: dict[type, tuple[Phase, ...]] = {
    Move: (Phase.MOVEMENT,),
    Attack: (Phase.MOVEMENT, Phase.ATTACK_DECLARATION),
    BeginRedoubt: ACTIVE_PHASES,
    Advance: (Phase.ADVANCE,),
    Support: (Phase.DEFENCE,),
    EndPhase: (*ACTIVE_PHASES, Phase.DEFENCE),
    Commit: (Phase.DEPLOY_COMMIT,),
    Reveal: (Phase.DEPLOY_REVEAL,),
    Seal: (Phase.DEPLOY_SEALED,),
    Place: (Phase.PLACEMENT,),
}
_ACTIVE_KINDS = (Move, Attack, Advance, BeginRedoubt)
_WHAT = {
    Move: "move",
    Attack: "declare an attack",
    Advance: "advance",
    BeginRedoubt: "begin a redoubt",
    Support: "allocate a support",
    EndPhase: "end a phase",
    Commit: "commit a deployment",
    Reveal: "reveal a deployment",
    Seal: "seal a deployment",
    Place: "place a unit",
}


def random_player_array(
    state: NapoleonicState, side: str, seed: int
) -> tuple[tuple[tuple[str, str], ...], bytes]:
    """The array and salt a random player derives from a small seed (so it can reveal)."""
    rng = random.Random(f"napoleonic random deployment {side} {seed}")
    placements = deployment.random_placements(state, side, rng)
    salt = hashlib.sha256(f"napoleonic random salt {side} {seed}".encode()).digest()
    return placements, salt


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

    def __init__(self, seal_key: bytes | None = None) -> None:
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

    def new_game(self, options: Options, setup: str | None = None) -> NapoleonicState:
        """The initial state of the options' scenario, or of a set-up text."""
        scenario = SCENARIOS[str(options["scenario"])]
        rules = rules_of(options)
        players = tuple(Player(side, side) for side in SIDES)
        turn_order = self._turn_order(options)
        mode = str(options["deployment"])
        if setup:
            position = parse_setup_text(setup)
            geo = geometry(position.width, position.height)
            units, armies, ground = self._position(position, geo.index)
        else:
            geo = geometry(scenario.width, scenario.height)
            armies = dict(scenario.armies)
            ground = self._scenario_terrain(scenario, geo.index)
            units = []
        state = NapoleonicState(
            options=options,
            rules=rules,
            geo=geo,
            scenario=scenario.id,
            width=geo.width,
            height=geo.height,
            players=players,
            turn_order=turn_order,
            armies=tuple((p.id, armies.get(p.id, ())) for p in players),
            units=sort_units(units),
            terrain=ground,
            phase=Phase.MOVEMENT,
            active=turn_order[0],
        )
        self._check_rows(state, options)
        if mode == "fixed":
            if not setup:
                state = state.with_units(self._fixed_array(state, scenario, options))
            elif not units:
                raise RuleError(
                    Reason.INVALID_SETUP,
                    "set-up: a fixed deployment needs units on the board",
                    field="setup",
                )
        else:
            if units:
                raise RuleError(
                    Reason.INVALID_SETUP,
                    f"set-up: with deployment {mode} the armies deploy in play, so the set-up "
                    "must have no units (give 'army <side>: ...' instead)",
                    field="setup",
                )
            state = self._deployment_start(state, options)
        problems = check_state(state, self._sealer)
        if problems:
            raise RuleError(Reason.INVALID_SETUP, "set-up: " + "; ".join(problems), field="setup")
        if rules.repetition and state.phase is Phase.MOVEMENT:
            state = state.evolve(position_history=(position_key(state),))
        return state

    @staticmethod
    def _turn_order(options: Options) -> tuple[str, ...]:
        first = str(options["first_player"])
        text = str(options["turn_order"])
        if text == "alternate_alliances":
            return (first, *(side for side in SIDES if side != first))
        order = tuple(p.strip() for p in text.split(","))
        if order[0] != first:
            raise RuleError(
                Reason.INVALID_OPTION_VALUE,
                f"option turn_order: {text!r} starts with {order[0]} but first_player is "
                f"{first}; allowed: a turn order that starts with first_player",
                field="options.turn_order",
            )
        return order

    @staticmethod
    def _scenario_terrain(scenario: Scenario, index: Mapping[str, int]) -> Terrain:
        try:
            return Terrain(
                hills=frozenset(index[s] for s in scenario.hills),
                redoubts=tuple(sorted((index[s], o) for s, o in scenario.redoubts)),
                obstacles=frozenset(
                    (min(index[a], index[b]), max(index[a], index[b]))
                    for a, b in scenario.obstacles
                ),
            )
        except KeyError as error:
            raise RuleError(
                Reason.INVALID_SETUP, f"scenario {scenario.id}: unknown square {error}"
            ) from None

    @staticmethod
    def _position(
        position: Position, index: Mapping[str, int]
    ) -> tuple[list[Unit], dict[str, tuple[str, ...]], Terrain]:
        def cell(square: str) -> int:
            """The cell of a square of the set-up, or INVALID_SETUP."""
            if square not in index:
                raise RuleError(
                    Reason.INVALID_SETUP,
                    f"set-up: {square} is not a square of the {position.width}x{position.height} "
                    "board",
                    field="setup",
                )
            return index[square]

        units = [Unit(uid, side, kind, cell(square)) for uid, side, kind, square in position.units]
        armies: dict[str, tuple[str, ...]] = {}
        for side in SIDES:
            if side in position.armies:
                armies[side] = position.armies[side]
            else:
                armies[side] = tuple(
                    sorted((u.kind for u in units if u.side == side), key=type_rank)
                )
        obstacles: set[tuple[int, int]] = set()
        for a, b in position.obstacles:
            ca, cb = cell(a), cell(b)
            obstacles.add((min(ca, cb), max(ca, cb)))
        ground = Terrain(
            hills=frozenset(cell(s) for s in position.hills),
            redoubts=tuple(sorted((cell(s), owner) for s, owner in position.redoubts)),
            constructions=tuple(
                sorted(
                    (Construction(cell(s), b, t, u) for s, b, t, u in position.sites),
                    key=lambda c: c.cell,
                )
            ),
            obstacles=frozenset(obstacles),
        )
        return units, armies, ground

    @staticmethod
    def _check_rows(state: NapoleonicState, options: Options) -> None:
        _low, high = state.rules.rows
        if 2 * high > state.height:
            raise RuleError(
                Reason.INVALID_OPTION_VALUE,
                f"option deployment_rows: {options['deployment_rows']!r} does not fit a board "
                f"{state.height} ranks high (both sides' rows must be on the board and apart); "
                "allowed: a row range N-M counted from each side's edge, e.g. 2-3",
                field="options.deployment_rows",
            )

    def _fixed_array(
        self, state: NapoleonicState, scenario: Scenario, options: Options
    ) -> tuple[Unit, ...]:
        """The units of the `setup` option: a named array of the scenario or a custom one."""
        value = str(options["setup"]).strip()
        if value in scenario.setups:
            arrays = dict(scenario.setups[value].arrays)
        elif ":" in value:
            arrays = {}
            for part in value.split(";"):
                head, _sep, body = part.partition(":")
                side = head.strip()
                if side not in SIDES or side in arrays:
                    raise self._setup_option_error(
                        scenario, f"{side!r} is not a side given once (red, black)"
                    )
                arrays[side] = body
        else:
            raise self._setup_option_error(scenario, f"{value!r} is no set-up of the scenario")
        units: list[Unit] = []
        for side in SIDES:
            try:
                items = parse_array(arrays.get(side, ""))
            except ArrayError as error:
                raise self._setup_option_error(scenario, f"{side}: {error}") from None
            placements = [(item.square, item.kind) for item in items]
            problems = array_problems(
                state.geo,
                placements,
                deployment.deployment_cells(state, side),
                state.army(side),
                side,
            )
            if problems:
                raise self._setup_option_error(scenario, "; ".join(problems))
            auto = deployment.units_of_array(state, side, tuple(placements))
            for item, default in zip(items, auto, strict=True):
                units.append(Unit(item.id or default.id, side, item.kind, default.cell))
        return sort_units(units)

    @staticmethod
    def _setup_option_error(scenario: Scenario, why: str) -> RuleError:
        names = ", ".join(scenario.setups) or "none"
        return RuleError(
            Reason.INVALID_OPTION_VALUE,
            f"option setup: {why}; allowed: a set-up of scenario {scenario.id} ({names}) or a "
            "custom array 'red: a2=A ...; black: ...' of each army on its deployment rows",
            field="options.setup",
        )

    def _deployment_start(self, state: NapoleonicState, options: Options) -> NapoleonicState:
        mode = deployment_mode(state)
        if mode == "sealed":
            if self._sealer is None:
                raise RuleError(
                    Reason.SEAL_KEY_UNAVAILABLE,
                    "option attack_at_dawn_mode: sealed needs the engine's seal key and this "
                    "engine has none; use commit_reveal",
                    field="options.attack_at_dawn_mode",
                )
            return state.evolve(phase=Phase.DEPLOY_SEALED, deployment=Deployment("sealed"))
        if mode == "commit_reveal":
            return state.evolve(phase=Phase.DEPLOY_COMMIT, deployment=Deployment("commit_reveal"))
        placer = str(options["first_placer"])
        first = state.turn_order[0] if placer == "first_player" else placer
        return state.evolve(
            phase=Phase.PLACEMENT, deployment=Deployment("marching_orders", next_placer=first)
        )

    def options_of(self, state: NapoleonicState) -> Options:
        """The options a state was created with."""
        return state.options

    def setup_text(self, state: NapoleonicState) -> str:
        """The whole position as set-up text (board, units with ids, armies, terrain)."""
        ground = state.terrain
        return format_setup_text(
            state.geo,
            players=[p.id for p in state.players],
            units=((u.id, u.side, u.kind, u.cell) for u in state.units),
            armies=dict(state.armies),
            hills=ground.hills,
            redoubts=ground.redoubts,
            sites=((c.cell, c.builder, c.turns_done, c.unit) for c in ground.constructions),
            obstacles=ground.obstacles,
        )

    # -- play ------------------------------------------------------------------------

    def to_act(self, state: NapoleonicState) -> tuple[str, ...]:
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

    def legal_actions(self, state: NapoleonicState) -> list[NapoleonicAction]:
        """Every listable legal action (secret deployments are not listed: see
        `random_action`)."""
        if state.outcome is not None:
            return []
        phase = state.phase
        side = state.active
        actions: list[NapoleonicAction] = []
        names = state.geo.names
        if phase is Phase.MOVEMENT:
            for unit in state.units:
                if unit.side == side:
                    actions += [
                        Move(side, unit.id, names[c]) for c in movement.destinations(state, unit)
                    ]
        if phase in (Phase.MOVEMENT, Phase.ATTACK_DECLARATION):
            actions += combat.legal_attacks(state, side)
        if phase is Phase.ADVANCE:
            actions += combat.legal_advances(state, side)
        if phase in ACTIVE_PHASES:
            actions += self._legal_redoubts(state, side)
            actions.append(EndPhase(side))
        elif phase is Phase.DEFENCE:
            for defender in state.turn.pending_defenders:
                actions += combat.legal_supports(state, defender)
                actions.append(EndPhase(defender))
        elif phase is Phase.PLACEMENT and state.deployment is not None:
            placer = state.deployment.next_placer
            actions += [
                Place(placer, kind, names[cell])
                for kind, cell in deployment.legal_placements(state, placer)
            ]
        return actions

    @staticmethod
    def _legal_redoubts(state: NapoleonicState, side: str) -> list[NapoleonicAction]:
        rules = state.rules
        if rules.redoubt_build_turns == 0:
            return []
        ground = state.terrain
        if rules.max_sites and sum(1 for c in ground.constructions if c.builder == side) >= (
            rules.max_sites
        ):
            return []
        names = state.geo.names
        return [
            BeginRedoubt(side, names[u.cell])
            for u in sorted(state.units, key=lambda u: u.cell)
            if u.side == side and u.cell not in ground.redoubt_owner and u.cell not in ground.sites
        ]

    def random_action(self, state: NapoleonicState, rng: random.Random) -> NapoleonicAction | None:
        """A random legal action; secret deployments get random (revealable) arrays."""
        phase = state.phase
        if state.outcome is None and phase in (
            Phase.DEPLOY_COMMIT,
            Phase.DEPLOY_REVEAL,
            Phase.DEPLOY_SEALED,
        ):
            side = rng.choice(self.to_act(state))
            if phase is Phase.DEPLOY_SEALED:
                return Seal(side, deployment.random_placements(state, side, rng))
            if phase is Phase.DEPLOY_COMMIT:
                placements, salt = random_player_array(state, side, rng.randrange(RANDOM_SEEDS))
                return Commit(side, deployment.commitment(placements, salt))
            assert state.deployment is not None
            committed = dict(state.deployment.commitments)[side]
            for seed in range(RANDOM_SEEDS):
                placements, salt = random_player_array(state, side, seed)
                if deployment.commitment(placements, salt) == committed:
                    return Reveal(side, placements, salt)
            return Reveal(side, deployment.random_placements(state, side, rng), rng.randbytes(32))
        return super().random_action(state, rng)

    def check_turn(self, state: NapoleonicState, side: str, action: NapoleonicAction) -> None:
        """NOT_YOUR_TURN or WRONG_PHASE (T24, T25) when `side` may not send `action` now."""
        if action.side != side:
            raise RuleError(Reason.NOT_YOUR_TURN, f"{side} cannot act for {action.side}")
        self._check_turn(state, action)

    def _check_turn(self, state: NapoleonicState, action: NapoleonicAction) -> None:
        """NOT_YOUR_TURN, WRONG_PHASE or ALREADY_DEPLOYED when the sender may not act now."""
        side = action.side
        players = [p.id for p in state.players]
        if side not in players:
            raise RuleError(
                Reason.NOT_YOUR_TURN, f"{side!r} is no player; players: {', '.join(players)}"
            )
        kind = type(action)
        what = _WHAT[kind]
        to_act = self.to_act(state)
        if state.phase in _PHASES_OF[kind]:
            if side in to_act:
                return
            if state.phase in DEPLOY_PHASES and state.phase is not Phase.PLACEMENT:
                raise RuleError(
                    Reason.ALREADY_DEPLOYED,
                    f"{side} has already done its part of this deployment phase",
                )
            raise RuleError(
                Reason.NOT_YOUR_TURN,
                f"{side} cannot {what} now: {' and '.join(to_act) or 'nobody'} to act",
            )
        phase_words = str(state.phase).replace("_", " ")
        own_turn = side == state.active and state.phase not in DEPLOY_PHASES
        if (
            (isinstance(action, _ACTIVE_KINDS) and own_turn)
            or (isinstance(action, Support) and side != state.active)
            or isinstance(action, Commit | Reveal | Seal | Place)
            or (isinstance(action, EndPhase) and side in to_act)
        ):
            hint = ""
            if isinstance(action, Move) and state.phase is not Phase.MOVEMENT:
                hint = " (movement ends when attacks are declared, 6)"
            raise RuleError(
                Reason.WRONG_PHASE,
                f"{side} cannot {what} in the {phase_words} phase{hint}",
            )
        raise RuleError(
            Reason.NOT_YOUR_TURN,
            f"{side} cannot {what} now: it is {state.active}'s turn ({phase_words})",
        )

    def apply(
        self, state: NapoleonicState, action: NapoleonicAction
    ) -> tuple[NapoleonicState, list[Event]]:
        """Check an action against every rule and return the new state and its events."""
        if state.outcome is not None:
            raise RuleError(Reason.GAME_OVER, f"the game is over: {state.outcome.message}")
        self._check_turn(state, action)
        events: list[Event] = []
        if isinstance(action, Move):
            unit, dest = movement.check_move(state, action)
            return movement.apply_move(state, unit, dest, events), events
        if isinstance(action, Attack):
            attacker, target = combat.check_attack(state, action)
            return self._declare(
                state, action, events, combat.attack_event(state, attacker, target)
            ), events
        if isinstance(action, Support):
            supporter, supported = combat.check_support(state, action)
            events.append(combat.support_event(state, supporter, supported))
            return self._allocate(state, action), events
        if isinstance(action, Advance):
            unit, dest, index = combat.check_advance(state, action)
            return combat.apply_advance(state, unit, dest, index, events), events
        if isinstance(action, EndPhase):
            return self._end_phase(state, action.side, events), events
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
            return self._declare(state, action, None, None)
        if isinstance(action, Support):
            return self._allocate(state, action)
        if isinstance(action, Advance):
            unit = state.by_id()[action.unit]
            dest = state.geo.index[action.to]
            index = next(i for i, v in enumerate(state.turn.vacancies) if v.cell == dest)
            return combat.apply_advance(state, unit, dest, index, None)
        if isinstance(action, EndPhase):
            return self._end_phase(state, action.side, None)
        if isinstance(action, BeginRedoubt):
            ground, _event = terrain.begin_redoubt(state, action.side, state.geo.index[action.cell])
            return state.evolve(terrain=ground)
        return self._deploy(state, action, [], checked=False)

    @staticmethod
    def _declare(
        state: NapoleonicState, action: Attack, events: list[Event] | None, event: Event | None
    ) -> NapoleonicState:
        if state.phase is Phase.MOVEMENT:
            state = phases.end_movement(state, events)  # an attack ends movement (6, T25)
        if events is not None and event is not None:
            events.append(event)
        turn = state.turn
        return state.evolve(
            turn=type(turn)(
                moved=turn.moved,
                origins=turn.origins,
                entered_elevation=turn.entered_elevation,
                attacks=(*turn.attacks, (action.attacker, action.target)),
                supports=turn.supports,
                pending_defenders=turn.pending_defenders,
                eliminated=turn.eliminated,
                vacancies=turn.vacancies,
            )
        )

    @staticmethod
    def _allocate(state: NapoleonicState, action: Support) -> NapoleonicState:
        turn = state.turn
        return state.evolve(
            turn=type(turn)(
                moved=turn.moved,
                origins=turn.origins,
                entered_elevation=turn.entered_elevation,
                attacks=turn.attacks,
                supports=(*turn.supports, (action.supporter, action.supported)),
                pending_defenders=turn.pending_defenders,
                eliminated=turn.eliminated,
                vacancies=turn.vacancies,
            )
        )

    @staticmethod
    def _end_phase(
        state: NapoleonicState, side: str, events: list[Event] | None
    ) -> NapoleonicState:
        phase = state.phase
        if phase is Phase.MOVEMENT:
            return phases.end_movement(state, events)
        if phase is Phase.ATTACK_DECLARATION:
            return phases.end_declaration(state, events)
        if phase is Phase.DEFENCE:
            return phases.end_defence(state, side, events)
        if events is not None:
            events.append(
                Event(
                    EventKind.PHASE_CHANGED,
                    f"{side_title(side)}'s advance phase ends.",
                    side=side,
                )
            )
        return phases.end_turn(state, events)

    def _deploy(
        self,
        state: NapoleonicState,
        action: NapoleonicAction,
        events: list[Event],
        *,
        checked: bool,
    ) -> NapoleonicState:
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
        return describe_board(self.title, self.sides, options)

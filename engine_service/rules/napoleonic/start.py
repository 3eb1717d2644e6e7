"""The start of a game (spec 5, 10.1-10.5): the initial state from the options, or from a
set-up text, and a state's set-up text (`new_game` and `setup_text` of the ruleset).

A scenario (data, `scenarios.json`) gives the board, the terrain and the armies; the
`deployment` option decides how the armies come onto it: a fixed array (the `setup`
option: a named array of the scenario or a custom one), or a deployment phase played out
(`deployment.py`). The set-up text format is `setup.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic import deployment
from engine_service.rules.napoleonic.board import geometry
from engine_service.rules.napoleonic.consistency import check_state, deployment_mode
from engine_service.rules.napoleonic.deployment import Sealer
from engine_service.rules.napoleonic.options import rules_of
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
    Construction,
    Deployment,
    NapoleonicState,
    Phase,
    Player,
    Terrain,
    Unit,
    position_key,
    sort_units,
)
from engine_service.rules.options import Options
from wargame.runtime.quoting import quoted


def new_game(options: Options, setup: str | None, sealer: Sealer | None) -> NapoleonicState:
    """The initial state of the options' scenario, or of a set-up text."""
    scenario = SCENARIOS[str(options["scenario"])]
    rules = rules_of(options)
    players = tuple(Player(side, side) for side in SIDES)
    turn_order = _turn_order(options)
    mode = str(options["deployment"])
    if setup:
        position = parse_setup_text(setup)
        geo = geometry(position.width, position.height)
        units, armies, ground = _position(position, geo.index)
    else:
        geo = geometry(scenario.width, scenario.height)
        armies = dict(scenario.armies)
        ground = _scenario_terrain(scenario, geo.index)
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
    _check_rows(state, options)
    if mode == "fixed":
        if not setup:
            state = state.with_units(_fixed_array(state, scenario, options))
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
        state = _deployment_start(state, options, sealer)
    problems = check_state(state, sealer)
    if problems:
        raise RuleError(Reason.INVALID_SETUP, "set-up: " + "; ".join(problems), field="setup")
    if rules.repetition and state.phase is Phase.MOVEMENT:
        state = state.evolve(position_history=(position_key(state),))
    return state


def _turn_order(options: Options) -> tuple[str, ...]:
    first = str(options["first_player"])
    text = str(options["turn_order"])
    if text == "alternate_alliances":
        return (first, *(side for side in SIDES if side != first))
    order = tuple(p.strip() for p in text.split(","))
    if order[0] != first:
        raise RuleError(
            Reason.INVALID_OPTION_VALUE,
            f"option turn_order: {quoted(text)} starts with {order[0]} but first_player is "
            f"{first}; allowed: a turn order that starts with first_player",
            field="options.turn_order",
        )
    return order


def _scenario_terrain(scenario: Scenario, index: Mapping[str, int]) -> Terrain:
    try:
        return Terrain(
            hills=frozenset(index[s] for s in scenario.hills),
            redoubts=tuple(sorted((index[s], o) for s, o in scenario.redoubts)),
            obstacles=frozenset(
                (min(index[a], index[b]), max(index[a], index[b])) for a, b in scenario.obstacles
            ),
        )
    except KeyError as error:
        raise RuleError(
            Reason.INVALID_SETUP, f"scenario {scenario.id}: unknown square {error}"
        ) from None


def _position(
    position: Position, index: Mapping[str, int]
) -> tuple[list[Unit], dict[str, tuple[str, ...]], Terrain]:
    def cell(square: str) -> int:
        """The cell of a square of the set-up, or INVALID_SETUP."""
        if square not in index:
            raise RuleError(
                Reason.INVALID_SETUP,
                f"set-up: {square} is not a square of the {position.width}x{position.height} board",
                field="setup",
            )
        return index[square]

    units = [Unit(uid, side, kind, cell(square)) for uid, side, kind, square in position.units]
    armies: dict[str, tuple[str, ...]] = {}
    for side in SIDES:
        if side in position.armies:
            armies[side] = position.armies[side]
        else:
            armies[side] = tuple(sorted((u.kind for u in units if u.side == side), key=type_rank))
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


def _check_rows(state: NapoleonicState, options: Options) -> None:
    _low, high = state.rules.rows
    if 2 * high > state.height:
        raise RuleError(
            Reason.INVALID_OPTION_VALUE,
            f"option deployment_rows: {quoted(options['deployment_rows'])} does not fit a board "
            f"{state.height} ranks high (both sides' rows must be on the board and apart); "
            "allowed: a row range N-M counted from each side's edge, e.g. 2-3",
            field="options.deployment_rows",
        )


def _fixed_array(state: NapoleonicState, scenario: Scenario, options: Options) -> tuple[Unit, ...]:
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
                raise _setup_option_error(
                    scenario, f"{quoted(side)} is not a side given once (red, black)"
                )
            arrays[side] = body
    else:
        raise _setup_option_error(scenario, f"{quoted(value)} is no set-up of the scenario")
    units: list[Unit] = []
    for side in SIDES:
        try:
            items = parse_array(arrays.get(side, ""))
        except ArrayError as error:
            raise _setup_option_error(scenario, f"{side}: {error}") from None
        placements = [(item.square, item.kind) for item in items]
        problems = array_problems(
            state.geo,
            placements,
            deployment.deployment_cells(state, side),
            state.army(side),
            side,
        )
        if problems:
            raise _setup_option_error(scenario, "; ".join(problems))
        auto = deployment.units_of_array(state, side, tuple(placements))
        for item, default in zip(items, auto, strict=True):
            units.append(Unit(item.id or default.id, side, item.kind, default.cell))
    return sort_units(units)


def _setup_option_error(scenario: Scenario, why: str) -> RuleError:
    names = ", ".join(scenario.setups) or "none"
    return RuleError(
        Reason.INVALID_OPTION_VALUE,
        f"option setup: {why}; allowed: a set-up of scenario {scenario.id} ({names}) or a "
        "custom array 'red: a2=A ...; black: ...' of each army on its deployment rows",
        field="options.setup",
    )


def _deployment_start(
    state: NapoleonicState, options: Options, sealer: Sealer | None
) -> NapoleonicState:
    mode = deployment_mode(state)
    if mode == "sealed":
        if sealer is None:
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


def setup_text_of(state: NapoleonicState) -> str:
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

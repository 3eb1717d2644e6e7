"""The start of a game (spec 5, 10.1-10.5): the initial state from the options, or from a
set-up text, and a state's set-up text (`new_game` and `setup_text` of the ruleset). A
set-up text with a `turn` section writes a game in progress (`position.py`) and is read as
the state it writes.

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
from engine_service.rules.napoleonic.position import (
    is_position,
    position_parts,
    read_position,
    scenario_players,
    turn_order_of,
    write_position,
)
from engine_service.rules.napoleonic.scenarios import SCENARIOS, Scenario
from engine_service.rules.napoleonic.setup import (
    ArrayError,
    array_problems,
    item_id,
    parse_array,
    parse_setup_text,
)
from engine_service.rules.napoleonic.state import (
    Deployment,
    NapoleonicState,
    Phase,
    Terrain,
    Unit,
    position_key,
    sort_units,
    turn_opening,
)
from engine_service.rules.options import Options
from wargame.runtime.quoting import quoted


def new_game(
    options: Options, setup: str | None, sealer: Sealer | None, *, checked: bool = True
) -> NapoleonicState:
    """The initial state of the options' scenario, or of a set-up text (a whole position
    text is checked by `check_state` unless `checked` is False)."""
    scenario = SCENARIOS[str(options["scenario"])]
    rules = rules_of(options)
    if setup and is_position(setup):
        state = read_position(options, setup, sealer, checked=checked)
        _check_rows(state, options)
        return state
    players = scenario_players(options)
    turn_order = turn_order_of(options, players)
    mode = str(options["deployment"])
    if setup:
        position = parse_setup_text(setup)
        geo = geometry(position.width, position.height)
        units, armies, ground = position_parts(position, geo.index)
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
        _check_room(state, options)
        state = _deployment_start(state, options, sealer)
    problems = check_state(state, sealer)
    if problems:
        raise RuleError(Reason.INVALID_SETUP, "set-up: " + "; ".join(problems), field="setup")
    if rules.repetition and state.phase is Phase.MOVEMENT:
        state = state.evolve(position_history=(position_key(state),))
    if state.phase is Phase.MOVEMENT:
        state = turn_opening(state)
    return state


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


def _check_rows(state: NapoleonicState, options: Options) -> None:
    _low, high = state.rules.rows
    across = [state.height] + [state.width for p in state.players if state.side_index(p.id) > 1]
    if 2 * high > min(across):
        raise RuleError(
            Reason.INVALID_OPTION_VALUE,
            f"option deployment_rows: {quoted(options['deployment_rows'])} does not fit a board "
            f"{state.height} ranks high (both sides' rows must be on the board and apart); "
            "allowed: a row range N-M counted from each side's edge, e.g. 2-3",
            field="options.deployment_rows",
        )


def _check_room(state: NapoleonicState, options: Options) -> None:
    """Armies deployed in play must fit their deployment rows (10.5): a player with fewer
    squares than units could never place them all, and the game would stand still."""
    for player in state.players:
        room = len(deployment.deployment_cells(state, player.id))
        units = len(state.army(player.id))
        if units > room:
            raise RuleError(
                Reason.INVALID_OPTION_VALUE,
                f"option deployment_rows: {quoted(options['deployment_rows'])} give "
                f"{player.id} {room} squares for an army of {units} units; "
                "allowed: rows that hold every army, e.g. 2-3",
                field="options.deployment_rows",
            )


def _fixed_array(state: NapoleonicState, scenario: Scenario, options: Options) -> tuple[Unit, ...]:
    """The units of the `setup` option: a named array of the scenario or a custom one."""
    value = str(options["setup"]).strip()
    sides = [p.id for p in state.players]
    if value in scenario.setups:
        arrays = dict(scenario.setups[value].arrays)
    elif ":" in value:
        arrays = {}
        for part in value.split(";"):
            head, _sep, body = part.partition(":")
            side = head.strip()
            if side not in sides or side in arrays:
                raise _setup_option_error(
                    scenario, f"{quoted(side)} is not a side given once ({', '.join(sides)})"
                )
            arrays[side] = body
    else:
        raise _setup_option_error(scenario, f"{quoted(value)} is no set-up of the scenario")
    units: list[Unit] = []
    for side in sides:
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
            units.append(Unit(item_id(side, item, default.id), side, item.kind, default.cell))
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
    """The whole state as its position text (`position.py`)."""
    return write_position(state)

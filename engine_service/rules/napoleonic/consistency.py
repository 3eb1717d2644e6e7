"""`check_state`: every inconsistency of a state that could not arise in play, all at once.

States come back from clients, so the engine refuses a state with units off the board, two
units on a square, more units than the armies hold, hidden deployment data in a phase that
has none, a turn scratch that names impossible attacks or supports, a game over whose
winner the position contradicts, and so on.
"""

from __future__ import annotations

from collections import Counter

from engine_service.memo import memo
from engine_service.rules.base import OutcomeReason
from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.combat import under_attack
from engine_service.rules.napoleonic.deployment import DIGEST_BYTES, Sealer
from engine_service.rules.napoleonic.pieces import UNIT_TYPES
from engine_service.rules.napoleonic.scenarios import PALETTE
from engine_service.rules.napoleonic.setup import UNIT_ID
from engine_service.rules.napoleonic.state import (
    ACTIVE_PHASES,
    DEPLOY_PHASES,
    NapoleonicState,
    Phase,
)
from engine_service.rules.options import Options

PHASE_OF_MODE = {
    "commit_reveal": (Phase.DEPLOY_COMMIT, Phase.DEPLOY_REVEAL),
    "sealed": (Phase.DEPLOY_SEALED,),
    "marching_orders": (Phase.PLACEMENT,),
}


def deployment_mode(state: NapoleonicState) -> str:
    """The deployment mode the state's options give ('fixed' when none)."""
    return deployment_mode_of(state.options)


def deployment_mode_of(options: Options) -> str:
    """The deployment mode options give ('fixed' when none)."""
    deployment = str(options["deployment"])
    if deployment == "attack_at_dawn":
        return str(options["attack_at_dawn_mode"])
    return deployment


def check_state(state: NapoleonicState, sealer: Sealer | None) -> list[str]:
    """Every problem of `state` (empty when it could arise in play)."""
    problems: list[str] = []
    size = state.width * state.height
    players = [p.id for p in state.players]
    if len(set(players)) != len(players) or len(players) < 2:
        problems.append(f"players {players} are not two or more distinct ids")
    if sorted(state.turn_order) != sorted(players):
        problems.append(f"turn order {list(state.turn_order)} does not name every player once")
    if state.active not in players:
        problems.append(f"the active player {state.active!r} is no player")
    _check_players(state, players, problems)
    army_sides = [side for side, _kinds in state.armies]
    if sorted(army_sides) != sorted(players):
        problems.append(f"armies are given for {army_sides}, players are {players}")
    for side, kinds in state.armies:
        unknown = sorted({k for k in kinds if k not in UNIT_TYPES})
        if unknown:
            problems.append(f"{side}'s army has unknown unit types {unknown}")
    _check_units(state, size, players, problems)
    _check_terrain(state, size, players, problems)
    if (state.phase is Phase.GAME_OVER) != (state.outcome is not None):
        problems.append(f"phase {state.phase} does not agree with the outcome {state.outcome}")
    _check_winner(state, problems)
    if state.turn_number < 0 or not 0 <= state.turns_since_elimination <= state.turn_number:
        problems.append(
            f"turn counters {state.turn_number}/{state.turns_since_elimination} are impossible"
        )
    _check_deployment(state, players, sealer, problems)
    if state.phase is not Phase.GAME_OVER:
        _check_turn(state, problems)
    return problems


def _check_players(state: NapoleonicState, players: list[str], problems: list[str]) -> None:
    """10.6: ids from the palette, at least two alliances, shared armies within an alliance,
    the active player in the game, and two alliances still in it while the game goes on."""
    alliances = {p.alliance for p in state.players}
    unknown = [p for p in players if p not in PALETTE]
    if unknown:
        problems.append(f"players {unknown} are no player ids ({', '.join(PALETTE)})")
    if len(players) >= 2 and len(alliances) < 2:
        problems.append("the players are all of one alliance")
    for player in state.players:
        owner = state.player(player.army_id)
        if owner is None or owner.alliance != player.alliance or owner.army:
            problems.append(f"{player.id} commands army {player.army_id}, no army of its alliance")
        if player.surrendered and not player.out:
            problems.append(f"{player.id} surrendered but is not out")
        if (
            player.out
            and state.rules.commander_loss == "remove_army"
            and any(u.side == player.id for u in state.units)
        ):
            problems.append(f"{player.id} is out but has units (on_commander_loss)")
    if state.phase is not Phase.GAME_OVER:
        if not state.in_game(state.active) and state.active in players:
            problems.append(f"the active player {state.active} is out of the game")
        if len({p.alliance for p in state.players if not p.out}) < 2:
            problems.append("one alliance is left but the game is not over")


def _check_winner(state: NapoleonicState, problems: list[str]) -> None:
    """The winner of an ending the position decides: the player whose Guards stand when the
    enemy's fell (two players), the one alliance with a player still in the game when every
    enemy is out (10.6)."""
    outcome = state.outcome
    if outcome is None:
        return
    if outcome.reason is OutcomeReason.ENEMIES_OUT:
        left = sorted({p.alliance for p in state.players if not p.out})
        if left != [outcome.winner]:
            problems.append(
                f"the outcome says {outcome.winner} won with every enemy out, "
                f"but the alliances in the game are {', '.join(left) or 'none'}"
            )
    elif outcome.reason is OutcomeReason.GUARDS_ELIMINATED:
        standing = sorted({u.side for u in state.units if state.stats(u).is_commander})
        if standing != [outcome.winner]:
            problems.append(
                f"the outcome says {outcome.winner} eliminated the enemy's Guards, "
                f"but the Guards of {', '.join(standing) or 'nobody'} stand"
            )


@memo(256)  # armies rarely change from state to state
def _army_counts(armies: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[tuple[str, str], int]:
    """(player, type) -> count of the orders of battle."""
    return dict(Counter((side, kind) for side, kinds in armies for kind in kinds))


@memo(4096)  # ids repeat from state to state
def _well_formed_id(unit_id: str) -> bool:
    return UNIT_ID.match(unit_id) is not None


def _check_units(
    state: NapoleonicState, size: int, players: list[str], problems: list[str]
) -> None:
    units = state.units
    ids = [u.id for u in units]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for unit_id in ids:
            if unit_id in seen:
                problems.append(f"two units have the id {unit_id}")
            seen.add(unit_id)
    elif ids != sorted(ids):
        problems.append("units are not in id order")
    for unit_id in dict.fromkeys(ids):
        if not _well_formed_id(unit_id):
            problems.append(f"unit id {unit_id!r} is not 1-32 letters, digits or '_'")
    cells = [u.cell for u in units]
    if (
        len(set(cells)) != len(cells)
        or (cells and not (min(cells) >= 0 and max(cells) < size))
        or not {u.side for u in units} <= set(players)
        or not {u.kind for u in units} <= UNIT_TYPES.keys()
    ):
        taken: dict[int, str] = {}
        for unit in units:
            if unit.side not in players:
                problems.append(f"unit {unit.id} belongs to no player ({unit.side!r})")
            if unit.kind not in UNIT_TYPES:
                problems.append(f"unit {unit.id} has the unknown type {unit.kind!r}")
            if not 0 <= unit.cell < size:
                problems.append(f"unit {unit.id} is off the board")
            elif unit.cell in taken:
                problems.append(
                    f"units {taken[unit.cell]} and {unit.id} are both on "
                    f"{state.geo.names[unit.cell]}"
                )
            else:
                taken[unit.cell] = unit.id
    allowed = _army_counts(state.armies)
    counts = Counter((u.side, u.kind) for u in units)
    for (side, kind), count in sorted(counts.items()):
        if count > allowed.get((side, kind), 0):
            problems.append(
                f"{side} has {count} {kind} on the board but its army has "
                f"{allowed.get((side, kind), 0)}"
            )


def _check_terrain(
    state: NapoleonicState, size: int, players: list[str], problems: list[str]
) -> None:
    terrain = state.terrain
    geo = state.geo
    for cell in terrain.hills:
        if not 0 <= cell < size:
            problems.append("a hill is off the board")
    for cell, owner in terrain.redoubts:
        if not 0 <= cell < size or owner not in players:
            problems.append(f"redoubt ({cell}, {owner!r}) is off the board or has no owner")
    build = state.rules.redoubt_build_turns
    for site in terrain.constructions:
        if not 0 <= site.cell < size or site.builder not in players:
            problems.append(f"a redoubt site ({site.cell}, {site.builder!r}) is impossible")
            continue
        name = geo.names[site.cell]
        if site.cell in terrain.redoubt_owner:
            problems.append(f"{name} is both a redoubt and a redoubt site")
        if build == 0 or not 0 <= site.turns_done < build:
            problems.append(
                f"the redoubt site on {name} has {site.turns_done} turns done, impossible with "
                f"redoubt_build_turns {build or 'off'}"
            )
    for a, b in terrain.obstacles:
        if (
            not (0 <= a < b < size)
            or b not in geo.direction_to[a]
            or geo.direction_to[a][b]
            not in (
                "N",
                "E",
                "S",
                "W",
            )
        ):
            problems.append(f"obstacle edge ({a}, {b}) is not between orthogonal neighbours")


def _check_deployment(  # noqa: C901 (a flat checklist: one test per rule of 10.1)
    state: NapoleonicState, players: list[str], sealer: Sealer | None, problems: list[str]
) -> None:
    deployment = state.deployment
    mode = deployment_mode(state)
    if state.phase in DEPLOY_PHASES:
        if deployment is None:
            problems.append(f"phase {state.phase} has no deployment data")
            return
        if deployment.mode != mode or state.phase not in PHASE_OF_MODE.get(mode, ()):
            problems.append(
                f"phase {state.phase} with deployment mode {deployment.mode} does not fit the "
                f"options (deployment mode {mode})"
            )
    elif deployment is not None:
        problems.append(f"phase {state.phase} carries deployment data")
        return
    if deployment is None:
        return
    committed = [p for p, _d in deployment.commitments]
    revealed = [p for p, _a in deployment.reveals]
    sealed = [p for p, _c in deployment.sealed]
    for label, names in (("commitments", committed), ("reveals", revealed), ("sealed", sealed)):
        if len(set(names)) != len(names) or not set(names) <= set(players):
            problems.append(f"deployment {label} name unknown or repeated players {names}")
    for player, digest in deployment.commitments:
        if len(digest) != DIGEST_BYTES:
            problems.append(f"{player}'s commitment is not a {DIGEST_BYTES}-byte digest")
    withheld = deployment.withheld
    if withheld:
        entries: dict[str, object] = {}
        if state.phase is Phase.DEPLOY_SEALED:
            entries = dict(deployment.sealed)
        elif state.phase is Phase.DEPLOY_REVEAL:
            entries = dict(deployment.reveals)
        if not withheld <= entries.keys() or any(entries[p] for p in withheld):
            problems.append(
                f"withheld arrays {sorted(withheld)} are not empty entries of players who "
                "have revealed or sealed"
            )
    if (
        state.phase in (Phase.DEPLOY_COMMIT, Phase.DEPLOY_REVEAL, Phase.DEPLOY_SEALED)
        and state.units
    ):
        problems.append("units stand on the board before the secret deployments are revealed")
    # A player who left the game (10.6) need not have committed, revealed or sealed.
    in_game = {p.id for p in state.players if not p.out}
    if state.phase is Phase.DEPLOY_COMMIT:
        if revealed or sealed:
            problems.append("reveals or sealed arrays are present in the commit phase")
        if in_game <= set(committed):
            problems.append("every player has committed but the phase is still commit")
    elif state.phase is Phase.DEPLOY_REVEAL:
        if not in_game <= set(committed) or sealed:
            problems.append("the reveal phase needs every commitment and no sealed array")
        if in_game <= set(revealed):
            problems.append("every array is revealed but the phase is still reveal")
        for player, array in deployment.reveals:
            if player in withheld:
                continue
            if len({c for c, _k in array}) != len(array) or any(
                not 0 <= c < state.width * state.height or k not in UNIT_TYPES for c, k in array
            ):
                problems.append(f"{player}'s revealed array is impossible")
    elif state.phase is Phase.DEPLOY_SEALED:
        if committed or revealed:
            problems.append("commitments or plaintext arrays are present in the sealed mode")
        if in_game <= set(sealed):
            problems.append("every array is sealed but the phase is still sealed deployment")
        if sealer is not None:
            for player, data in deployment.sealed:
                if player in withheld:
                    continue
                try:
                    sealer.open(state, player, data)
                except RuleError:
                    problems.append(f"{player}'s sealed array does not open with the engine key")
    elif state.phase is Phase.PLACEMENT:
        if committed or revealed or sealed:
            problems.append("Marching Orders carries commitments, reveals or sealed arrays")
        if deployment.next_placer not in players:
            problems.append(f"next placer {deployment.next_placer!r} is no player")
        if not 0 <= deployment.placed_this_turn < int(state.options["placements_per_turn"]):
            problems.append(f"{deployment.placed_this_turn} placements this turn is impossible")


def _check_turn(  # noqa: C901 (a flat checklist: one test per fact of the turn)
    state: NapoleonicState, problems: list[str]
) -> None:
    turn = state.turn
    units = state.by_id()
    phase = state.phase
    if phase not in (*ACTIVE_PHASES, Phase.DEFENCE):
        if (
            turn.moved
            or turn.attacks
            or turn.supports
            or turn.vacancies
            or turn.pending_defenders
            or turn.pending_players
        ):
            problems.append(f"phase {phase} has a turn in progress")
        return
    active = state.active
    acting = state.acting()
    joining = (*acting, *(p for p in state.allies(active) if p not in acting))
    for unit_id in sorted(turn.moved | turn.entered_elevation):
        unit = units.get(unit_id)
        if unit is None or unit.side not in acting:
            problems.append(f"moved unit {unit_id} is not an active unit on the board")
    pending = turn.pending_players
    may_pend = joining if phase is Phase.ATTACK_DECLARATION else acting
    if pending and (
        phase is Phase.DEFENCE
        or len(set(pending)) != len(pending)
        or not set(pending) <= set(may_pend)
    ):
        problems.append(f"players {list(pending)} cannot all be acting in the {phase} phase")
    for unit_id, origin in turn.origins:
        if unit_id not in turn.moved or not 0 <= origin < state.width * state.height:
            problems.append(f"split move of {unit_id} is impossible")
    if phase is Phase.MOVEMENT and (turn.attacks or turn.supports or turn.vacancies):
        problems.append("attacks, supports or vacancies during movement")
    seen: set[str] = set()
    geo = state.geo
    for attacker_id, target_id in turn.attacks:
        attacker = units.get(attacker_id)
        target = units.get(target_id)
        if attacker is None or attacker.side not in joining or attacker_id in seen:
            problems.append(f"attacker {attacker_id} is not a single active unit on the board")
            continue
        seen.add(attacker_id)
        if target is None:
            if target_id not in turn.eliminated and not any(
                v.eligible and attacker_id in v.eligible for v in turn.vacancies
            ):
                problems.append(f"target {target_id} of {attacker_id} is not on the board")
            continue
        if target.side not in state.enemies(active):
            problems.append(f"target {target_id} is not an enemy of {active}")
            continue
        if phase is Phase.ADVANCE:
            continue  # attackers may have advanced since
        direction = geo.direction_to[attacker.cell].get(target.cell)
        if direction is None or direction not in state.stats(attacker).attack_dirs:
            problems.append(f"{attacker_id} cannot attack {target_id} from where it stands")
    if phase is Phase.DEFENCE and not turn.attacks:
        problems.append("the defence phase has no declared attack")
    if phase is Phase.DEFENCE:
        if not turn.pending_defenders or any(
            p not in state.enemies(active) or not state.in_game(p) for p in turn.pending_defenders
        ):
            problems.append(f"pending defenders {list(turn.pending_defenders)} are impossible")
    elif turn.pending_defenders:
        problems.append(f"phase {phase} has pending defenders")
    if phase in (Phase.MOVEMENT, Phase.ATTACK_DECLARATION) and turn.supports:
        problems.append("supports before the defence phase")
    attacked = under_attack(state)
    supporters: set[str] = set()
    for supporter_id, supported_id in turn.supports:
        supporter = units.get(supporter_id)
        supported = units.get(supported_id)
        if supporter is None or supporter_id in supporters or supporter_id in attacked:
            problems.append(f"supporter {supporter_id} is impossible")
            continue
        supporters.add(supporter_id)
        if phase is Phase.DEFENCE and (
            supported is None
            or supported_id not in attacked
            or state.alliance_of(supported.side) != state.alliance_of(supporter.side)
            or geo.direction_to[supporter.cell].get(supported.cell)
            not in state.stats(supporter).support_dirs
        ):
            problems.append(f"support {supporter_id}>{supported_id} is impossible")
    if phase is Phase.ADVANCE:
        if not turn.vacancies or not turn.eliminated:
            problems.append("the advance phase has no vacated square")
    elif turn.vacancies or turn.eliminated:
        problems.append(f"phase {phase} has vacated squares")
    attackers = {a for a, _t in turn.attacks}
    for vacancy in turn.vacancies:
        if not 0 <= vacancy.cell < state.width * state.height:
            problems.append("a vacated square is off the board")
            continue
        occupant = state.at()[vacancy.cell]
        filler = units.get(vacancy.filled_by) if vacancy.filled_by else None
        if not set(vacancy.eligible) <= attackers or not vacancy.eligible:
            problems.append(f"advancers {list(vacancy.eligible)} are not declared attackers")
        if vacancy.filled_by:
            if (
                filler is None
                or occupant is None
                or occupant.id != vacancy.filled_by
                or vacancy.filled_by not in vacancy.eligible
            ):
                problems.append(f"the advance into {geo.names[vacancy.cell]} is impossible")
        elif occupant is not None:
            problems.append(f"vacated square {geo.names[vacancy.cell]} is occupied")

"""Napoleonic Chess state detail and actions, to and from `wargame.v1` messages.

Structural problems of a state from the wire are refused here with the field named:
unknown squares, unit types or players, two units on a square, repeated ids, more units
than the armies hold, a phase the game does not have under its options, and hidden
deployment data in the wrong place (plaintext arrays in sealed mode, reveals during the
commit phase, sealed data in commit_reveal mode, deployment data outside deployment).
Whether the position could arise in play is `check_state`'s question.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NoReturn

from engine_service.convert.base import GameConverter, invalid_state, outcome_reason_name
from engine_service.rules.base import Outcome, OutcomeReason
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    BeginRedoubt,
    Commit,
    EndPhase,
    Move,
    NapoleonicAction,
    Place,
    Placements,
    Reveal,
    Seal,
    Support,
)
from engine_service.rules.napoleonic.board import MAX_SIDE, Geometry, geometry
from engine_service.rules.napoleonic.consistency import PHASE_OF_MODE
from engine_service.rules.napoleonic.options import rules_of
from engine_service.rules.napoleonic.pieces import UNIT_TYPES, type_rank
from engine_service.rules.napoleonic.position import RULE_OUTCOMES
from engine_service.rules.napoleonic.scenarios import ALLIANCE_ID, ALLIANCE_ID_IS, SCENARIOS
from engine_service.rules.napoleonic.setup import UNIT_ID, canonical_placements
from engine_service.rules.napoleonic.state import (
    DEPLOY_PHASES,
    Construction,
    Deployment,
    NapoleonicState,
    Phase,
    Player,
    Terrain,
    Turn,
    Unit,
    Vacancy,
    sort_units,
)
from engine_service.rules.options import Options
from wargame.v1 import game_pb2, napoleonic_pb2

PHASE_TO_PROTO = {
    Phase.DEPLOY_COMMIT: napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT,
    Phase.DEPLOY_REVEAL: napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL,
    Phase.DEPLOY_SEALED: napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED,
    Phase.PLACEMENT: napoleonic_pb2.NAPOLEONIC_PHASE_PLACEMENT,
    Phase.MOVEMENT: napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT,
    Phase.ATTACK_DECLARATION: napoleonic_pb2.NAPOLEONIC_PHASE_ATTACK_DECLARATION,
    Phase.DEFENCE: napoleonic_pb2.NAPOLEONIC_PHASE_DEFENCE,
    Phase.ADVANCE: napoleonic_pb2.NAPOLEONIC_PHASE_ADVANCE,
    Phase.GAME_OVER: napoleonic_pb2.NAPOLEONIC_PHASE_GAME_OVER,
}
PROTO_TO_PHASE = {value: phase for phase, value in PHASE_TO_PROTO.items()}
DETAIL = "state.napoleonic"


def _cell(geo: Geometry, name: str, field: str) -> int:
    cell = geo.index.get(name)
    if cell is None:
        raise invalid_state(
            f"{name!r} is not a square of the {geo.width}x{geo.height} board", field
        )
    return cell


def _player(name: str, players: list[str], field: str) -> str:
    if name not in players:
        raise invalid_state(f"{name!r} is no player ({', '.join(players)})", field)
    return name


def _unit_type(name: str, field: str) -> str:
    if name not in UNIT_TYPES:
        raise invalid_state(f"{name!r} is no unit type ({', '.join(UNIT_TYPES)})", field)
    return name


class NapoleonicConverter(GameConverter[NapoleonicState, NapoleonicAction]):
    """Napoleonic Chess: `GameState.napoleonic` and `Action.napoleonic`."""

    game = "napoleonic"

    # -- states ------------------------------------------------------------------------

    def detail_to_proto(self, state: NapoleonicState, out: game_pb2.GameState) -> None:
        """Fill `out.napoleonic` from a core state."""
        names = state.geo.names
        detail = out.napoleonic
        detail.scenario = state.scenario
        detail.width = state.width
        detail.height = state.height
        for player in state.players:
            detail.players.add(
                id=player.id,
                alliance=player.alliance,
                army=player.army,
                out=player.out,
                surrendered=player.surrendered,
            )
        detail.turn_order.extend(state.turn_order)
        detail.phase = PHASE_TO_PROTO[state.phase]
        detail.active_player = state.active
        detail.turn_number = state.turn_number
        ground = state.terrain
        detail.terrain.hills.extend(names[c] for c in sorted(ground.hills))
        for cell, owner in ground.redoubts:
            detail.terrain.redoubts.add(cell=names[cell], owner=owner)
        for site in ground.constructions:
            detail.terrain.constructions.add(
                cell=names[site.cell],
                builder=site.builder,
                turns_done=site.turns_done,
                unit=site.unit,
            )
        for a, b in sorted(ground.obstacles):
            detail.terrain.obstacles.add(a=names[a], b=names[b])
        turn = state.turn
        detail.turn.moved.extend(sorted(turn.moved))
        detail.turn.entered_elevation.extend(sorted(turn.entered_elevation))
        for attacker, target in turn.attacks:
            detail.turn.attacks.add(attacker=attacker, target=target)
        for supporter, supported in turn.supports:
            detail.turn.supports.add(supporter=supporter, supported=supported)
        for vacancy in turn.vacancies:
            detail.turn.vacancies.add(
                cell=names[vacancy.cell], eligible=vacancy.eligible, filled_by=vacancy.filled_by
            )
        for unit_id, origin in turn.origins:
            detail.turn.split_moves.add(unit=unit_id, origin=names[origin])
        detail.turn.pending_defenders.extend(turn.pending_defenders)
        detail.turn.pending_players.extend(turn.pending_players)
        detail.turn.eliminated.extend(turn.eliminated)
        detail.turns_since_elimination = state.turns_since_elimination
        detail.position_history.extend(state.position_history)
        dep = state.deployment
        if dep is not None:
            out_dep = detail.deployment
            out_dep.mode = dep.mode
            for committer, digest in dep.commitments:
                out_dep.commitments.add(player=committer, hash=digest)
            for revealer, array in dep.reveals:
                item = out_dep.reveals.add(player=revealer, withheld=revealer in dep.withheld)
                for cell, kind in array:
                    item.placements.add(unit_type=kind, cell=names[cell])
            for sealer, data in dep.sealed:
                out_dep.sealed.add(player=sealer, ciphertext=data, withheld=sealer in dep.withheld)
            out_dep.next_placer = dep.next_placer
            out_dep.placed_this_turn = dep.placed_this_turn
        for owner, kinds in state.armies:
            detail.armies.add(player=owner, unit_types=kinds)

    def state_from_proto(self, msg: game_pb2.GameState, options: Options) -> NapoleonicState:
        """The core state of `msg.pieces` and `msg.napoleonic`; INVALID_STATE naming a field."""
        detail = msg.napoleonic
        if detail.scenario != options["scenario"] or detail.scenario not in SCENARIOS:
            raise invalid_state(
                f"scenario {detail.scenario!r} is not the option scenario {options['scenario']!r}",
                f"{DETAIL}.scenario",
            )
        if not (2 <= detail.width <= MAX_SIDE and 2 <= detail.height <= 99):
            raise invalid_state(
                f"board {detail.width}x{detail.height} is outside 2..{MAX_SIDE} x 2..99",
                f"{DETAIL}.width",
            )
        geo = geometry(detail.width, detail.height)
        # The structured form holds the scenario's players (a position text may name others).
        expected = SCENARIOS[detail.scenario].player_ids
        players: list[str] = []
        for i, player in enumerate(detail.players):
            if player.id not in expected or player.id in players or not player.alliance:
                raise invalid_state(
                    f"player {player.id!r} is unknown, repeated or has no alliance (players: "
                    f"{', '.join(expected)})",
                    f"{DETAIL}.players[{i}]",
                )
            if not ALLIANCE_ID.fullmatch(player.alliance):
                raise invalid_state(
                    f"player {player.id}: alliance {player.alliance!r} is not {ALLIANCE_ID_IS}",
                    f"{DETAIL}.players[{i}].alliance",
                )
            players.append(player.id)
        if tuple(players) != expected:
            raise invalid_state(f"players must be {', '.join(expected)}", f"{DETAIL}.players")
        for i, player in enumerate(detail.players):
            if (player.army and player.army not in players) or (
                player.surrendered and not player.out
            ):
                raise invalid_state(
                    f"player {player.id}: army {player.army!r} is no player, or it surrendered "
                    "without being out",
                    f"{DETAIL}.players[{i}]",
                )
        for i, name in enumerate(detail.turn_order):
            _player(name, players, f"{DETAIL}.turn_order[{i}]")
        phase = PROTO_TO_PHASE.get(detail.phase)
        if phase is None:
            raise invalid_state(
                f"phase {detail.phase} is no phase of Napoleonic Chess", f"{DETAIL}.phase"
            )
        self._check_phase_fits_options(phase, options)
        active = _player(detail.active_player, players, f"{DETAIL}.active_player")
        armies: dict[str, tuple[str, ...]] = {}
        for i, army in enumerate(detail.armies):
            side = _player(army.player, players, f"{DETAIL}.armies[{i}].player")
            if side in armies:
                raise invalid_state(f"{side}'s army is given twice", f"{DETAIL}.armies[{i}]")
            kinds = [
                _unit_type(k, f"{DETAIL}.armies[{i}].unit_types[{j}]")
                for j, k in enumerate(army.unit_types)
            ]
            armies[side] = tuple(sorted(kinds, key=type_rank))
        units = self._units(msg, geo, players, armies)
        ground = self._terrain(detail.terrain, geo, players)
        turn = self._turn(detail.turn, geo, players)
        deployment = self._deployment(detail, phase, options, geo, players)
        outcome: Outcome | None = None
        if phase is Phase.GAME_OVER:
            outcome = self._rule_outcome(msg, players)
        return NapoleonicState(
            options=options,
            rules=rules_of(options),
            geo=geo,
            scenario=detail.scenario,
            width=geo.width,
            height=geo.height,
            players=tuple(
                Player(p.id, p.alliance, p.army, p.out, p.surrendered) for p in detail.players
            ),
            turn_order=tuple(detail.turn_order),
            armies=tuple((p, armies.get(p, ())) for p in players),
            units=units,
            terrain=ground,
            phase=phase,
            active=active,
            turn_number=detail.turn_number,
            turn=turn,
            turns_since_elimination=detail.turns_since_elimination,
            position_history=tuple(detail.position_history),
            deployment=deployment,
            outcome=outcome,
        )

    @staticmethod
    def _check_phase_fits_options(phase: Phase, options: Options) -> None:
        mode = str(options["deployment"])
        if mode == "attack_at_dawn":
            mode = str(options["attack_at_dawn_mode"])
        if phase in DEPLOY_PHASES and phase not in PHASE_OF_MODE.get(mode, ()):
            raise invalid_state(
                f"phase {phase} does not exist in a game with deployment {mode}",
                f"{DETAIL}.phase",
            )

    @staticmethod
    def _units(
        msg: game_pb2.GameState,
        geo: Geometry,
        players: list[str],
        armies: dict[str, tuple[str, ...]],
    ) -> tuple[Unit, ...]:
        """The units of `msg.pieces`; the checks run per unit per call, so errors are built
        only when one is found (by `_refuse_units`)."""
        allowed = {
            (side, kind): count
            for side, army in armies.items()
            for kind, count in Counter(army).items()
        }
        units: list[Unit] = []
        ids: set[str] = set()
        taken: set[int] = set()
        counts: Counter[tuple[str, str]] = Counter()
        for piece in msg.pieces:
            cell = geo.index.get(piece.cell)
            key = (piece.side, piece.kind)
            counts[key] += 1
            if (
                cell is None
                or piece.kind not in UNIT_TYPES
                or piece.side not in players
                or not UNIT_ID.match(piece.id)
                or piece.id in ids
                or cell in taken
                or counts[key] > allowed.get(key, 0)
            ):
                NapoleonicConverter._refuse_units(msg, geo, players, armies)
            ids.add(piece.id)
            taken.add(cell)
            units.append(Unit(piece.id, piece.side, piece.kind, cell))
        return sort_units(units)

    @staticmethod
    def _refuse_units(
        msg: game_pb2.GameState,
        geo: Geometry,
        players: list[str],
        armies: dict[str, tuple[str, ...]],
    ) -> NoReturn:
        """Raise the precise error for the first wrong unit of `msg.pieces`."""
        units: list[Unit] = []
        ids: set[str] = set()
        taken: dict[int, str] = {}
        counts: Counter[tuple[str, str]] = Counter()
        for i, piece in enumerate(msg.pieces):
            field = f"state.pieces[{i}]"
            cell = _cell(geo, piece.cell, f"{field}.cell")
            kind = _unit_type(piece.kind, f"{field}.kind")
            side = _player(piece.side, players, f"{field}.side")
            if not UNIT_ID.match(piece.id):
                raise invalid_state(
                    f"unit id {piece.id!r} is not 1-32 letters, digits or '_'", f"{field}.id"
                )
            if piece.id in ids:
                raise invalid_state(f"two units have the id {piece.id}", f"{field}.id")
            if cell in taken:
                raise invalid_state(
                    f"units {taken[cell]} and {piece.id} are both on {piece.cell}",
                    f"{field}.cell",
                )
            ids.add(piece.id)
            taken[cell] = piece.id
            counts[(side, kind)] += 1
            if counts[(side, kind)] > armies.get(side, ()).count(kind):
                raise invalid_state(
                    f"{side} has more {kind} on the board than its army holds "
                    f"({armies.get(side, ()).count(kind)})",
                    f"{field}.kind",
                )
            units.append(Unit(piece.id, side, kind, cell))
        raise AssertionError("the fast path found a fault the precise checks did not")

    @staticmethod
    def _terrain(
        msg: napoleonic_pb2.NapoleonicTerrain, geo: Geometry, players: list[str]
    ) -> Terrain:
        field = f"{DETAIL}.terrain"
        hills = frozenset(
            _cell(geo, name, f"{field}.hills[{i}]") for i, name in enumerate(msg.hills)
        )
        redoubts: dict[int, str] = {}
        for i, redoubt in enumerate(msg.redoubts):
            cell = _cell(geo, redoubt.cell, f"{field}.redoubts[{i}].cell")
            if cell in redoubts:
                raise invalid_state(f"two redoubts on {redoubt.cell}", f"{field}.redoubts[{i}]")
            redoubts[cell] = _player(redoubt.owner, players, f"{field}.redoubts[{i}].owner")
        sites: dict[int, Construction] = {}
        for i, site in enumerate(msg.constructions):
            here = f"{field}.constructions[{i}]"
            cell = _cell(geo, site.cell, f"{here}.cell")
            if cell in sites:
                raise invalid_state(f"two redoubt sites on {site.cell}", here)
            builder = _player(site.builder, players, f"{here}.builder")
            sites[cell] = Construction(cell, builder, site.turns_done, site.unit)
        edges: set[tuple[int, int]] = set()
        for i, edge in enumerate(msg.obstacles):
            a = _cell(geo, edge.a, f"{field}.obstacles[{i}].a")
            b = _cell(geo, edge.b, f"{field}.obstacles[{i}].b")
            if geo.direction_to[a].get(b) not in ("N", "E", "S", "W"):
                raise invalid_state(
                    f"obstacle {edge.a}|{edge.b} is not on an edge between orthogonal neighbours",
                    f"{field}.obstacles[{i}]",
                )
            edges.add(geo.edge_key(a, b))
        return Terrain(
            hills=hills,
            redoubts=tuple(sorted(redoubts.items())),
            constructions=tuple(sites[c] for c in sorted(sites)),
            obstacles=frozenset(edges),
        )

    @staticmethod
    def _turn(msg: napoleonic_pb2.NapoleonicTurn, geo: Geometry, players: list[str]) -> Turn:
        field = f"{DETAIL}.turn"
        vacancies = tuple(
            Vacancy(
                _cell(geo, v.cell, f"{field}.vacancies[{i}].cell"),
                tuple(v.eligible),
                v.filled_by,
            )
            for i, v in enumerate(msg.vacancies)
        )
        origins = tuple(
            (s.unit, _cell(geo, s.origin, f"{field}.split_moves[{i}].origin"))
            for i, s in enumerate(msg.split_moves)
        )
        pending = tuple(
            _player(p, players, f"{field}.pending_defenders[{i}]")
            for i, p in enumerate(msg.pending_defenders)
        )
        waiting = tuple(
            _player(p, players, f"{field}.pending_players[{i}]")
            for i, p in enumerate(msg.pending_players)
        )
        return Turn(
            pending_players=waiting,
            moved=frozenset(msg.moved),
            origins=origins,
            entered_elevation=frozenset(msg.entered_elevation),
            attacks=tuple((a.attacker, a.target) for a in msg.attacks),
            supports=tuple((s.supporter, s.supported) for s in msg.supports),
            pending_defenders=pending,
            eliminated=tuple(msg.eliminated),
            vacancies=vacancies,
        )

    @staticmethod
    def _deployment(
        detail: napoleonic_pb2.NapoleonicState,
        phase: Phase,
        options: Options,
        geo: Geometry,
        players: list[str],
    ) -> Deployment | None:
        field = f"{DETAIL}.deployment"
        if not detail.HasField("deployment"):
            if phase in DEPLOY_PHASES:
                raise invalid_state(f"phase {phase} needs its deployment data", field)
            return None
        msg = detail.deployment
        if phase not in DEPLOY_PHASES:
            raise invalid_state(f"phase {phase} carries deployment data", field)
        mode = str(options["deployment"])
        if mode == "attack_at_dawn":
            mode = str(options["attack_at_dawn_mode"])
        if msg.mode != mode:
            raise invalid_state(
                f"deployment mode {msg.mode!r} is not the options' {mode!r}", f"{field}.mode"
            )
        if mode != "commit_reveal":
            # Plaintext arrays and commitments have no place outside commit_reveal.
            if msg.reveals:
                raise invalid_state(f"plaintext arrays in {mode} deployment", f"{field}.reveals")
            if msg.commitments:
                raise invalid_state(f"commitments in {mode} deployment", f"{field}.commitments")
        if mode != "sealed" and msg.sealed:
            raise invalid_state(f"sealed arrays in {mode} deployment", f"{field}.sealed")
        if phase is Phase.DEPLOY_COMMIT and msg.reveals:
            raise invalid_state("reveals during the commit phase", f"{field}.reveals")
        if mode != "marching_orders" and (msg.next_placer or msg.placed_this_turn):
            raise invalid_state(
                f"Marching Orders data in {mode} deployment", f"{field}.next_placer"
            )
        reveals: list[tuple[str, tuple[tuple[int, str], ...]]] = []
        withheld: set[str] = set()
        for i, sealed in enumerate(msg.sealed):
            if sealed.withheld:
                if sealed.ciphertext:
                    raise invalid_state(
                        "a withheld sealed array carries its ciphertext",
                        f"{field}.sealed[{i}].ciphertext",
                    )
                withheld.add(sealed.player)
        for i, item in enumerate(msg.reveals):
            here = f"{field}.reveals[{i}]"
            player = _player(item.player, players, f"{here}.player")
            if item.withheld:
                if item.placements:
                    raise invalid_state(
                        "a withheld revealed array carries its placements", f"{here}.placements"
                    )
                withheld.add(player)
            pairs = canonical_placements(
                (
                    p.cell,
                    _unit_type(p.unit_type, f"{here}.placements[{j}].unit_type"),
                )
                for j, p in enumerate(item.placements)
            )
            reveals.append(
                (player, tuple((_cell(geo, s, f"{here}.placements"), k) for s, k in pairs))
            )
        return Deployment(
            mode=msg.mode,
            commitments=tuple(
                (_player(c.player, players, f"{field}.commitments[{i}].player"), c.hash)
                for i, c in enumerate(msg.commitments)
            ),
            reveals=tuple(reveals),
            sealed=tuple(
                (_player(s.player, players, f"{field}.sealed[{i}].player"), s.ciphertext)
                for i, s in enumerate(msg.sealed)
            ),
            next_placer=msg.next_placer,
            placed_this_turn=msg.placed_this_turn,
            withheld=frozenset(withheld),
        )

    @staticmethod
    def _rule_outcome(msg: game_pb2.GameState, players: list[str]) -> Outcome:
        if not msg.HasField("outcome"):
            raise invalid_state("phase game_over needs the outcome", "state.outcome")
        name = outcome_reason_name(msg.outcome.reason)
        if name not in RULE_OUTCOMES:
            raise invalid_state(
                f"outcome {name} does not end a game in phase game_over", "state.outcome.reason"
            )
        winner = msg.outcome.winner or None
        detail = msg.napoleonic
        if len(players) > 2:  # the winner of a game of alliances is an alliance (10.6)
            alliances = {p.alliance for p in detail.players}
            if winner is not None and winner not in alliances:
                raise invalid_state(
                    f"winner {winner!r} is no alliance of this game", "state.outcome.winner"
                )
            sides = tuple(p.id for p in detail.players if winner and p.alliance == winner)
            return Outcome(winner, OutcomeReason(name), msg.outcome.message, sides)
        if winner is not None:
            _player(winner, players, "state.outcome.winner")
        return Outcome(winner, OutcomeReason(name), msg.outcome.message)

    # -- actions -----------------------------------------------------------------------

    def action_to_proto(self, action: NapoleonicAction, out: game_pb2.Action) -> None:
        """Fill `out.napoleonic` from a core action."""
        detail = out.napoleonic
        if isinstance(action, Move):
            detail.move.unit, detail.move.to = action.unit, action.to
        elif isinstance(action, EndPhase):
            detail.end_phase.SetInParent()
        elif isinstance(action, Attack):
            detail.attack.attacker, detail.attack.target = action.attacker, action.target
        elif isinstance(action, Support):
            detail.support.supporter = action.supporter
            detail.support.supported = action.supported
        elif isinstance(action, Advance):
            detail.advance.unit, detail.advance.to = action.unit, action.to
        elif isinstance(action, BeginRedoubt):
            detail.begin_redoubt.cell = action.cell
        elif isinstance(action, Commit):
            detail.commit.digest = action.digest
        elif isinstance(action, Reveal):
            for square, unit_type in action.placements:
                detail.reveal.placements.add(unit_type=unit_type, cell=square)
            detail.reveal.salt = action.salt
        elif isinstance(action, Seal):
            for square, unit_type in action.placements:
                detail.seal.placements.add(unit_type=unit_type, cell=square)
        else:
            detail.place.unit_type, detail.place.cell = action.kind, action.cell

    def action_from_proto(self, msg: game_pb2.Action, state: NapoleonicState) -> NapoleonicAction:
        """The core action of `msg.napoleonic`, by player `msg.side`."""
        side = msg.side
        detail = msg.napoleonic
        kind = detail.WhichOneof("kind")
        field = "action.napoleonic"
        if kind == "move":
            return Move(side, detail.move.unit, detail.move.to)
        if kind == "end_phase":
            return EndPhase(side)
        if kind == "attack":
            return Attack(side, detail.attack.attacker, detail.attack.target)
        if kind == "support":
            return Support(side, detail.support.supporter, detail.support.supported)
        if kind == "advance":
            return Advance(side, detail.advance.unit, detail.advance.to)
        if kind == "begin_redoubt":
            return BeginRedoubt(side, detail.begin_redoubt.cell)
        if kind == "commit":
            return Commit(side, detail.commit.digest)
        if kind == "reveal":
            return Reveal(
                side,
                self._placements(detail.reveal.placements, f"{field}.reveal"),
                detail.reveal.salt,
            )
        if kind == "seal":
            return Seal(side, self._placements(detail.seal.placements, f"{field}.seal"))
        if kind == "place":
            if detail.place.unit_type not in UNIT_TYPES:
                raise RuleError(
                    Reason.ILLEGAL_ACTION,
                    f"{detail.place.unit_type!r} is no unit type",
                    field=f"{field}.place.unit_type",
                )
            return Place(side, detail.place.unit_type, detail.place.cell)
        raise RuleError(
            Reason.ILLEGAL_ACTION, "the Napoleonic action is empty", field=f"{field}.kind"
        )

    @staticmethod
    def _placements(items: Iterable[napoleonic_pb2.NapoleonicPlacement], field: str) -> Placements:
        pairs: list[tuple[str, str]] = []
        for i, item in enumerate(items):
            if item.unit_type not in UNIT_TYPES:
                raise RuleError(
                    Reason.ILLEGAL_ACTION,
                    f"{item.unit_type!r} is no unit type",
                    field=f"{field}.placements[{i}].unit_type",
                )
            pairs.append((item.cell, item.unit_type))
        return canonical_placements(pairs)

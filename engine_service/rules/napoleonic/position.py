"""Napoleonic Chess's position text (docs/positions.md#napoleonic-chess): the set-up text of
`setup.py`, with the sections that write the rest of a game in progress.

Sections are separated by `;` and written in this order, each only when it says something
(`board`, `turn` and the units of a player who has any always)::

    board 8x8; players: red/red black/black; order: red black;
    red: a2=A b2=C3 c2=C#guard_2 ...; black: ...; army red: 8I 4C 2A 1G;
    hills: c4 f5; redoubts: d5=black; sites: e4=red/1/R_I5; obstacles: d4|d5;
    turn: red defence 12; quiet: 3; history: <keys>;
    moved: R_C1 R_I3; elevated: R_I3; split: R_C1@b2; attacks: R_I3>B_I2 R_C1>B_I2;
    supports: B_C1>B_I2; defenders: black; eliminated: B_I2; vacancies: d5=R_I3,R_C1/R_I3;
    committed red: <digest>; revealed red: a2=A b2=C ...; revealed black: withheld;
    sealed red: <ciphertext>; placing: red 1; outcome: black guards_eliminated "<message>"

- `players` (each `id/alliance`, in the order of the armies, south first) and `order` (the
  turn order) only when they differ from the defaults: each player its own alliance, and
  the options' turn order. The section is where more players and alliances will go.
- The units of each player: `square=LETTER` when the unit has the engine's id for its
  place (`setup.py`), `square=LETTER<n>` for the id `<P>_<LETTER><n>`, `#id` otherwise.
- `turn`: the player whose turn it is, the phase, the player-turns completed.
- `quiet`: player-turns since the last elimination; `history`: the keys of the positions at
  the start of each player-turn since then (repetition_draw), 8 bytes each, base64url.
- The scratch of the current turn: units that moved, entered a hill or redoubt, part-way
  through a split move (`unit@origin`), attacks and supports (`a>b`, in order), the players
  still to allocate supports, the units eliminated, the vacated squares
  (`square=eligible,...[/filled_by]`).
- A deployment in progress: commitments (SHA-256), revealed arrays and sealed arrays
  (AES-GCM ciphertext, nonce first), one section per player in arrival order, binary in
  base64url; `withheld` for an array or ciphertext a server leaves out of another player's
  copy; Marching Orders' next placer and its placements this turn.
- `outcome`: the winner (`-` for a draw), the reason and the sentence, once the game is
  over by the rules.

A text without a `turn` section is a set-up as before: the start of a game from it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Final

from engine_service.rules.base import Outcome, OutcomeReason
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.board import Geometry, geometry
from engine_service.rules.napoleonic.consistency import check_state, deployment_mode_of
from engine_service.rules.napoleonic.deployment import Sealer
from engine_service.rules.napoleonic.options import rules_of
from engine_service.rules.napoleonic.pieces import UNIT_TYPES, type_rank
from engine_service.rules.napoleonic.scenarios import (
    ALLIANCE_ID,
    ALLIANCE_ID_IS,
    PALETTE,
    SCENARIOS,
    SIDES,
)
from engine_service.rules.napoleonic.scenarios import DEFAULT_PLAYERS as DEFAULT_SCENARIO_PLAYERS
from engine_service.rules.napoleonic.setup import (
    ArrayError,
    Position,
    canonical_array_text,
    counts_text,
    default_ids,
    parse_array,
    parse_setup_text,
    unit_prefix,
)
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
from engine_service.rules.position import (
    PositionError,
    b64,
    count_of,
    keys_of,
    keys_text,
    quote,
    sections,
    unb64,
    unquote,
    words,
)
from wargame.runtime.quoting import quoted

WITHHELD: Final = "withheld"
DEPLOYMENT_HEADS: Final = ("committed", "revealed", "sealed")
STATE_HEADS: Final = (
    "players",
    "order",
    "turn",
    "quiet",
    "history",
    "moved",
    "elevated",
    "split",
    "attacks",
    "supports",
    "defenders",
    "pending",
    "eliminated",
    "vacancies",
    "placing",
    "outcome",
)
RULE_OUTCOMES: Final = (
    OutcomeReason.GUARDS_ELIMINATED,
    OutcomeReason.ENEMIES_OUT,
    OutcomeReason.DEPLOYMENT_FORFEIT,
    OutcomeReason.TURN_LIMIT,
    OutcomeReason.NO_PROGRESS,
    OutcomeReason.REPETITION,
    OutcomeReason.INSUFFICIENT_FORCE,
)
_TURN_SECTION: Final = re.compile(r"(?:^|;)\s*turn\s*:")
DEFAULT_PLAYERS: Final = tuple(Player(side, side) for side in SIDES)
_STATUS: Final = {"out": "out", "surrendered": "surrendered"}


def is_position(text: str) -> bool:
    """Whether a text writes a game in progress (it has a `turn` section)."""
    return _TURN_SECTION.search(text) is not None


def scenario_players(options: Options) -> tuple[Player, ...]:
    """The players of the options' scenario (10.6), as a state holds them."""
    scenario = SCENARIOS[str(options["scenario"])]
    if scenario.players == DEFAULT_SCENARIO_PLAYERS:
        return DEFAULT_PLAYERS
    return tuple(
        Player(p.id, p.alliance, "" if p.army == p.id else p.army) for p in scenario.players
    )


def turn_order_of(options: Options, players: tuple[Player, ...] | None = None) -> tuple[str, ...]:
    """The turn order the options give (10.6): the option's list, or alliances alternating
    from first_player's: each alliance's players in their order, first_player first."""
    players = scenario_players(options) if players is None else players
    ids = [p.id for p in players]
    first = str(options["first_player"])
    text = str(options["turn_order"])
    if first not in ids:
        raise RuleError(
            Reason.INVALID_OPTION_VALUE,
            f"option first_player: {first} is no player of this game; allowed: " + ", ".join(ids),
            field="options.first_player",
        )
    if text == "alternate_alliances":
        if len(players) == 2:
            return (first, *(side for side in ids if side != first))
        groups: dict[str, list[str]] = {}
        for player in players:
            groups.setdefault(player.alliance, []).append(player.id)
        lead = next(p.alliance for p in players if p.id == first)
        names = list(groups)
        start = names.index(lead)
        alliances = [groups[a] for a in names[start:] + names[:start]]
        own = alliances[0]
        at = own.index(first)
        alliances[0] = own[at:] + own[:at]
        order: list[str] = []
        for i in range(max(len(g) for g in alliances)):
            order += [g[i] for g in alliances if i < len(g)]
        return tuple(order)
    listed = tuple(p.strip() for p in text.split(","))
    if sorted(listed) != sorted(ids):
        raise RuleError(
            Reason.INVALID_OPTION_VALUE,
            f"option turn_order: {quoted(text)} does not name every player once ("
            + ", ".join(ids)
            + "); allowed: alternate_alliances or every player id once",
            field="options.turn_order",
        )
    if listed[0] != first:
        raise RuleError(
            Reason.INVALID_OPTION_VALUE,
            f"option turn_order: {quoted(text)} starts with {listed[0]} but first_player is "
            f"{first}; allowed: a turn order that starts with first_player",
            field="options.turn_order",
        )
    return listed


def position_parts(
    position: Position, index: Mapping[str, int]
) -> tuple[list[Unit], dict[str, tuple[str, ...]], Terrain]:
    """The units, armies and terrain of a set-up text read by `parse_setup_text`."""

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
    sides = list(SIDES) + [
        side for side in dict.fromkeys(u[1] for u in position.units) if side not in SIDES
    ]
    sides += [side for side in position.armies if side not in sides]
    for side in sides:
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


# --- writing ----------------------------------------------------------------------------------


def write_position(state: NapoleonicState) -> str:
    """The position text of a state (what `read_position` reads back to an equal state)."""
    geo = state.geo
    names = geo.names
    parts = [f"board {state.width}x{state.height}"]
    if state.players != scenario_players(state.options):
        parts.append("players: " + " ".join(_player_text(p) for p in state.players))
    if state.turn_order != _default_order(state.options, state.players):
        parts.append("order: " + " ".join(state.turn_order))
    by_side: dict[str, list[Unit]] = {}
    for unit in sorted(state.units, key=lambda u: u.cell):
        by_side.setdefault(unit.side, []).append(unit)
    players = [p.id for p in state.players]
    for side in players:
        listed = by_side.get(side)
        if listed:
            parts.append(f"{side}: {_items(side, listed, names)}")
    for side, army in state.armies:
        present = tuple(sorted((u.kind for u in by_side.get(side, ())), key=type_rank))
        if army != present:
            parts.append(f"army {side}: {counts_text(Counter(army)) or 'none'}")
    ground = state.terrain
    if ground.hills:
        parts.append("hills: " + " ".join(names[c] for c in sorted(ground.hills)))
    if ground.redoubts:
        parts.append("redoubts: " + " ".join(f"{names[c]}={o}" for c, o in ground.redoubts))
    if ground.constructions:
        parts.append(
            "sites: "
            + " ".join(
                f"{names[c.cell]}={c.builder}/{c.turns_done}/{c.unit}" for c in ground.constructions
            )
        )
    if ground.obstacles:
        parts.append(
            "obstacles: " + " ".join(f"{names[a]}|{names[b]}" for a, b in sorted(ground.obstacles))
        )
    parts.append(f"turn: {state.active} {state.phase.value} {state.turn_number}")
    if state.turns_since_elimination:
        parts.append(f"quiet: {state.turns_since_elimination}")
    if state.position_history:
        parts.append(f"history: {keys_text(state.position_history)}")
    _write_turn(state.turn, names, parts)
    if state.deployment is not None:
        _write_deployment(state.deployment, names, parts)
    if state.outcome is not None:
        outcome = state.outcome
        parts.append(
            f"outcome: {outcome.winner or '-'} {outcome.reason.lower()} {quote(outcome.message)}"
        )
    return "; ".join(parts)


def _player_text(player: Player) -> str:
    """`id/alliance[@army][!out|!surrendered]` (docs/positions.md)."""
    text = f"{player.id}/{player.alliance}"
    if player.army:
        text += f"@{player.army}"
    if player.surrendered:
        text += "!surrendered"
    elif player.out:
        text += "!out"
    return text


def _items(side: str, units: list[Unit], names: tuple[str, ...]) -> str:
    """A player's units (sorted by cell) as array items, ids as short as they can be."""
    auto = default_ids(side, [(names[u.cell], u.kind) for u in units])
    items = []
    for unit, default in zip(units, auto, strict=True):
        letter = UNIT_TYPES[unit.kind].letter
        text = f"{names[unit.cell]}={letter}"
        if unit.id != default:
            number = unit.id.removeprefix(f"{unit_prefix(side)}_{letter}")
            numbered = number.isdigit() and len(number) <= 3 and number[0] != "0"
            text += number if numbered and number != unit.id else f"#{unit.id}"
        items.append(text)
    return " ".join(items)


def _write_turn(turn: Turn, names: tuple[str, ...], parts: list[str]) -> None:
    if turn.moved:
        parts.append("moved: " + " ".join(sorted(turn.moved)))
    if turn.entered_elevation:
        parts.append("elevated: " + " ".join(sorted(turn.entered_elevation)))
    if turn.origins:
        parts.append("split: " + " ".join(f"{u}@{names[c]}" for u, c in turn.origins))
    if turn.attacks:
        parts.append("attacks: " + " ".join(f"{a}>{t}" for a, t in turn.attacks))
    if turn.supports:
        parts.append("supports: " + " ".join(f"{s}>{t}" for s, t in turn.supports))
    if turn.pending_defenders:
        parts.append("defenders: " + " ".join(turn.pending_defenders))
    if turn.pending_players:
        parts.append("pending: " + " ".join(turn.pending_players))
    if turn.eliminated:
        parts.append("eliminated: " + " ".join(turn.eliminated))
    if turn.vacancies:
        parts.append(
            "vacancies: "
            + " ".join(
                f"{names[v.cell]}={','.join(v.eligible)}"
                + (f"/{v.filled_by}" if v.filled_by else "")
                for v in turn.vacancies
            )
        )


def _write_deployment(deployment: Deployment, names: tuple[str, ...], parts: list[str]) -> None:
    withheld = deployment.withheld
    for player, digest in deployment.commitments:
        parts.append(f"committed {player}: {b64(digest)}")
    for player, array in deployment.reveals:
        body = (
            WITHHELD
            if player in withheld
            else canonical_array_text((names[c], k) for c, k in array) or "-"
        )
        parts.append(f"revealed {player}: {body}")
    for player, data in deployment.sealed:
        parts.append(f"sealed {player}: {WITHHELD if player in withheld else b64(data)}")
    if deployment.mode == "marching_orders":
        parts.append(f"placing: {deployment.next_placer} {deployment.placed_this_turn}")


def _default_order(options: Options, players: tuple[Player, ...]) -> tuple[str, ...] | None:
    try:
        return turn_order_of(options, players)
    except RuleError:
        return None


# --- reading ----------------------------------------------------------------------------------


def read_position(options: Options, text: str, sealer: Sealer | None) -> NapoleonicState:
    """The state a position text writes; INVALID_SETUP naming what is wrong (every problem
    `check_state` finds included)."""
    try:
        state = _read(options, text)
    except (PositionError, ArrayError) as error:
        raise RuleError(Reason.INVALID_SETUP, f"set-up: {error}", field="setup") from None
    problems = check_state(state, sealer)
    if problems:
        raise RuleError(Reason.INVALID_SETUP, "set-up: " + "; ".join(problems), field="setup")
    return state


def _read(options: Options, text: str) -> NapoleonicState:
    base: list[str] = []
    extra: dict[str, str] = {}
    deployed: list[tuple[str, str, str]] = []  # (head word, player, body)
    for section in sections(text):
        head, sep, body = section.partition(":")
        head = head.strip()
        word, _space, player = head.partition(" ")
        if sep and head in STATE_HEADS:
            if head in extra:
                raise PositionError(f"section {quoted(head)} appears twice")
            extra[head] = body.strip()
        elif sep and word in DEPLOYMENT_HEADS and player.strip():
            deployed.append((word, player.strip(), body.strip()))
        else:
            base.append(section)
    position = parse_setup_text("; ".join(base))
    geo = geometry(position.width, position.height)
    units, armies, ground = position_parts(position, geo.index)
    players = _players(extra.get("players"), options)
    ids = [p.id for p in players]
    order = tuple(extra["order"].split()) if "order" in extra else turn_order_of(options, players)
    if "turn" not in extra:
        raise PositionError("a position needs its 'turn: <player> <phase> <turns>' section")
    turn_words = extra["turn"].split()
    if len(turn_words) != 3 or turn_words[1] not in Phase.__members__.values():
        phases = ", ".join(phase.value for phase in Phase)
        raise PositionError(
            f"turn {quoted(extra['turn'])} is not '<player> <phase> <turns>' (phases: {phases})"
        )
    active, phase, turns = turn_words[0], Phase(turn_words[1]), count_of(turn_words[2], "turn")
    deployment = _deployment(options, phase, extra, deployed, geo)
    outcome = _outcome(extra["outcome"], players) if "outcome" in extra else None
    rules = rules_of(options)
    return NapoleonicState(
        options=options,
        rules=rules,
        geo=geo,
        scenario=str(options["scenario"]),
        width=geo.width,
        height=geo.height,
        players=players,
        turn_order=order,
        armies=tuple((p, armies.get(p, ())) for p in ids),
        units=sort_units(units),
        terrain=ground,
        phase=phase,
        active=active,
        turn_number=turns,
        turn=_turn(extra, geo),
        turns_since_elimination=count_of(extra.get("quiet", "0"), "quiet"),
        position_history=keys_of(extra["history"], "history") if "history" in extra else (),
        deployment=deployment,
        outcome=outcome,
    )


def _players(text: str | None, options: Options) -> tuple[Player, ...]:
    if text is None:
        return scenario_players(options)
    players = []
    for word in text.split():
        head, _bang, status = word.partition("!")
        head, _at, army = head.partition("@")
        player, sep, alliance = head.partition("/")
        if (
            not sep
            or not player
            or not alliance
            or (status and status not in _STATUS)
            or (_at and not army)
        ):
            raise PositionError(
                f"players: {quoted(word)} is not 'player/alliance[@army][!out|!surrendered]'"
            )
        if player not in PALETTE:
            raise PositionError(
                f"players: {quoted(player)} is no player id; ids: {', '.join(PALETTE)}"
            )
        if not ALLIANCE_ID.fullmatch(alliance):
            raise PositionError(f"players: alliance {quoted(alliance)} is not {ALLIANCE_ID_IS}")
        players.append(Player(player, alliance, army, bool(status), status == "surrendered"))
    ids = [p.id for p in players]
    if len(set(ids)) != len(ids) or not 2 <= len(ids) <= len(PALETTE):
        raise PositionError(f"players: 2 to {len(PALETTE)} players, each named once")
    return tuple(players)


def _cell(geo: Geometry, square: str, what: str) -> int:
    cell = geo.index.get(square)
    if cell is None:
        raise PositionError(
            f"{what}: {quoted(square)} is not a square of the {geo.width}x{geo.height} board"
        )
    return cell


def _pair(word: str, what: str) -> tuple[str, str]:
    left, sep, right = word.partition(">")
    if not sep or not left or not right:
        raise PositionError(f"{what}: {quoted(word)} is not 'unit>unit'")
    return left, right


def _turn(extra: Mapping[str, str], geo: Geometry) -> Turn:
    origins = []
    for word in extra.get("split", "").split():
        unit, sep, square = word.partition("@")
        if not sep:
            raise PositionError(f"split: {quoted(word)} is not 'unit@square'")
        origins.append((unit, _cell(geo, square, "split")))
    vacancies = []
    for word in extra.get("vacancies", "").split():
        square, sep, rest = word.partition("=")
        eligible, _slash, filler = rest.partition("/")
        if not sep:
            raise PositionError(f"vacancies: {quoted(word)} is not 'square=unit,...[/unit]'")
        vacancies.append(
            Vacancy(
                _cell(geo, square, "vacancies"),
                tuple(u for u in eligible.split(",") if u),
                filler,
            )
        )
    return Turn(
        moved=frozenset(extra.get("moved", "").split()),
        origins=tuple(origins),
        entered_elevation=frozenset(extra.get("elevated", "").split()),
        attacks=tuple(_pair(w, "attacks") for w in extra.get("attacks", "").split()),
        supports=tuple(_pair(w, "supports") for w in extra.get("supports", "").split()),
        pending_defenders=tuple(extra.get("defenders", "").split()),
        pending_players=tuple(extra.get("pending", "").split()),
        eliminated=tuple(extra.get("eliminated", "").split()),
        vacancies=tuple(vacancies),
    )


def _deployment(
    options: Options,
    phase: Phase,
    extra: Mapping[str, str],
    deployed: list[tuple[str, str, str]],
    geo: Geometry,
) -> Deployment | None:
    if phase not in DEPLOY_PHASES:
        if deployed or "placing" in extra:
            raise PositionError(f"phase {phase} has no deployment in progress")
        return None
    commitments: list[tuple[str, bytes]] = []
    reveals: list[tuple[str, tuple[tuple[int, str], ...]]] = []
    sealed: list[tuple[str, bytes]] = []
    withheld: set[str] = set()
    for head, player, body in deployed:
        if head == "committed":
            commitments.append((player, unb64(body, f"committed {player}")))
        elif head == "sealed":
            if body == WITHHELD:
                withheld.add(player)
                sealed.append((player, b""))
            else:
                sealed.append((player, unb64(body, f"sealed {player}")))
        elif body == WITHHELD:
            withheld.add(player)
            reveals.append((player, ()))
        else:
            items = parse_array("" if body == "-" else body)
            array = tuple(
                sorted((_cell(geo, i.square, f"revealed {player}"), i.kind) for i in items)
            )
            reveals.append((player, array))
    next_placer, placed = "", 0
    if "placing" in extra:
        placing = extra["placing"].split()
        if len(placing) != 2:
            raise PositionError(f"placing: {quoted(extra['placing'])} is not '<player> <placed>'")
        next_placer, placed = placing[0], count_of(placing[1], "placing")
    return Deployment(
        mode=deployment_mode_of(options),
        commitments=tuple(commitments),
        reveals=tuple(reveals),
        sealed=tuple(sealed),
        next_placer=next_placer,
        placed_this_turn=placed,
        withheld=frozenset(withheld),
    )


def _outcome(text: str, players: tuple[Player, ...]) -> Outcome:
    parts = words(text)
    reasons = {reason.lower(): reason for reason in RULE_OUTCOMES}
    alliance = len(players) > 2  # the winner of a game of alliances is an alliance (10.6)
    winners = {p.alliance if alliance else p.id for p in players}
    if len(parts) != 3 or parts[1] not in reasons or parts[0] not in (*winners, "-"):
        raise PositionError(
            f"outcome {quoted(text[:40])} is not '<winner or -> <reason> \"<sentence>\"' "
            f"(reasons: {', '.join(reasons)})"
        )
    winner = None if parts[0] == "-" else parts[0]
    sides = tuple(p.id for p in players if p.alliance == winner) if alliance and winner else ()
    return Outcome(winner, reasons[parts[1]], unquote(parts[2]), sides)

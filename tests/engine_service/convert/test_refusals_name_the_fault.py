"""Every structural refusal of a state or action from the wire names the field and the fault.

The converters refuse malformed states with INVALID_STATE (actions with ILLEGAL_ACTION), the
field at fault and a message a person can act on; each case here pins all three, so a check
that stops firing, fires on the wrong field, or loses its message fails.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engine_service import convert
from engine_service.rules import rulesets
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from tests.conftest import TEST_SEAL_KEY
from tests.engine_service.convert.helpers import state_refusal, structured
from wargame.v1 import game_pb2, napoleonic_pb2

RULESETS = rulesets(TEST_SEAL_KEY)
CONVERSIONS = convert.conversions(RULESETS)
# A change returns the index of the piece it changed; the field names that index.
Change = Callable[[game_pb2.GameState], int]


def initial(game: str, **options: str) -> game_pb2.GameState:
    ruleset = RULESETS[game]
    state = ruleset.new_game(ruleset.resolve_options(options), None)
    return structured(CONVERSIONS, Game(ruleset, state))


def index_of(state: game_pb2.GameState, kind: str, side: str = "") -> int:
    """The index of the first piece of a kind (and side)."""
    return next(i for i, p in enumerate(state.pieces) if p.kind == kind and side in ("", p.side))


def setting(kind: str, name: str, value: object) -> Change:
    """Set one field of the first piece of `kind`."""

    def change(state: game_pb2.GameState) -> int:
        i = index_of(state, kind)
        setattr(state.pieces[i], name, value)
        return i

    return change


def onto_a_troop(state: game_pb2.GameState) -> int:
    """Move the King onto the square of a Troop listed after him."""
    king = index_of(state, "king")
    troop = next(i for i in range(king + 1, len(state.pieces)) if state.pieces[i].kind == "troop")
    state.pieces[king].cell = state.pieces[troop].cell
    return troop


def onto_artillery(state: game_pb2.GameState) -> int:
    """Move the red Guards onto the red artillery's square (the Guards are listed later)."""
    guards = index_of(state, "guards", "red")
    state.pieces[guards].cell = state.pieces[index_of(state, "artillery", "red")].cell
    return guards


def id_of_artillery(state: game_pb2.GameState) -> int:
    guards = index_of(state, "guards", "red")
    state.pieces[guards].id = state.pieces[index_of(state, "artillery", "red")].id
    return guards


def onto_the_citadel(state: game_pb2.GameState) -> int:
    """The Wagon driven onto the Citadel's square (the later of the two is refused)."""
    wagon, citadel = index_of(state, "wagon"), index_of(state, "citadel")
    later = max(wagon, citadel)
    state.pieces[later].cell = state.pieces[min(wagon, citadel)].cell
    return later


def a_second_citadel(state: game_pb2.GameState) -> int:
    extra = state.pieces.add()
    extra.CopyFrom(state.pieces[index_of(state, "citadel")])
    extra.cell = "70"
    return len(state.pieces) - 1


def a_third_artillery(state: game_pb2.GameState) -> int:
    """The red Guards turned artillery: the last red artillery listed is one too many."""
    state.pieces[index_of(state, "guards", "red")].kind = "artillery"
    return max(i for i, p in enumerate(state.pieces) if (p.side, p.kind) == ("red", "artillery"))


def black_army_gone(state: game_pb2.GameState) -> int:
    """Black's order of battle emptied: its first unit is one more than the army holds."""
    state.napoleonic.armies[1].ClearField("unit_types")
    return next(i for i, p in enumerate(state.pieces) if p.side == "black")


CASES: list[tuple[str, str, Change, str, str]] = [
    (
        "war",
        "unknown kind",
        setting("king", "kind", "queen"),
        "kind",
        "unknown piece kind 'queen'; kinds: troop, king, general, mortar, cannon, horse, "
        "flying_machine",
    ),
    (
        "war",
        "no such cell",
        setting("king", "cell", "k11"),
        "cell",
        "cell 'k11' is not a cell a1..j10",
    ),
    ("war", "two on one cell", onto_a_troop, "cell", "two pieces on {cell}"),
    (
        "war",
        "a King marked moved",
        setting("king", "moved", True),
        "moved",
        "only a Troop can be marked as moved, not a king",
    ),
    ("war", "a unit id", setting("king", "id", "K1"), "id", "Game of War pieces have no unit ids"),
    (
        "battle",
        "unknown kind",
        setting("citadel", "kind", "queen"),
        "kind",
        "unknown piece kind 'queen'; kinds: light_infantry, infantry_of_the_line, cavalry, "
        "artillery, wagon, citadel",
    ),
    (
        "battle",
        "no side",
        setting("citadel", "side", "nobody"),
        "side",
        "side 'nobody' is neither attacker nor defender",
    ),
    (
        "battle",
        "a river cell",
        setting("citadel", "cell", "0"),
        "cell",
        "'0' is not a square of the board: squares are 1..139 (the river cells are not squares)",
    ),
    (
        "battle",
        "the attacker's Citadel",
        setting("citadel", "side", "attacker"),
        "side",
        "the Citadel belongs to the defender",
    ),
    (
        "battle",
        "the defender's Wagon",
        setting("wagon", "side", "defender"),
        "side",
        "the Wagon belongs to the attacker",
    ),
    (
        "battle",
        "a unit id",
        setting("citadel", "id", "C1"),
        "id",
        "Game of Battle pieces have no unit ids",
    ),
    (
        "battle",
        "a piece marked moved",
        setting("citadel", "moved", True),
        "moved",
        "Game of Battle pieces are never marked as moved",
    ),
    ("battle", "two on one square", onto_the_citadel, "cell", "two pieces on square {cell}"),
    (
        "battle",
        "a second Citadel",
        a_second_citadel,
        "kind",
        "the defender has more than 1 Citadel (section 3)",
    ),
    (
        "napoleonic",
        "no such square",
        setting("guards", "cell", "i9"),
        "cell",
        "'i9' is not a square of the 8x8 board",
    ),
    (
        "napoleonic",
        "a malformed id",
        setting("guards", "id", "no spaces"),
        "id",
        "unit id 'no spaces' is not 1-32 letters, digits or '_'",
    ),
    ("napoleonic", "two units one id", id_of_artillery, "id", "two units have the id {id}"),
    (
        "napoleonic",
        "two units one square",
        onto_artillery,
        "cell",
        "units {other} and R_G are both on {cell}",
    ),
    (
        "napoleonic",
        "a unit its army lacks",
        black_army_gone,
        "kind",
        "black has more {kind} on the board than its army holds (0)",
    ),
    (
        "napoleonic",
        "too many of a type",
        a_third_artillery,
        "kind",
        "red has more artillery on the board than its army holds (2)",
    ),
]


@pytest.mark.parametrize(
    ("game", "change", "field", "message"),
    [case[:1] + case[2:] for case in CASES],
    ids=[f"{case[0]}: {case[1]}" for case in CASES],
)
def test_a_malformed_state_is_refused_naming_field_and_fault(
    game: str, change: Change, field: str, message: str
) -> None:
    state = initial(game)
    i = change(state)
    changed = state.pieces[i]
    other = next(
        (p.id for j, p in enumerate(state.pieces) if j != i and p.cell == changed.cell), ""
    )
    assert state_refusal(CONVERSIONS, state) == (
        "INVALID_STATE",
        f"state.pieces[{i}].{field}",
        message.format(cell=changed.cell, id=changed.id, kind=changed.kind, other=other),
    )


def _action(state: game_pb2.GameState, build: Callable[[game_pb2.Action], None]) -> RuleError:
    game = CONVERSIONS.game_from_proto(state)
    action = game_pb2.Action(side=state.to_act[0])
    build(action)
    with pytest.raises(RuleError) as error:
        CONVERSIONS.action_from_proto(game, action)
    return error.value


def test_napoleonic_placements_name_the_unknown_unit_type() -> None:
    dawn = initial("napoleonic", deployment="attack_at_dawn", attack_at_dawn_mode="sealed")

    def seal(action: game_pb2.Action) -> None:
        action.napoleonic.seal.placements.add(cell="a2", unit_type="artillery")
        action.napoleonic.seal.placements.add(cell="b2", unit_type="dragon")

    error = _action(dawn, seal)
    assert (error.reason, error.field, error.message) == (
        "ILLEGAL_ACTION",
        "action.napoleonic.seal.placements[1].unit_type",
        "'dragon' is no unit type",
    )

    def reveal(action: game_pb2.Action) -> None:
        action.napoleonic.reveal.placements.add(cell="a2", unit_type="wyvern")

    error = _action(dawn, reveal)
    assert (error.field, error.message) == (
        "action.napoleonic.reveal.placements[0].unit_type",
        "'wyvern' is no unit type",
    )
    marching = initial("napoleonic", deployment="marching_orders")

    def place(action: game_pb2.Action) -> None:
        action.napoleonic.place.CopyFrom(
            napoleonic_pb2.NapoleonicPlacement(unit_type="griffin", cell="c2")
        )

    error = _action(marching, place)
    assert (error.reason, error.field, error.message) == (
        "ILLEGAL_ACTION",
        "action.napoleonic.place.unit_type",
        "'griffin' is no unit type",
    )


def test_a_battle_action_that_is_no_move_is_refused() -> None:
    error = _action(initial("battle"), lambda a: a.battle.SetInParent())
    assert (error.reason, error.field, error.message) == (
        "ILLEGAL_ACTION",
        "action.battle.move",
        "a battle action is a move",
    )


def _war_move(action: game_pb2.Action, origin: str, *path: str) -> None:
    action.war.move.origin = origin
    action.war.move.path.extend(path)


def nothing_to_do(action: game_pb2.Action) -> None:
    action.war.SetInParent()


def huff_of_no_cell(action: game_pb2.Action) -> None:
    action.war.huff = "z0"
    _war_move(action, "b2", "b3")


def nowhere_to_land(action: game_pb2.Action) -> None:
    _war_move(action, "b2")


def placement_move_nowhere_to_land(action: game_pb2.Action) -> None:
    action.war.place.cell = "e5"
    action.war.move_after_placement.origin = "b2"


def move_after_no_placement(action: game_pb2.Action) -> None:
    _war_move(action, "b2", "b3")
    action.war.move_after_placement.path.append("c3")


def landing_off_the_board(action: game_pb2.Action) -> None:
    _war_move(action, "b2", "b3", "b11")


WAR_ACTIONS: list[tuple[Callable[[game_pb2.Action], None], str, str, str]] = [
    (nothing_to_do, "ILLEGAL_ACTION", "action.war.kind", "the action has no move, place or pass"),
    (
        huff_of_no_cell,
        "UNKNOWN_CELL",
        "action.war.huff",
        "'z0' is not a cell of the board (a1..j10)",
    ),
    (
        nowhere_to_land,
        "ILLEGAL_ACTION",
        "action.war.move.path",
        "a move needs at least one landing cell",
    ),
    (
        placement_move_nowhere_to_land,
        "ILLEGAL_ACTION",
        "action.war.move_after_placement.path",
        "a move needs at least one landing cell",
    ),
    (
        move_after_no_placement,
        "ILLEGAL_ACTION",
        "action.war.move_after_placement",
        "move_after_placement needs a placement in `place`",
    ),
    (
        landing_off_the_board,
        "UNKNOWN_CELL",
        "action.war.move.path[1]",
        "'b11' is not a cell of the board (a1..j10)",
    ),
]


@pytest.mark.parametrize(
    ("build", "reason", "field", "message"),
    WAR_ACTIONS,
    ids=[case[0].__name__ for case in WAR_ACTIONS],
)
def test_a_malformed_war_action_is_refused_naming_field_and_fault(
    build: Callable[[game_pb2.Action], None], reason: str, field: str, message: str
) -> None:
    error = _action(initial("war"), build)
    assert (error.reason, error.field, error.message) == (reason, field, message)


def test_an_empty_napoleonic_action_is_refused() -> None:
    error = _action(initial("napoleonic"), lambda a: a.napoleonic.SetInParent())
    assert (error.reason, error.field, error.message) == (
        "ILLEGAL_ACTION",
        "action.napoleonic.kind",
        "the Napoleonic action is empty",
    )


def _deployment_case(
    options: dict[str, str], change: Callable[[game_pb2.GameState], None]
) -> RuleError:
    state = initial("napoleonic", **options)
    change(state)
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(state)
    return error.value


DAWN = {"deployment": "attack_at_dawn"}
SEALED = {"deployment": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
MARCHING = {"deployment": "marching_orders"}
DEPLOYMENT = "state.napoleonic.deployment"


def _in_play(state: game_pb2.GameState) -> None:
    state.napoleonic.phase = napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT


def _mode(value: str) -> Callable[[game_pb2.GameState], None]:
    return lambda state: setattr(state.napoleonic.deployment, "mode", value)


def _reveal(state: game_pb2.GameState) -> None:
    state.napoleonic.deployment.reveals.add(player="red")


def _commitment(state: game_pb2.GameState) -> None:
    state.napoleonic.deployment.commitments.add(player="red", hash=bytes(32))


def _sealed(state: game_pb2.GameState) -> None:
    state.napoleonic.deployment.sealed.add(player="red", ciphertext=b"x" * 40)


def _no_deployment(state: game_pb2.GameState) -> None:
    state.napoleonic.ClearField("deployment")


def _next_placer(state: game_pb2.GameState) -> None:
    state.napoleonic.deployment.next_placer = "red"


DEPLOYMENT_CASES = [
    (DAWN, _no_deployment, DEPLOYMENT, "phase deploy_commit needs its deployment data"),
    (DAWN, _in_play, DEPLOYMENT, "phase movement carries deployment data"),
    (
        DAWN,
        _mode("sealed"),
        f"{DEPLOYMENT}.mode",
        "deployment mode 'sealed' is not the options' 'commit_reveal'",
    ),
    (SEALED, _reveal, f"{DEPLOYMENT}.reveals", "plaintext arrays in sealed deployment"),
    (SEALED, _commitment, f"{DEPLOYMENT}.commitments", "commitments in sealed deployment"),
    (DAWN, _sealed, f"{DEPLOYMENT}.sealed", "sealed arrays in commit_reveal deployment"),
    (DAWN, _reveal, f"{DEPLOYMENT}.reveals", "reveals during the commit phase"),
    (
        DAWN,
        _next_placer,
        f"{DEPLOYMENT}.next_placer",
        "Marching Orders data in commit_reveal deployment",
    ),
    (MARCHING, _sealed, f"{DEPLOYMENT}.sealed", "sealed arrays in marching_orders deployment"),
]


@pytest.mark.parametrize(
    ("options", "change", "field", "message"),
    DEPLOYMENT_CASES,
    ids=[case[3] for case in DEPLOYMENT_CASES],
)
def test_deployment_data_that_does_not_fit_the_phase_or_mode_is_refused(
    options: dict[str, str], change: Callable[[game_pb2.GameState], None], field: str, message: str
) -> None:
    error = _deployment_case(options, change)
    assert (error.reason, error.field, error.message) == ("INVALID_STATE", field, message)


def _revealing(state: game_pb2.GameState) -> napoleonic_pb2.NapoleonicDeployment:
    state.napoleonic.phase = napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL
    return state.napoleonic.deployment


def _reveal_by_no_player(state: game_pb2.GameState) -> None:
    _revealing(state).reveals.add(player="white")


def _reveal_of_no_unit_type(state: game_pb2.GameState) -> None:
    _revealing(state).reveals.add(player="red").placements.add(cell="a2", unit_type="wyvern")


def _reveal_off_the_board(state: game_pb2.GameState) -> None:
    _revealing(state).reveals.add(player="red").placements.add(cell="z9", unit_type="infantry")


def _withheld_reveal_with_placements(state: game_pb2.GameState) -> None:
    reveal = _revealing(state).reveals.add(player="red", withheld=True)
    reveal.placements.add(cell="a2", unit_type="infantry")


def _commitment_by_no_player(state: game_pb2.GameState) -> None:
    state.napoleonic.deployment.commitments.add(player="white", hash=bytes(32))


def _sealed_by_no_player(state: game_pb2.GameState) -> None:
    state.napoleonic.deployment.sealed.add(player="white", ciphertext=b"x" * 40)


def _placed_this_turn(state: game_pb2.GameState) -> None:
    state.napoleonic.deployment.placed_this_turn = 1


MORE_DEPLOYMENT_CASES = [
    (
        DAWN,
        _placed_this_turn,
        f"{DEPLOYMENT}.next_placer",
        "Marching Orders data in commit_reveal deployment",
    ),
    (
        DAWN,
        _reveal_by_no_player,
        f"{DEPLOYMENT}.reveals[0].player",
        "'white' is no player (red, black)",
    ),
    (
        DAWN,
        _reveal_of_no_unit_type,
        f"{DEPLOYMENT}.reveals[0].placements[0].unit_type",
        "'wyvern' is no unit type (infantry, cavalry, artillery, guards, horse_artillery, "
        "dragoons, foot_guards, cuirassiers, heavy_infantry)",
    ),
    (
        DAWN,
        _reveal_off_the_board,
        f"{DEPLOYMENT}.reveals[0].placements",
        "'z9' is not a square of the 8x8 board",
    ),
    (
        DAWN,
        _withheld_reveal_with_placements,
        f"{DEPLOYMENT}.reveals[0].placements",
        "a withheld revealed array carries its placements",
    ),
    (
        DAWN,
        _commitment_by_no_player,
        f"{DEPLOYMENT}.commitments[0].player",
        "'white' is no player (red, black)",
    ),
    (
        SEALED,
        _sealed_by_no_player,
        f"{DEPLOYMENT}.sealed[0].player",
        "'white' is no player (red, black)",
    ),
]


@pytest.mark.parametrize(
    ("options", "change", "field", "message"),
    MORE_DEPLOYMENT_CASES,
    ids=[case[1].__name__.strip("_") for case in MORE_DEPLOYMENT_CASES],
)
def test_deployment_entries_name_the_entry_at_fault(
    options: dict[str, str], change: Callable[[game_pb2.GameState], None], field: str, message: str
) -> None:
    error = _deployment_case(options, change)
    assert (error.reason, error.field, error.message) == ("INVALID_STATE", field, message)


def test_turn_entries_name_the_entry_at_fault() -> None:
    state = initial("napoleonic")
    state.napoleonic.turn.vacancies.add(cell="z9")
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(state)
    assert (error.value.field, error.value.message) == (
        "state.napoleonic.turn.vacancies[0].cell",
        "'z9' is not a square of the 8x8 board",
    )
    state = initial("napoleonic")
    state.napoleonic.turn.pending_defenders.append("white")
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(state)
    assert (error.value.field, error.value.message) == (
        "state.napoleonic.turn.pending_defenders[0]",
        "'white' is no player (red, black)",
    )
    state = initial("napoleonic")
    state.napoleonic.turn.pending_players.append("white")
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(state)
    assert (error.value.field, error.value.message) == (
        "state.napoleonic.turn.pending_players[0]",
        "'white' is no player (red, black)",
    )


@pytest.mark.parametrize("game", ["war", "battle"])
def test_a_converter_given_another_games_detail_refuses_it(game: str) -> None:
    other = initial("napoleonic")
    options = RULESETS[game].resolve_options({})
    with pytest.raises(RuleError) as error:
        CONVERSIONS.converters[game].state_from_proto(other, options)
    assert (error.value.reason, error.value.field, error.value.message) == (
        "INVALID_STATE",
        f"state.{game}",
        f"a {game} state needs its detail in `{game}`",
    )


def _napoleonic_game(setup: str, **options: str) -> game_pb2.GameState:
    ruleset = RULESETS["napoleonic"]
    state = ruleset.new_game(ruleset.resolve_options(options), setup)
    return structured(CONVERSIONS, Game(ruleset, state))


@pytest.mark.parametrize(
    ("width", "height"), [(2, 2), (26, 2), (2, 99), (26, 99)], ids=["2x2", "26x2", "2x99", "26x99"]
)
def test_napoleonic_boards_from_2x2_to_26x99_are_accepted(width: int, height: int) -> None:
    last = f"{'abcdefghijklmnopqrstuvwxyz'[width - 1]}{height}"
    rows = "1-1" if height == 2 else "2-3"  # both sides' deployment rows fit the board
    setup = f"board {width}x{height}; red: a1=G#R_G; black: {last}=G#B_G"
    state = _napoleonic_game(setup, deployment_rows=rows)
    game = CONVERSIONS.game_from_proto(state)
    assert (game.state.width, game.state.height) == (width, height)


@pytest.mark.parametrize(("width", "height"), [(1, 8), (27, 8), (8, 1), (8, 100), (0, 0)])
def test_napoleonic_boards_outside_2x2_to_26x99_are_refused(width: int, height: int) -> None:
    state = initial("napoleonic")
    state.napoleonic.width, state.napoleonic.height = width, height
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(state)
    assert (error.value.field, error.value.message) == (
        "state.napoleonic.width",
        f"board {width}x{height} is outside 2..26 x 2..99",
    )


def _guards(state: game_pb2.GameState) -> game_pb2.Piece:
    return state.pieces[index_of(state, "guards", "red")]


NAPOLEONIC_DETAIL_CASES: list[tuple[str, Callable[[game_pb2.GameState], None], str, str]] = [
    (
        "a player missing",
        lambda s: s.napoleonic.players.__delitem__(0),
        "state.napoleonic.players",
        "players must be red, black",
    ),
    (
        "a scenario not the option's",
        lambda s: setattr(s.napoleonic, "scenario", "grand_battle"),
        "state.napoleonic.scenario",
        "scenario 'grand_battle' is not the option scenario 'standard'",
    ),
    (
        "a deployment phase in a fixed game",
        lambda s: setattr(s.napoleonic, "phase", napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED),
        "state.napoleonic.phase",
        "phase deploy_sealed does not exist in a game with deployment fixed",
    ),
    (
        "a player surrendered without being out",
        lambda s: setattr(s.napoleonic.players[1], "surrendered", True),
        "state.napoleonic.players[1]",
        "player black: army '' is no player, or it surrendered without being out",
    ),
    (
        "a player's army no player",
        lambda s: setattr(s.napoleonic.players[0], "army", "white"),
        "state.napoleonic.players[0]",
        "player red: army 'white' is no player, or it surrendered without being out",
    ),
    (
        "a unit of no player",
        lambda s: setattr(_guards(s), "side", "white"),
        "state.pieces[{i}].side",
        "'white' is no player (red, black)",
    ),
    (
        "a unit of no type",
        lambda s: setattr(_guards(s), "kind", "dragon"),
        "state.pieces[{i}].kind",
        "'dragon' is no unit type (infantry, cavalry, artillery, guards, horse_artillery, "
        "dragoons, foot_guards, cuirassiers, heavy_infantry)",
    ),
]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [case[1:] for case in NAPOLEONIC_DETAIL_CASES],
    ids=[case[0] for case in NAPOLEONIC_DETAIL_CASES],
)
def test_napoleonic_details_name_the_field_at_fault(
    change: Callable[[game_pb2.GameState], None], field: str, message: str
) -> None:
    state = initial("napoleonic")
    i = index_of(state, "guards", "red")
    change(state)
    assert state_refusal(CONVERSIONS, state) == (
        "INVALID_STATE",
        field.format(i=i),
        message,
    )


TERRAIN = "state.napoleonic.terrain"


def _terrain(state: game_pb2.GameState) -> napoleonic_pb2.NapoleonicTerrain:
    return state.napoleonic.terrain


def adding(*entries: tuple[str, dict[str, str]]) -> Callable[[game_pb2.GameState], None]:
    """A change adding terrain entries: (list name, fields) each."""

    def change(state: game_pb2.GameState) -> None:
        for name, fields in entries:
            getattr(_terrain(state), name).add(**fields)

    return change


TERRAIN_CASES: list[tuple[str, Callable[[game_pb2.GameState], None], str, str]] = [
    (
        "a redoubt off the board",
        adding(("redoubts", {"cell": "z9", "owner": "red"})),
        f"{TERRAIN}.redoubts[0].cell",
        "'z9' is not a square of the 8x8 board",
    ),
    (
        "two redoubts on a square",
        adding(
            ("redoubts", {"cell": "d4", "owner": "red"}),
            ("redoubts", {"cell": "d4", "owner": "black"}),
        ),
        f"{TERRAIN}.redoubts[1]",
        "two redoubts on d4",
    ),
    (
        "a redoubt of no player",
        adding(("redoubts", {"cell": "d4", "owner": "white"})),
        f"{TERRAIN}.redoubts[0].owner",
        "'white' is no player (red, black)",
    ),
    (
        "a site off the board",
        adding(("constructions", {"cell": "z9", "builder": "red"})),
        f"{TERRAIN}.constructions[0].cell",
        "'z9' is not a square of the 8x8 board",
    ),
    (
        "two sites on a square",
        adding(
            ("constructions", {"cell": "d4", "builder": "red"}),
            ("constructions", {"cell": "d4", "builder": "red"}),
        ),
        f"{TERRAIN}.constructions[1]",
        "two redoubt sites on d4",
    ),
    (
        "a site of no player",
        adding(("constructions", {"cell": "d4", "builder": "white"})),
        f"{TERRAIN}.constructions[0].builder",
        "'white' is no player (red, black)",
    ),
    (
        "an obstacle from off the board",
        adding(("obstacles", {"a": "z9", "b": "d4"})),
        f"{TERRAIN}.obstacles[0].a",
        "'z9' is not a square of the 8x8 board",
    ),
    (
        "an obstacle to off the board",
        adding(("obstacles", {"a": "d4", "b": "z9"})),
        f"{TERRAIN}.obstacles[0].b",
        "'z9' is not a square of the 8x8 board",
    ),
    (
        "a diagonal obstacle",
        adding(("obstacles", {"a": "d4", "b": "e5"})),
        f"{TERRAIN}.obstacles[0]",
        "obstacle d4|e5 is not on an edge between orthogonal neighbours",
    ),
    (
        "an obstacle between squares apart",
        adding(("obstacles", {"a": "d4", "b": "d6"})),
        f"{TERRAIN}.obstacles[0]",
        "obstacle d4|d6 is not on an edge between orthogonal neighbours",
    ),
]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [case[1:] for case in TERRAIN_CASES],
    ids=[case[0] for case in TERRAIN_CASES],
)
def test_terrain_entries_name_the_entry_at_fault(
    change: Callable[[game_pb2.GameState], None], field: str, message: str
) -> None:
    state = initial("napoleonic")
    change(state)
    assert state_refusal(CONVERSIONS, state) == (
        "INVALID_STATE",
        field,
        message,
    )


@pytest.mark.parametrize("other", ["d5", "e4", "d3", "c4"], ids=["N", "E", "S", "W"])
def test_an_obstacle_may_stand_on_any_of_a_squares_four_edges(other: str) -> None:
    state = initial("napoleonic")
    _terrain(state).obstacles.add(a="d4", b=other)
    game = CONVERSIONS.game_from_proto(state)
    assert len(game.state.terrain.obstacles) == 1


def _war_detail(name: str, value: object) -> Callable[[game_pb2.GameState], None]:
    return lambda state: setattr(state.war, name, value)


def _a_second_king(state: game_pb2.GameState) -> None:
    state.pieces.add(kind="king", side="south", cell="e5")


def _a_third_machine(state: game_pb2.GameState) -> None:
    state.pieces.add(kind="flying_machine", side="north", cell="e5")


WAR_DETAIL_CASES: list[tuple[Callable[[game_pb2.GameState], None], str, str]] = [
    (
        _war_detail("north_reserve", 3),
        "state.war.north_reserve",
        "north_reserve is 3; a side has 2 Flying Machines",
    ),
    (
        _war_detail("south_citadel", "k1"),
        "state.war.south_citadel",
        "south_citadel 'k1' is not a cell a1..j10",
    ),
    (
        _war_detail("north_citadel", "k10"),
        "state.war.north_citadel",
        "north_citadel 'k10' is not a cell a1..j10",
    ),
    (
        _war_detail("en_passant", "z3"),
        "state.war.en_passant",
        "en_passant 'z3' is not a cell a1..j10",
    ),
    (
        _war_detail("side_to_move", "east"),
        "state.war.side_to_move",
        "side 'east' is neither south nor north",
    ),
    (_a_second_king, "state.pieces", "south has 2 king pieces; an army has 1"),
    (
        _a_third_machine,
        "state.pieces",
        "north has 3 Flying Machines placed and in reserve; a side has 2",
    ),
]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    WAR_DETAIL_CASES,
    ids=[case[2].split(";")[0] for case in WAR_DETAIL_CASES],
)
def test_war_details_name_the_field_at_fault(
    change: Callable[[game_pb2.GameState], None], field: str, message: str
) -> None:
    state = initial("war")
    change(state)
    assert state_refusal(CONVERSIONS, state) == (
        "INVALID_STATE",
        field,
        message,
    )


def test_a_war_turn_number_of_0_reads_as_1() -> None:
    state = initial("war")
    state.war.move_number = 0
    game = CONVERSIONS.game_from_proto(state)
    assert game.state.move == 1

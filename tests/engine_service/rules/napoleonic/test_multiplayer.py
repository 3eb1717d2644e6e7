"""Multiple armies, multiplayer and divided command (spec 10.6): one named test per ruling
of docs/multiplayer.md, each on a small position or a scenario of `scenarios.json`."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine_service.rules.base import OutcomeReason
from engine_service.rules.errors import RuleError
from engine_service.rules.game import AcceptDraw, DeclineDraw, Game, OfferDraw, Resign
from engine_service.rules.napoleonic.actions import (
    Attack,
    Commit,
    EndPhase,
    Move,
    NapoleonicAction,
    Place,
    Reveal,
    Support,
)
from engine_service.rules.napoleonic.deployment import (
    commitment,
    deployment_cells,
    legal_placements,
    random_player_array,
)
from engine_service.rules.napoleonic.endings import by_material
from engine_service.rules.napoleonic.state import NapoleonicState, Phase, Player
from engine_service.rules.position import read_position, write_position
from tests.engine_service.rules.napoleonic.helpers import RULESET, SEALED_RULESET

# Two alliances of two players on an 8x8 board: red and blue (south) against black and
# green (north). Red's artillery and blue's infantry can both reach black's d5.
ALLIES = "players: red/south black/north blue/south green/north"
JOINT = (
    f"board 8x8; {ALLIES}; red: d4=A h1=G; black: d5=I a8=G; blue: c5=I a1=G; "
    "green: e5=I h8=G; turn: red movement 0"
)
# Black's Guards on d5 (defence 2) against red's artillery (2) and blue's infantry (1).
GUARDS_FALL = (
    f"board 8x8; {ALLIES}; red: d4=A h1=G; black: d5=G b7=I c7=C; blue: c5=I a1=G; "
    "green: f7=I h8=G; turn: red attack_declaration 0; pending: red blue"
)


def start(text: str, **options: str) -> NapoleonicState:
    given = {"auto_skip_defence": "false", **options}
    return RULESET.new_game(RULESET.resolve_options(given), text)


def play(state: NapoleonicState, *actions: NapoleonicAction) -> NapoleonicState:
    for action in actions:
        state, _events = RULESET.apply(state, action)
    return state


def refused(state: NapoleonicState, action: NapoleonicAction) -> RuleError:
    with pytest.raises(RuleError) as failure:
        RULESET.apply(state, action)
    return failure.value


def scenario(name: str, **options: str) -> NapoleonicState:
    return RULESET.new_game(RULESET.resolve_options({"scenario": name, **options}))


def who(state: NapoleonicState, side: str) -> Player:
    player = state.player(side)
    assert player is not None
    return player


def round_trips(state: NapoleonicState) -> None:
    text = RULESET.setup_text(state)
    back = RULESET.new_game(state.options, text)
    assert back == state
    assert RULESET.setup_text(back) == text


# --- turn order -------------------------------------------------------------------------------


def test_turn_order_alternates_alliances_from_the_first_player() -> None:
    assert scenario("grand_battle_2v2").turn_order == ("red", "black", "blue", "green")
    assert scenario("grand_battle_2v2", first_player="blue").turn_order == (
        "blue",
        "black",
        "red",
        "green",
    )
    assert scenario("three_way", first_player="green").turn_order == ("green", "red", "black")


def test_turn_order_option_lists_every_player_once_from_the_first() -> None:
    state = scenario("grand_battle_2v2", turn_order="red,blue,black,green")
    assert state.turn_order == ("red", "blue", "black", "green")
    with pytest.raises(RuleError) as missing:
        scenario("grand_battle_2v2", turn_order="red,black,blue")
    assert missing.value.field == "options.turn_order"
    with pytest.raises(RuleError) as stranger:
        scenario("three_way", first_player="blue")
    assert stranger.value.field == "options.first_player"


def test_out_players_are_skipped_in_the_turn_order() -> None:
    state = start(GUARDS_FALL)
    state = play(state, Attack("red", "R_A", "B_G"), Attack("blue", "U_I", "B_G"))
    state = play(state, EndPhase("red"), EndPhase("blue"), EndPhase("black"), EndPhase("green"))
    assert not state.in_game("black")
    state = play(state, EndPhase("red"))  # no advance
    assert (state.active, state.phase) == ("blue", Phase.MOVEMENT)


# --- allied attacks and supports ------------------------------------------------------------


def test_allies_join_the_active_players_attacks_without_moving() -> None:
    state = play(start(JOINT), EndPhase("red"))
    assert (state.phase, RULESET.to_act(state)) == (Phase.ATTACK_DECLARATION, ("red", "blue"))
    assert refused(state, Move("blue", "U_I", "c6")).reason == "NOT_YOUR_TURN"
    state = play(state, Attack("blue", "U_I", "B_I"), Attack("red", "R_A", "B_I"))
    state = play(state, EndPhase("red"))
    assert RULESET.to_act(state) == ("blue",)  # the declaration waits for every ally
    state = play(state, EndPhase("blue"))
    assert state.phase is Phase.DEFENCE
    round_trips(state)


def joint_attack(red_unit: str) -> tuple[NapoleonicAction, ...]:
    """Red moves nothing, then red's `red_unit` and blue's U_I attack B_I together and both
    end the declaration: the defence is next."""
    return (
        EndPhase("red"),
        Attack("red", red_unit, "B_I"),
        Attack("blue", "U_I", "B_I"),
        EndPhase("red"),
        EndPhase("blue"),
    )


def test_allies_cannot_move_or_attack_in_the_active_players_movement() -> None:
    state = start(JOINT)
    assert RULESET.to_act(state) == ("red",)
    assert refused(state, Attack("blue", "U_I", "B_I")).reason == "NOT_YOUR_TURN"
    assert refused(state, Move("blue", "U_I", "c6")).reason == "NOT_YOUR_TURN"


def test_allied_attackers_do_not_advance() -> None:
    state = play(
        start(JOINT),
        *joint_attack("R_A"),
        EndPhase("black"),
        EndPhase("green"),
    )
    assert state.phase is Phase.ADVANCE
    assert [v.eligible for v in state.turn.vacancies] == [("R_A",)]
    assert RULESET.to_act(state) == ("red",)


def test_a_square_emptied_by_allies_alone_has_no_advance() -> None:
    text = (
        f"board 8x8; {ALLIES}; red: b2=A h1=G; black: d5=I a8=G; blue: c5=I d6=I a1=G; "
        "green: f7=I h8=G; turn: red movement 0"
    )
    state = play(start(text), EndPhase("red"), EndPhase("red"))
    state = play(state, Attack("blue", "U_I1", "B_I"), Attack("blue", "U_I2", "B_I"))
    state = play(state, EndPhase("blue"), EndPhase("black"), EndPhase("green"))
    assert state.unit("B_I") is None
    assert state.phase is Phase.MOVEMENT and state.active == "black"


def test_every_defender_and_its_allies_allocate_and_resolution_waits_for_all() -> None:
    state = play(
        start(JOINT),
        *joint_attack("R_A"),
    )
    assert RULESET.to_act(state) == ("black", "green")
    state = play(state, EndPhase("black"))
    assert state.phase is Phase.DEFENCE and RULESET.to_act(state) == ("green",)
    state = play(state, Support("green", "G_I", "B_I"))
    assert state.phase is Phase.DEFENCE
    state = play(state, EndPhase("green"))
    assert state.unit("B_I") is None  # 3 against 1 + green's support 1
    assert state.phase is Phase.ADVANCE


def test_allies_support_each_other_and_only_with_their_own_units() -> None:
    text = JOINT.replace("red: d4=A", "red: d4=I")  # attack 2 against 1 + green's 1: a tie
    state = play(
        start(text),
        *joint_attack("R_I"),
    )
    assert refused(state, Support("black", "G_I", "B_I")).reason == "SUPPORT_NOT_FRIENDLY"
    state = play(state, Support("green", "G_I", "B_I"), EndPhase("green"), EndPhase("black"))
    assert state.unit("B_I") is not None  # ties survive (7.3)


# --- a player's commander falls -------------------------------------------------------------


def fall(**options: str) -> NapoleonicState:
    state = start(GUARDS_FALL, **options)
    state = play(state, Attack("red", "R_A", "B_G"), Attack("blue", "U_I", "B_G"))
    return play(state, EndPhase("red"), EndPhase("blue"), EndPhase("black"), EndPhase("green"))


def test_losing_its_guards_puts_a_player_out_and_removes_its_army_by_default() -> None:
    state = fall()
    assert who(state, "black").out and not who(state, "black").surrendered
    assert not [u for u in state.units if u.side == "black"]
    assert state.outcome is None
    round_trips(state)


def test_on_commander_loss_army_stays_inert() -> None:
    state = fall(on_commander_loss="army_stays_inert")
    assert sorted(u.id for u in state.units if u.side == "black") == ["B_C", "B_I"]
    state = play(state, EndPhase("red"))
    assert "black" not in RULESET.to_act(state)
    assert state.active == "blue"
    round_trips(state)


def test_on_commander_loss_army_passes_to_ally() -> None:
    state = fall(on_commander_loss="army_passes_to_ally")
    assert sorted(u.id for u in state.units if u.side == "green") == ["B_C", "B_I", "G_G", "G_I"]
    assert sorted(state.army("green")) == sorted(["infantry", "cavalry", "infantry", "guards"])
    round_trips(state)


def test_an_alliance_wins_when_every_enemy_player_is_out_or_surrendered() -> None:
    text = GUARDS_FALL.replace(ALLIES, ALLIES.replace("green/north", "green/north!surrendered"))
    text = text.replace("green: f7=I h8=G; ", "")
    state = start(text)
    state = play(state, Attack("red", "R_A", "B_G"), Attack("blue", "U_I", "B_G"))
    state = play(state, EndPhase("red"), EndPhase("blue"))
    state = play(state, EndPhase("black"))
    outcome = state.outcome
    assert outcome is not None and state.phase is Phase.GAME_OVER
    assert (outcome.winner, outcome.winners, outcome.reason) == (
        "south",
        ("red", "blue"),
        OutcomeReason.ENEMIES_OUT,
    )
    round_trips(state)


# --- surrender, draws -------------------------------------------------------------------------


def test_one_player_of_an_alliance_may_surrender_alone() -> None:
    game: Game[Any] = Game(RULESET, scenario("grand_battle_2v2"))
    game, _events = game.apply("blue", Resign("blue"))
    assert game.outcome is None
    assert who(game.state, "blue").surrendered
    assert not [u for u in game.state.units if u.side == "blue"]
    assert game.to_act() == ("red",)
    game, _events = game.apply("black", Resign("black"))
    game, _events = game.apply("green", Resign("green"))
    assert game.outcome is not None and game.outcome.winner == "south"
    assert game.outcome.winning_sides == ("red", "blue")


def test_a_surrendering_active_player_ends_its_turn() -> None:
    game: Game[Any] = Game(RULESET, scenario("three_way"))
    game, _events = game.apply("red", Resign("red"))
    assert game.to_act() == ("black",)
    with pytest.raises(RuleError) as again:
        game.apply("red", Resign("red"))
    assert again.value.reason == "ILLEGAL_ACTION"
    with pytest.raises(RuleError) as out:
        game.apply("red", EndPhase("red"))
    assert out.value.reason == "NOT_YOUR_TURN"


def test_a_draw_needs_every_remaining_player() -> None:
    game: Game[Any] = Game(RULESET, scenario("grand_battle_2v2"))
    game, _e = game.apply("red", OfferDraw("red"))
    game, _e = game.apply("black", AcceptDraw("black"))
    game, _e = game.apply("blue", AcceptDraw("blue"))
    assert game.outcome is None and game.draw_accepted == ("black", "blue")
    game, _e = game.apply("green", AcceptDraw("green"))
    assert game.outcome is not None and game.outcome.reason is OutcomeReason.AGREEMENT


def test_a_draw_offer_falls_with_one_refusal_and_ignores_players_who_are_out() -> None:
    game: Game[Any] = Game(RULESET, scenario("three_way"))
    game, _e = game.apply("green", Resign("green"))
    game, _e = game.apply("black", OfferDraw("black"))
    game, _e = game.apply("red", DeclineDraw("red"))
    assert game.draw_offer is None
    game, _e = game.apply("black", OfferDraw("black"))
    with pytest.raises(RuleError):
        game.apply("green", AcceptDraw("green"))
    game, _e = game.apply("red", AcceptDraw("red"))
    assert game.outcome is not None and game.outcome.reason is OutcomeReason.AGREEMENT


# --- divided command --------------------------------------------------------------------------


def test_divided_command_separate_turns_give_each_commander_its_own_turn() -> None:
    state = scenario("divided_command")
    assert state.turn_order == ("red", "black", "blue", "green")
    assert RULESET.to_act(state) == ("red",)
    assert {u.side for u in state.units} == {"red", "black", "blue", "green"}
    blue_unit = next(u for u in state.units if u.side == "blue")
    assert refused(state, Move("red", blue_unit.id, "a5")).reason == "NOT_OWN_UNIT"
    state = play(state, EndPhase("red"))
    assert RULESET.to_act(state) == ("red", "blue")  # the co-commander may join, unmoved
    state = play(state, EndPhase("red"), EndPhase("blue"))
    assert (state.active, RULESET.to_act(state)) == ("black", ("black",))


def test_divided_command_merged_side_turn_merges_the_commanders_submissions() -> None:
    state = scenario("divided_command", divided_command_turns="merged_side_turn")
    assert RULESET.to_act(state) == ("red", "blue")
    red = max((u for u in state.units if u.side == "red"), key=lambda u: u.cell)
    blue = max((u for u in state.units if u.side == "blue"), key=lambda u: u.cell)
    ahead = state.geo.names[red.cell + state.width]
    state = play(state, Move("red", red.id, ahead))
    state = play(state, EndPhase("red"))
    assert RULESET.to_act(state) == ("blue",)
    blue_ahead = state.geo.names[blue.cell + state.width]
    state = play(state, Move("blue", blue.id, blue_ahead), EndPhase("blue"))
    assert (state.phase, RULESET.to_act(state)) == (Phase.ATTACK_DECLARATION, ("red", "blue"))
    state = play(state, EndPhase("red"), EndPhase("blue"))
    assert (state.active, RULESET.to_act(state)) == ("black", ("black", "green"))
    round_trips(state)


def test_divided_command_merged_attacks_wait_for_every_commander_to_move() -> None:
    text = (
        "board 8x8; players: red/south black/north blue/south@red green/north@black; "
        "red: d4=A h1=G; black: d5=I a8=G; blue: c5=I; green: e7=I; turn: red movement 0; "
        "pending: red blue"
    )
    state = start(text, divided_command_turns="merged_side_turn")
    assert refused(state, Attack("red", "R_A", "B_I")).reason == "WRONG_PHASE"
    state = play(state, EndPhase("blue"), Attack("red", "R_A", "B_I"))
    assert state.phase is Phase.ATTACK_DECLARATION
    assert RULESET.to_act(state) == ("red", "blue")


def test_the_shared_guards_fall_puts_every_commander_of_the_army_out() -> None:
    text = (
        "board 8x8; players: red/south black/north blue/south@red green/north@black; "
        "red: d4=A h1=G; black: d5=G; blue: c5=I; green: f7=I b8=C; "
        "turn: red attack_declaration 0; pending: red blue"
    )
    state = start(text)
    state = play(state, Attack("red", "R_A", "B_G"), Attack("blue", "U_I", "B_G"))
    state = play(state, EndPhase("red"), EndPhase("blue"), EndPhase("black"), EndPhase("green"))
    assert who(state, "black").out and who(state, "green").out
    assert state.outcome is not None and state.outcome.winners == ("red", "blue")


def test_a_surrendering_commander_passes_its_share_to_its_co_commander() -> None:
    game: Game[Any] = Game(RULESET, scenario("divided_command"))
    guards = next(u for u in game.state.units if u.side == "red" and u.kind == "guards")
    game, _e = game.apply("red", Resign("red"))
    state = game.state
    assert who(state, "red").surrendered and game.outcome is None
    assert not [u for u in state.units if u.side == "red"]
    assert state.unit(guards.id) is not None and state.unit(guards.id).side == "blue"
    assert game.to_act() == ("black",)


# --- deployment with more players ----------------------------------------------------------


def test_each_player_deploys_on_its_own_stretch_of_its_edge() -> None:
    state = scenario("three_way", deployment="attack_at_dawn")
    names = state.geo.names
    west = sorted(names[c] for c in deployment_cells(state, "green"))
    assert west == sorted(f"{f}{r}" for f in "bc" for r in range(3, 11))
    south = {names[c] for c in deployment_cells(state, "red")}
    assert south == {f"{f}{r}" for f in "efghijkl" for r in (2, 3)}
    assert RULESET.to_act(state) == ("red", "black", "green")


def test_a_forfeited_reveal_puts_only_that_player_out() -> None:
    state = scenario("three_way", deployment="attack_at_dawn")
    arrays = {}
    for side in ("red", "black", "green"):
        placements, salt = random_player_array(state, side, 7)
        arrays[side] = (placements, salt)
        state = play(state, Commit(side, commitment(placements, salt)))
    assert state.phase is Phase.DEPLOY_REVEAL
    state = play(state, Reveal("black", arrays["black"][0], bytes(32)))  # the wrong salt
    assert who(state, "black").out and state.outcome is None
    for side in ("red", "green"):
        state = play(state, Reveal(side, *arrays[side]))
    assert state.phase is Phase.MOVEMENT
    assert {u.side for u in state.units} == {"red", "green"}
    assert RULESET.to_act(state) == ("red",)


def test_marching_orders_placement_passes_along_the_turn_order_skipping_players_done() -> None:
    # Turn order blue, black, red, green (first_player blue; the players are listed in
    # another order). Green has placed its whole army; blue has two units to place, red and
    # black three each. From red, placement goes to the next player in the turn order with
    # something left: blue (green is skipped), then black, red again; once blue is done,
    # red passes to black.
    text = (
        f"board 8x8; {ALLIES}; green: h7=G; army red: 2I 1G; army black: 2I 1G; "
        "army blue: 1I 1G; army green: 1G; turn: red placement 0; placing: red 0"
    )
    state = start(text, deployment="marching_orders", first_player="blue")
    assert state.turn_order == ("blue", "black", "red", "green")
    placers = []
    while state.phase is Phase.PLACEMENT:
        (side,) = RULESET.to_act(state)
        placers.append(side)
        kind, cell = legal_placements(state, side)[0]
        state = play(state, Place(side, kind, state.geo.names[cell]))
    assert placers == ["red", "blue", "black", "red", "blue", "black", "red", "black"]
    assert (state.phase, state.active) == (Phase.MOVEMENT, "blue")


def test_adjudication_by_material_counts_alliances() -> None:
    state = start(JOINT)
    outcome = by_material(state, "stopped")
    # south: artillery 2 + infantry 1; north: infantry 1 + infantry 1 (Guards count 0).
    assert (outcome.winner, outcome.winners) == ("south", ("red", "blue"))
    assert "south 3, north 2" in outcome.message


SURRENDER_CONFIGS = [
    {"scenario": "three_way", "deployment": "attack_at_dawn"},
    {"scenario": "grand_battle_2v2", "deployment": "marching_orders"},
    {"scenario": "divided_command", "divided_command_turns": "merged_side_turn"},
    {"scenario": "divided_command", "on_commander_loss": "army_passes_to_ally"},
    {"scenario": "grand_battle_2v2", "on_commander_loss": "army_stays_inert"},
]


@pytest.mark.parametrize("options", SURRENDER_CONFIGS, ids=lambda o: "-".join(o.values()))
def test_surrenders_at_any_moment_leave_a_consistent_state(options: dict[str, str]) -> None:
    """Random games where players surrender in any phase (deployment, movement, a
    declaration, their own defence, a merged side-turn): every state is consistent and its
    position text reads back to it."""
    for seed in range(3):
        rng = random.Random(f"surrender {seed} {options}")
        game: Game[Any] = Game(
            SEALED_RULESET, SEALED_RULESET.new_game(SEALED_RULESET.resolve_options(options))
        )
        for _ply in range(1500):
            if game.outcome is not None:
                break
            if rng.random() < 0.01:
                side = rng.choice(SEALED_RULESET.remaining(game.state))
                game, _events = game.apply(side, Resign(side))
            else:
                action = SEALED_RULESET.random_action(game.state, rng)
                assert action is not None
                game, _events = game.apply(action.side, action)
            assert SEALED_RULESET.check_state(game.state) == []
            text = write_position(game)
            back = read_position(SEALED_RULESET, text)
            assert back.state == game.state and write_position(back) == text

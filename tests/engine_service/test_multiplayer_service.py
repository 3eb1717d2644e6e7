"""Napoleonic Chess with more than two players (10.6, 10.7) through a real engine server:
scenarios in ListGames and DescribeGame, N-player turns, surrender of one player, draws
agreed by every remaining player, and ResolveBattle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from tests.engine_service.conftest import applying, refused
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

pytestmark = pytest.mark.integration

MULTIPLAYER = {
    "grand_battle_2v2": [
        ("red", "south"),
        ("black", "north"),
        ("blue", "south"),
        ("green", "north"),
    ],
    "three_way": [("red", "red"), ("black", "black"), ("green", "green")],
    "divided_command": [
        ("red", "south"),
        ("black", "north"),
        ("blue", "south"),
        ("green", "north"),
    ],
}


# The most a battle may take (`Limits.max_battle_seconds`): a test of a turn limit is not
# stopped by the clock first on a busy machine.
LARGEST_BATTLE_BUDGET = duration_pb2.Duration(seconds=120)


def new_state(stub: engine_pb2_grpc.RulesEngineStub, scenario: str, **options: str) -> Any:
    request = engine_pb2.NewGameRequest(
        game="napoleonic", options={"scenario": scenario, **options}
    )
    return stub.NewGame(request).state


def apply(stub: engine_pb2_grpc.RulesEngineStub, state: Any, side: str, text: str) -> Any:
    request = applying(state, side, notation=text)
    return stub.ApplyActions(request).state


def test_list_games_names_every_scenario_with_its_players(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    games = stub.ListGames(engine_pb2.ListGamesRequest()).games
    napoleonic = next(g for g in games if g.id == "napoleonic")
    scenarios = {s.name: s for s in napoleonic.scenarios}
    assert {"standard", *MULTIPLAYER} <= set(scenarios)
    for name, players in MULTIPLAYER.items():
        assert sorted((s.id, s.alliance) for s in scenarios[name].sides) == sorted(players)
        assert all(s.colour and s.name for s in scenarios[name].sides)
    assert [(s.id, s.alliance) for s in scenarios["standard"].sides] == [
        ("red", "red"),
        ("black", "black"),
    ]
    war = next(g for g in games if g.id == "war")
    assert not war.scenarios
    assert [s.alliance for s in war.sides] == [s.id for s in war.sides]


@pytest.mark.parametrize("scenario", sorted(MULTIPLAYER))
def test_describe_game_gives_the_scenario_players_in_turn_order(
    stub: engine_pb2_grpc.RulesEngineStub, scenario: str
) -> None:
    answer = stub.DescribeGame(
        engine_pb2.DescribeGameRequest(game="napoleonic", options={"scenario": scenario})
    )
    sides = [(s.id, s.alliance) for s in answer.info.sides]
    assert sorted(sides) == sorted(MULTIPLAYER[scenario])
    assert [s.id for s in answer.board.sides] == [s for s, _a in sides]
    assert list(answer.initial_state.napoleonic.turn_order) == [s for s, _a in sides]
    assert list(answer.initial_state.to_act) == [sides[0][0]]
    # Every player has deployment squares to draw.
    tags = {t for cell in answer.board.cells for t in cell.tags}
    assert {f"deployment:{s}" for s, _a in sides} <= tags


def test_a_two_player_description_is_unchanged(stub: engine_pb2_grpc.RulesEngineStub) -> None:
    answer = stub.DescribeGame(engine_pb2.DescribeGameRequest(game="napoleonic"))
    assert [(s.id, s.alliance) for s in answer.info.sides] == [("red", "red"), ("black", "black")]


# --- every RPC for N players ------------------------------------------------------------------


def legal(stub: engine_pb2_grpc.RulesEngineStub, state: Any) -> Any:
    return stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state))


def test_the_defence_takes_a_submission_from_each_defender(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    position = (
        "board 8x8; players: red/south black/north blue/south green/north; red: d4=A h1=G; "
        "black: d5=I a8=G; blue: c5=I a1=G; green: e5=I h8=G; turn: red movement 0; "
        "options: auto_skip_defence=false"
    )
    state = stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", position=position)).state
    assert list(state.to_act) == ["red"]
    state = apply(stub, state, "red", "end")
    assert list(state.to_act) == ["red", "blue"]
    assert sorted({a.action.side for a in legal(stub, state).actions}) == ["blue", "red"]
    state = apply(stub, state, "blue", "attack c5>d5")
    state = apply(stub, state, "red", "attack d4>d5")
    state = apply(stub, state, "red", "end")
    state = apply(stub, state, "blue", "end")
    assert list(state.to_act) == ["black", "green"]
    assert list(state.napoleonic.turn.pending_defenders) == ["black", "green"]
    error = refused(
        stub.ParseAction, engine_pb2.ParseActionRequest(state=state, text="end")
    )  # two players may act: the caller says which
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    state = apply(stub, state, "green", "support e5>d5")
    state = apply(stub, state, "black", "end")
    assert list(state.to_act) == ["green"]
    answer = stub.ApplyActions(applying(state, "green", notation="end"))
    tally = next(e.combat for e in answer.events if e.HasField("combat"))
    assert (tally.attack_total, tally.defence_total, tally.eliminated) == (3, 2, True)
    assert [s.unit for s in tally.supports] == ["G_I"]


def test_one_player_surrenders_and_the_state_shows_it_out(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    state = new_state(stub, "three_way")
    answer = stub.ApplyActions(applying(state, "black", resign=game_pb2.Resign()))
    state = answer.state
    assert [(e.kind, e.side) for e in answer.events] == [(game_pb2.EVENT_KIND_PLAYER_OUT, "black")]
    players = {p.id: p for p in state.napoleonic.players}
    assert players["black"].out and players["black"].surrendered
    assert not state.HasField("outcome")
    assert not [p for p in state.pieces if p.side == "black"]
    error = refused(
        stub.ApplyActions,
        applying(state, "black", notation="end"),
    )
    assert error.reason == "NOT_YOUR_TURN"
    state = stub.ApplyActions(applying(state, "green", resign=game_pb2.Resign())).state
    assert state.outcome.winner == "red" and list(state.outcome.winners) == ["red"]
    assert state.outcome.reason == game_pb2.OUTCOME_REASON_ENEMIES_OUT


def test_the_draw_waits_for_every_remaining_player_on_the_wire(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    state = new_state(stub, "grand_battle_2v2")
    for side, kind in (("red", "offer_draw"), ("blue", "accept_draw"), ("black", "accept_draw")):
        action = game_pb2.Action(side=side)
        getattr(action, kind).SetInParent()
        state = stub.ApplyActions(engine_pb2.ApplyActionsRequest(state=state, actions=[action]))
        state = state.state
    assert state.draw_offer == "red" and list(state.draw_accepted) == ["blue", "black"]
    assert not state.HasField("outcome")
    back = stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", position=state.position))
    assert back.state.to_act == state.to_act
    action = game_pb2.Action(side="green")
    action.accept_draw.SetInParent()
    state = stub.ApplyActions(engine_pb2.ApplyActionsRequest(state=state, actions=[action])).state
    assert state.outcome.reason == game_pb2.OUTCOME_REASON_AGREEMENT


def test_a_multiplayer_game_replays_from_its_record(stub: engine_pb2_grpc.RulesEngineStub) -> None:
    state = new_state(stub, "divided_command", divided_command_turns="merged_side_turn")
    initial = state
    actions = []
    for _ in range(40):
        answer = stub.SuggestAction(
            engine_pb2.SuggestActionRequest(
                state=state,
                side=state.to_act[0],
                level=2,
                seed=3,
                time_budget=duration_pb2.Duration(nanos=50_000_000),
            )
        )
        actions.append(answer.action)
        state = stub.ApplyActions(
            engine_pb2.ApplyActionsRequest(state=state, actions=[answer.action])
        ).state
    record = stub.WriteRecord(
        engine_pb2.WriteRecordRequest(initial_state=initial, actions=actions)
    ).record
    replayed = stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record)).final_state
    assert replayed.position == state.position


# --- hidden deployment with three players ----------------------------------------------------


def withheld_for(state: Any, viewer: str) -> Any:
    """A server's copy of a state for `viewer`: other players' arrays withheld (docs)."""
    parts = []
    for section in state.position.split("; "):
        head, sep, _body = section.partition(": ")
        word, _space, player = head.partition(" ")
        hidden = sep and word in ("revealed", "sealed") and player != viewer
        parts.append(f"{head}: withheld" if hidden else section)
    return game_pb2.GameState(game="napoleonic", position="; ".join(parts))


ARRAYS = {
    "red": "e2=A f2=C g2=C i2=G j2=C k2=C l2=A e3=I f3=I g3=I h3=I i3=I j3=I k3=I l3=I",
    "black": "e11=A f11=C g11=C i11=G j11=C k11=C l11=A e10=I f10=I g10=I h10=I i10=I j10=I "
    "k10=I l10=I",
    "green": "b3=A b4=C b5=C b7=G b8=C b9=C b10=A c3=I c4=I c5=I c6=I c7=I c8=I c9=I c10=I",
}
SALTS = {side: f"{i + 1:02x}" * 32 for i, side in enumerate(ARRAYS)}


def squares(side: str) -> list[str]:
    return [item.split("=")[0] for item in ARRAYS[side].split()]


def test_hidden_deployment_with_three_players_never_shows_an_array_before_the_reveal(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    state = new_state(stub, "three_way", deployment="attack_at_dawn")
    assert list(state.to_act) == ["red", "black", "green"]
    seen_by: dict[str, list[str]] = {side: [] for side in ARRAYS}  # what each other player saw

    def step(state: Any, side: str, text: str) -> Any:
        answer = stub.ApplyActions(applying(state, side, notation=text))
        for other in ARRAYS:
            if other != side:  # what a server may pass on to the others
                seen_by[other] += [a.public_notation for a in answer.applied]
                seen_by[other] += [e.text for e in answer.events]
                seen_by[other] += [" ".join(e.cells) for e in answer.events]
                seen_by[other].append(withheld_for(answer.state, other).position)
        return answer.state

    for side, array in ARRAYS.items():
        state = step(state, side, f"commit {array} salt {SALTS[side]}")
    assert state.napoleonic.phase == 2  # reveal
    state = step(state, "red", f"reveal {ARRAYS['red']} salt {SALTS['red']}")
    # Black acts on its own copy, which withholds red's array; the engine accepts it.
    black_view = withheld_for(state, "black")
    assert list(legal(stub, black_view).to_act) == ["black", "green"]
    black_state = step(black_view, "black", f"reveal {ARRAYS['black']} salt {SALTS['black']}")
    assert "revealed red: withheld" in black_state.position
    # Green's reveal completes the deployment: not from a copy that withholds arrays.
    state = step(state, "black", f"reveal {ARRAYS['black']} salt {SALTS['black']}")
    error = refused(
        stub.ApplyActions,
        engine_pb2.ApplyActionsRequest(
            state=withheld_for(state, "green"),
            actions=[
                game_pb2.Action(
                    side="green", notation=f"reveal {ARRAYS['green']} salt {SALTS['green']}"
                )
            ],
        ),
    )
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    before_reveal = {side: list(texts) for side, texts in seen_by.items()}
    for viewer, texts in before_reveal.items():
        for owner, array in ARRAYS.items():
            if owner == viewer:
                continue
            text = " ".join(texts)
            assert array not in text
            assert SALTS[owner] not in text
            assert not all(f" {sq}" in f" {text}" for sq in squares(owner)[:6]), (viewer, owner)
    state = step(state, "green", f"reveal {ARRAYS['green']} salt {SALTS['green']}")
    assert state.napoleonic.phase == 5  # movement: every array laid out
    assert len(state.pieces) == 45


def test_sealed_deployment_with_three_players_shows_no_ciphertext_to_others(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    state = new_state(stub, "three_way", deployment="attack_at_dawn", attack_at_dawn_mode="sealed")
    for side in ("red", "black"):
        answer = stub.ApplyActions(applying(state, side, notation=f"seal {ARRAYS[side]}"))
        assert ARRAYS[side] not in answer.applied[0].public_notation
        assert not any(sq in e.text for e in answer.events for sq in squares(side)[:3])
        state = answer.state
    green_view = withheld_for(state, "green")
    assert "sealed red: withheld" in green_view.position
    assert list(legal(stub, green_view).to_act) == ["green"]
    state = apply(stub, state, "green", f"seal {ARRAYS['green']}")
    assert state.napoleonic.phase == 5 and len(state.pieces) == 45


# --- ResolveBattle (10.7) ---------------------------------------------------------------------


def test_resolve_battle_plays_a_supplied_position_out_and_returns_the_survivors(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    position = (
        "board 8x8; players: red/south black/north blue/south; red: d4=A c5=I a1=G; "
        "black: d5=G a8=I h8=C; blue: f1=I h1=G; turn: red movement 0"
    )
    state = stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", position=position)).state
    answer = stub.ResolveBattle(
        engine_pb2.ResolveBattleRequest(
            state=state, level=5, seed=1, time_budget=duration_pb2.Duration(seconds=20)
        ),
        timeout=60,
    )
    assert answer.finished and answer.outcome.winner == "south"
    assert list(answer.outcome.winners) == ["red", "blue"]
    assert answer.final_state.outcome == answer.outcome
    assert {p.side for p in answer.survivors} <= {"red", "blue"}
    assert len(answer.survivors) == len(answer.final_state.pieces)
    # Red declares its two attacks on the Guards (blue has nothing to attack with), black
    # cannot support; before them red's Guards may step aside (the strongest level varies
    # its choice among near-equal squares by the seed), nothing else.
    attacks = [action for action in answer.actions if not action.startswith("move a1-")]
    assert attacks == ["attack d4>d5", "attack c5>d5", "end", "end"], list(answer.actions)
    assert answer.turns == 0  # the battle ended within the first player-turn
    # The same request plays the same battle.
    again = stub.ResolveBattle(
        engine_pb2.ResolveBattleRequest(
            state=state, level=5, seed=1, time_budget=duration_pb2.Duration(seconds=20)
        ),
        timeout=60,
    )
    assert list(again.actions) == list(answer.actions)


def test_a_stopped_battle_is_adjudicated_by_material(stub: engine_pb2_grpc.RulesEngineStub) -> None:
    state = new_state(stub, "grand_battle_2v2")
    # The turn limit stops it, not the clock (the default 10 s ran out before the first
    # turn's end on a machine at load 45).
    request = engine_pb2.ResolveBattleRequest(
        state=state, level=1, max_turns=2, seed=2, time_budget=LARGEST_BATTLE_BUDGET
    )
    answer = stub.ResolveBattle(request, timeout=180)
    assert not answer.finished and answer.turns == 2
    assert answer.outcome.reason == game_pb2.OUTCOME_REASON_TURN_LIMIT
    assert "material" in answer.outcome.message
    assert not answer.final_state.HasField("outcome")  # the game itself goes on


def test_a_battle_without_a_turn_limit_stops_after_200_player_turns(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    # Two lone Guards cannot eliminate each other (attack 1 against defence 2, 3.1), so only
    # the default turn limit of 200 player-turns ends the battle; Guards count no points
    # (8), so material is equal: a draw.
    position = "board 8x8; red: a1=G; black: h8=G; turn: red movement 0"
    state = stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", position=position)).state
    answer = stub.ResolveBattle(
        engine_pb2.ResolveBattleRequest(
            state=state, seed=1, time_budget=duration_pb2.Duration(seconds=100)
        ),
        timeout=120,
    )
    assert not answer.finished and answer.turns == 200
    assert answer.outcome.reason == game_pb2.OUTCOME_REASON_TURN_LIMIT
    assert answer.outcome.winner == "" and not answer.outcome.winners
    assert answer.final_state.napoleonic.turn_number == 200


def test_a_battle_is_played_at_level_3_unless_asked(stub: engine_pb2_grpc.RulesEngineStub) -> None:
    state = new_state(stub, "grand_battle_2v2")

    def actions(level: int) -> list[str]:
        request = engine_pb2.ResolveBattleRequest(
            state=state, level=level, max_turns=2, seed=5, time_budget=LARGEST_BATTLE_BUDGET
        )
        return list(stub.ResolveBattle(request, timeout=180).actions)

    unasked = actions(0)
    assert unasked == actions(3)
    assert unasked != actions(1)


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (engine_pb2.ResolveBattleRequest(), "state"),
        (engine_pb2.ResolveBattleRequest(level=9, state=game_pb2.GameState(game="war")), "level"),
        (
            engine_pb2.ResolveBattleRequest(
                state=game_pb2.GameState(game="war"), time_budget=duration_pb2.Duration(seconds=999)
            ),
            "time_budget",
        ),
        (
            engine_pb2.ResolveBattleRequest(
                state=game_pb2.GameState(game="war"), time_budget=duration_pb2.Duration()
            ),
            "time_budget",
        ),
        (
            engine_pb2.ResolveBattleRequest(state=game_pb2.GameState(game="war"), max_turns=10001),
            "max_turns",
        ),
    ],
)
def test_resolve_battle_refuses_bad_requests(
    stub: engine_pb2_grpc.RulesEngineStub, request_: Any, field: str
) -> None:
    error = refused(stub.ResolveBattle, request_)
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert error.fields[0][0] == field


def test_resolve_battle_refuses_other_games_and_deployments(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    war = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
    error = refused(stub.ResolveBattle, engine_pb2.ResolveBattleRequest(state=war))
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    deploying = new_state(stub, "three_way", deployment="attack_at_dawn")
    error = refused(stub.ResolveBattle, engine_pb2.ResolveBattleRequest(state=deploying))
    assert error.reason == "WRONG_PHASE"


# --- state validation of the new fields -----------------------------------------------------


PLAYERS_FIELD = "state.napoleonic.players"


def structured(stub: engine_pb2_grpc.RulesEngineStub, scenario: str) -> Any:
    """A state in the structured form only (no position): the fields are read one by one."""
    state = new_state(stub, scenario)
    state.ClearField("position")
    return state


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda s: setattr(s.napoleonic.players[1], "army", "purple"), "state.napoleonic.players"),
        (
            lambda s: setattr(s.napoleonic.players[2], "surrendered", True),
            "state.napoleonic.players",
        ),
        (lambda s: s.napoleonic.turn.pending_players.append("orange"), "state.napoleonic.turn"),
        (lambda s: s.draw_accepted.append("black"), "state.draw_accepted"),
        (lambda s: setattr(s.napoleonic.players[3], "id", "white"), PLAYERS_FIELD),
        # An alliance the position text cannot carry (found by the mutation property test:
        # the state was accepted, and the engine's own answer then refused).
        (lambda s: setattr(s.napoleonic.players[0], "alliance", ";"), PLAYERS_FIELD),
        (lambda s: setattr(s.napoleonic.players[0], "alliance", "x y"), PLAYERS_FIELD),
    ],
)
def test_inconsistent_multiplayer_states_are_refused_naming_the_field(
    stub: engine_pb2_grpc.RulesEngineStub, mutate: Callable[[Any], None], field: str
) -> None:
    state = structured(stub, "grand_battle_2v2")
    assert legal(stub, state).to_act == ["red"]
    mutate(state)
    error = refused(stub.ListLegalActions, engine_pb2.ListLegalActionsRequest(state=state))
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert error.fields and error.fields[0][0].startswith(field)


@pytest.mark.parametrize(
    "position",
    [
        # two alliances needed
        "board 8x8; players: red/a black/a; red: a1=G; black: h8=G; turn: red movement 0",
        # an alliance id is a word
        "board 8x8; players: red/a=b black/b; red: a1=G; black: h8=G; turn: red movement 0",
        # a shared army must be an army of the same alliance
        "board 8x8; players: red/a black/b blue/a@black; red: a1=G; black: h8=G; blue: b1=I; "
        "turn: red movement 0",
        # an enemy cannot be pending in one's declaration
        "board 8x8; players: red/a black/b blue/a; red: a1=G; black: h8=G; blue: b1=I; "
        "turn: red attack_declaration 0; pending: red black",
        # the active player cannot be out
        "board 8x8; players: red/a!out black/b blue/a; black: h8=G; blue: b1=I; "
        "turn: red movement 0",
        # one alliance left and no outcome
        "board 8x8; players: red/a black/b!out blue/a; red: a1=G; blue: b1=I; turn: red movement 0",
        # the winner of a game of alliances is an alliance
        "board 8x8; players: red/a black/b!out blue/a; red: a1=G; blue: b1=I; "
        'turn: red game_over 0; outcome: red enemies_out "red wins"',
    ],
)
def test_impossible_multiplayer_positions_are_refused(
    stub: engine_pb2_grpc.RulesEngineStub, position: str
) -> None:
    error = refused(stub.NewGame, engine_pb2.NewGameRequest(game="napoleonic", position=position))
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT

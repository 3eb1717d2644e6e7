"""Every RulesEngine RPC, for every game, against a real server on loopback."""

from __future__ import annotations

import random
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from engine_service.convert import conversions
from engine_service.convert.tags import tag_key
from engine_service.rules import rulesets
from engine_service.rules.game import Game
from tests.conftest import TEST_SEAL_KEY
from tests.engine_service.conftest import applying, refused
from wargame.v1 import engine_pb2, engine_pb2_grpc, errors_pb2, game_pb2

pytestmark = pytest.mark.integration

GAMES = ("war", "battle", "napoleonic")


def new_state(
    stub: engine_pb2_grpc.RulesEngineStub, game: str, **options: str
) -> game_pb2.GameState:
    return stub.NewGame(engine_pb2.NewGameRequest(game=game, options=options)).state


def played(
    stub: engine_pb2_grpc.RulesEngineStub, game: str, plies: int, seed: int = 1
) -> game_pb2.GameState:
    """A state after `plies` random legal actions chosen through the RPCs."""
    rng = random.Random(seed)
    state = new_state(stub, game)
    for _ in range(plies):
        actions = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions
        if not actions or state.HasField("outcome"):
            break
        choice = rng.choice(actions)
        state = stub.ApplyActions(
            engine_pb2.ApplyActionsRequest(state=state, actions=[choice.action])
        ).state
    return state


# -- ListGames / DescribeGame / NewGame ---------------------------------------------------


def test_list_games_gives_every_ruleset_with_options_defaults_and_presets(stub) -> None:
    games = {info.id: info for info in stub.ListGames(engine_pb2.ListGamesRequest()).games}
    assert set(games) == set(GAMES)
    for game_id, info in games.items():
        core = rulesets()[game_id]
        assert [o.name for o in info.options] == [spec.name for spec in core.option_specs]
        assert all(
            o.default_value == spec.default
            for o, spec in zip(info.options, core.option_specs, strict=True)
        )
        assert all(o.description and o.allowed_text for o in info.options)
        assert [side.id for side in info.sides] == [side.id for side in core.sides]
        assert info.summary
    assert {p.name for p in games["napoleonic"].presets} >= {"casual", "ranked"}


@pytest.mark.parametrize("game", GAMES)
def test_describe_game_draws_any_board(stub, game: str) -> None:
    reply = stub.DescribeGame(engine_pb2.DescribeGameRequest(game=game))
    board = reply.board
    expected_cells = {"war": 100, "battle": 139, "napoleonic": 64}[game]
    assert len(board.cells) == expected_cells
    assert len({cell.name for cell in board.cells}) == expected_cells
    kinds = {kind.id for kind in board.piece_kinds}
    assert all(kind.name and kind.letter and kind.glyph for kind in board.piece_kinds)
    assert {piece.kind for piece in reply.initial_state.pieces} <= kinds
    assert {piece.cell for piece in reply.initial_state.pieces} <= {
        cell.name for cell in board.cells
    }
    assert board.summary and board.notation and board.width > 0 and board.height > 0


def test_describe_battle_shows_river_fords_and_bridge(stub) -> None:
    board = stub.DescribeGame(engine_pb2.DescribeGameRequest(game="battle")).board
    tags = {cell.name: set(cell.tags) for cell in board.cells}
    assert "ford" in tags["47"] and "ford" in tags["83"] and "bridge" in tags["70"]
    assert any(feature.kind == "river" for feature in board.features)
    assert all(cell.shape == 2 for cell in board.cells)  # CELL_SHAPE_DIAMOND


@pytest.mark.parametrize("game", GAMES)
def test_new_game_matches_the_rules_core(stub, game: str) -> None:
    reply = stub.NewGame(engine_pb2.NewGameRequest(game=game))
    core = rulesets()[game]
    initial = core.new_game(core.resolve_options({}))
    assert reply.setup == core.setup_text(initial)
    assert reply.state.game == game and reply.state.ply == 0
    assert list(reply.state.to_act) == list(core.to_act(initial))
    assert dict(reply.state.options) == core.resolve_options({}).as_text()


def test_new_game_takes_options_and_set_up(stub) -> None:
    state = new_state(stub, "war", first_player="north")
    assert list(state.to_act) == ["north"]
    setup = "10/10/10/3t6/2T7/10/10/10/10/5K4 S :"
    reply = stub.NewGame(engine_pb2.NewGameRequest(game="war", setup=setup))
    assert {(p.kind, p.cell) for p in reply.state.pieces} == {
        ("troop", "d7"),
        ("troop", "c6"),
        ("king", "f1"),
    }


def test_new_game_refusals_name_what_is_wrong(stub) -> None:
    unknown = refused(stub.NewGame, engine_pb2.NewGameRequest(game="chess"))
    assert (unknown.code, unknown.reason) == (grpc.StatusCode.NOT_FOUND, "UNKNOWN_GAME")
    assert "war" in unknown.message
    blank = refused(stub.NewGame, engine_pb2.NewGameRequest())
    assert (blank.code, blank.reason, blank.fields[0][0]) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "MISSING_FIELD",
        "game",
    )
    option = refused(
        stub.NewGame, engine_pb2.NewGameRequest(game="war", options={"colour": "blue"})
    )
    assert option.reason == "UNKNOWN_OPTION" and option.fields[0][0] == "options.colour"
    value = refused(
        stub.NewGame, engine_pb2.NewGameRequest(game="war", options={"compulsion": "maybe"})
    )
    assert (
        value.reason == "INVALID_OPTION_VALUE"
        and "legality" in value.message
        and "huff" in value.message
    )
    preset = refused(stub.NewGame, engine_pb2.NewGameRequest(game="napoleonic", preset="blitz"))
    assert preset.reason == "UNKNOWN_PRESET" and "ranked" in preset.message
    setup = refused(stub.NewGame, engine_pb2.NewGameRequest(game="war", setup="not a set-up"))
    assert setup.code == grpc.StatusCode.INVALID_ARGUMENT and setup.reason == "INVALID_SETUP"


# -- ListLegalActions / ValidateAction / ApplyActions -------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_legal_actions_match_the_rules_core_each_with_its_notation(stub, game: str) -> None:
    state = played(stub, game, 12)
    reply = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state))
    converted = conversions(rulesets(TEST_SEAL_KEY), tag_key(TEST_SEAL_KEY))  # the engine's tags
    core = converted.game_from_proto(state)
    expected = sorted(core.format(action) for action in core.legal_actions())
    assert sorted(action.notation for action in reply.actions) == expected
    assert list(reply.to_act) == list(core.to_act())
    for item in reply.actions:  # each action is the one its notation names, of its side
        action = converted.action_from_proto(core, item.action)
        assert action in core.legal_actions() and core.format(action) == item.notation
        assert item.action == converted.action_to_proto(core, action)


@pytest.mark.parametrize("game", GAMES)
def test_legal_actions_for_one_cell(stub, game: str) -> None:
    state = new_state(stub, game)
    every = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions
    cell = next(
        piece.cell
        for piece in state.pieces
        if any(piece.cell in action.notation for action in every) and piece.side in state.to_act
    )
    some = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state, cell=cell)).actions
    assert 0 < len(some) < len(every)
    assert all(cell in action.notation for action in some)
    assert all(action in every for action in some)
    capture = stub.NewGame(
        engine_pb2.NewGameRequest(game="war", setup="9k/10/10/t9/10/10/10/10/10/K8M S :")
    ).state
    from_j1 = stub.ListLegalActions(
        engine_pb2.ListLegalActionsRequest(state=capture, cell="j1")
    ).actions
    assert "Mj1xj10" in {action.notation for action in from_j1}
    assert all(action.notation.startswith("Mj1") for action in from_j1)
    bad = refused(
        stub.ListLegalActions, engine_pb2.ListLegalActionsRequest(state=state, cell="zz99")
    )
    assert bad.reason == "UNKNOWN_CELL" and bad.fields[0][0] == "cell"


@pytest.mark.parametrize("game", GAMES)
def test_validate_gives_the_verdict_as_data(stub, game: str) -> None:
    state = new_state(stub, game)
    legal = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions[0]
    yes = stub.ValidateAction(engine_pb2.ValidateActionRequest(state=state, action=legal.action))
    assert yes.legal and yes.notation == legal.notation and yes.reason == 0
    other = next(
        side
        for side in ("south", "north", "attacker", "defender", "red", "black")
        if side not in state.to_act and side in {p.side for p in state.pieces}
    )
    wrong = game_pb2.Action()
    wrong.CopyFrom(legal.action)
    wrong.side = other
    no = stub.ValidateAction(engine_pb2.ValidateActionRequest(state=state, action=wrong))
    assert (
        not no.legal and no.reason == errors_pb2.ERROR_REASON_NOT_YOUR_TURN and other in no.message
    )


def test_validate_names_the_rule_that_forbids(stub) -> None:
    # Game of War 13.1: a Troop that could be jumped must be captured; a quiet move is refused.
    state = stub.NewGame(
        engine_pb2.NewGameRequest(game="war", setup="10/10/10/10/3t6/2T7/10/10/10/3M6 S F:")
    ).state
    quiet = game_pb2.Action(side="south", notation="Md1-a1")
    verdict = stub.ValidateAction(engine_pb2.ValidateActionRequest(state=state, action=quiet))
    assert not verdict.legal and verdict.reason == errors_pb2.ERROR_REASON_CAPTURE_COMPULSORY
    assert "d6" in verdict.message


@pytest.mark.parametrize("game", GAMES)
def test_apply_returns_state_events_and_notation(stub, game: str) -> None:
    state = played(stub, game, 6, seed=3)
    action = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions[-1]
    reply = stub.ApplyActions(engine_pb2.ApplyActionsRequest(state=state, actions=[action.action]))
    assert reply.state.ply == state.ply + 1
    assert [a.notation for a in reply.applied] == [action.notation]
    assert reply.events and all(event.text for event in reply.events)
    by_text = stub.ApplyActions(applying(state, action.action.side, notation=action.notation))
    assert by_text.state == reply.state


@pytest.mark.parametrize("game", GAMES)
def test_apply_is_atomic_and_names_the_failing_action(stub, game: str) -> None:
    state = new_state(stub, game)
    first = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions[0]
    garbage = game_pb2.Action(side=first.action.side, notation="no such move")
    error = refused(
        stub.ApplyActions,
        engine_pb2.ApplyActionsRequest(state=state, actions=[first.action, garbage]),
    )
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.reason in ("NOTATION_INVALID", "NOTATION_AMBIGUOUS")
    assert error.metadata.get("index") == "1"


def test_apply_refuses_too_many_actions_and_empty_requests(stub) -> None:
    state = new_state(stub, "war")
    action = game_pb2.Action(side="south", notation="e3-e4")
    many = refused(
        stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state, actions=[action] * 513)
    )
    assert (many.code, many.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_ACTIONS")
    none = refused(stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state))
    assert (none.reason, none.fields[0][0]) == ("MISSING_FIELD", "actions")
    stateless = refused(stub.ApplyActions, engine_pb2.ApplyActionsRequest(actions=[action]))
    assert (stateless.reason, stateless.fields[0][0]) == ("MISSING_FIELD", "state")


def test_a_finished_game_refuses_actions(stub) -> None:
    state = new_state(stub, "battle")
    over = stub.ApplyActions(applying(state, "attacker", resign=game_pb2.Resign())).state
    assert over.outcome.winner == "defender" and list(over.to_act) == []
    assert stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=over)).actions == []
    error = refused(
        stub.ApplyActions,
        applying(over, "defender", notation="39-54"),
    )
    assert error.reason == "GAME_OVER"


def test_draw_offer_and_acceptance_through_the_service(stub) -> None:
    state = new_state(stub, "napoleonic")
    offered = stub.ApplyActions(applying(state, "black", offer_draw=game_pb2.OfferDraw())).state
    assert offered.draw_offer == "black"
    drawn = stub.ApplyActions(applying(offered, "red", accept_draw=game_pb2.AcceptDraw())).state
    assert drawn.outcome.reason == game_pb2.OUTCOME_REASON_AGREEMENT and not drawn.outcome.winner


# -- ParseAction / FormatAction ------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_parse_and_format_round_trip(stub, game: str) -> None:
    state = played(stub, game, 8, seed=5)
    for item in stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions[:15]:
        parsed = stub.ParseAction(
            engine_pb2.ParseActionRequest(state=state, text=item.notation, side=item.action.side)
        )
        assert parsed.action == item.action and parsed.notation == item.notation
        formatted = stub.FormatAction(
            engine_pb2.FormatActionRequest(state=state, action=item.action)
        )
        assert formatted.notation == item.notation


@pytest.mark.parametrize("game", GAMES)
def test_parse_refuses_garbage_and_says_what_is_accepted(stub, game: str) -> None:
    state = new_state(stub, game)
    error = refused(stub.ParseAction, engine_pb2.ParseActionRequest(state=state, text="@@@ ???"))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and error.reason == "NOTATION_INVALID"
    assert len(error.message) > 20
    empty = refused(stub.ParseAction, engine_pb2.ParseActionRequest(state=state, text="  "))
    assert empty.reason == "MISSING_FIELD"


# -- WriteRecord / ReplayRecord ------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_record_written_then_replayed_to_the_same_state(stub, game: str) -> None:
    initial = new_state(stub, game)
    state = initial
    actions = []
    rng = random.Random(11)
    for _ in range(20):
        legal = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions
        if not legal:
            break
        pick = rng.choice(legal).action
        actions.append(pick)
        state = stub.ApplyActions(engine_pb2.ApplyActionsRequest(state=state, actions=[pick])).state
    written = stub.WriteRecord(
        engine_pb2.WriteRecordRequest(
            initial_state=initial, actions=actions, tags={"Event": "test"}
        )
    )
    assert written.final_state == state and '[Event "test"]' in written.record
    replayed = stub.ReplayRecord(
        engine_pb2.ReplayRecordRequest(record=written.record, include_states=True)
    )
    assert replayed.final_state == state and replayed.initial_state == initial
    assert [a.action for a in replayed.actions] == actions
    assert len(replayed.states) == len(actions) and replayed.states[-1] == state


def test_replay_refusals(stub) -> None:
    long = refused(
        stub.ReplayRecord, engine_pb2.ReplayRecordRequest(record="#" * (1024 * 1024 + 1))
    )
    assert (long.code, long.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RECORD_TOO_LONG")
    bad = refused(stub.ReplayRecord, engine_pb2.ReplayRecordRequest(record="1. south e3-e5\n"))
    assert bad.reason == "INVALID_RECORD"
    illegal = refused(
        stub.ReplayRecord, engine_pb2.ReplayRecordRequest(record='[Game "war"]\n\n1. south e3-e9\n')
    )
    assert illegal.code == grpc.StatusCode.INVALID_ARGUMENT and "action 1" in illegal.message


# -- SuggestAction / Ping ------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_suggest_returns_a_legal_action_with_its_line(stub, game: str) -> None:
    state = played(stub, game, 4, seed=2)
    budget = duration_pb2.Duration(nanos=200_000_000)
    reply = stub.SuggestAction(
        engine_pb2.SuggestActionRequest(state=state, time_budget=budget, seed=1)
    )
    verdict = stub.ValidateAction(
        engine_pb2.ValidateActionRequest(state=state, action=reply.action)
    )
    assert verdict.legal and reply.notation == verdict.notation
    assert reply.line[0] == reply.notation and reply.depth >= 1 and reply.nodes > 0


def test_suggest_refusals(stub) -> None:
    state = new_state(stub, "war")
    long = refused(
        stub.SuggestAction,
        engine_pb2.SuggestActionRequest(
            state=state, time_budget=duration_pb2.Duration(seconds=3600)
        ),
    )
    assert (long.reason, long.fields[0][0]) == ("DEADLINE_TOO_LONG", "time_budget")
    # A budget that is there but zero (or less) is no budget: refused, not the default.
    for nothing in (duration_pb2.Duration(), duration_pb2.Duration(nanos=-1)):
        zero = refused(
            stub.SuggestAction, engine_pb2.SuggestActionRequest(state=state, time_budget=nothing)
        )
        assert (zero.code, zero.fields[0][0]) == (grpc.StatusCode.INVALID_ARGUMENT, "time_budget")
    over = stub.ApplyActions(applying(state, "north", resign=game_pb2.Resign())).state
    assert (
        refused(stub.SuggestAction, engine_pb2.SuggestActionRequest(state=over)).reason
        == "GAME_OVER"
    )


def test_ping_echoes_and_oversized_requests_are_refused(stub) -> None:
    assert stub.Ping(engine_pb2.PingRequest(payload=b"abc")).payload == b"abc"
    huge = refused(stub.Ping, engine_pb2.PingRequest(payload=b"x" * (5 * 1024 * 1024)))
    assert huge.code == grpc.StatusCode.RESOURCE_EXHAUSTED


# -- the core and the service agree ----------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_a_game_through_the_rpcs_equals_the_game_in_process(stub, game: str) -> None:
    ruleset = rulesets(TEST_SEAL_KEY)[game]
    converted = conversions(rulesets(TEST_SEAL_KEY), tag_key(TEST_SEAL_KEY))  # the engine's tags
    local: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
    remote = new_state(stub, game)
    rng = random.Random(f"agree-{game}")
    for _ply in range(60):
        if local.outcome is not None:
            break
        action = ruleset.random_action(local.state, rng)
        message = converted.action_to_proto(local, action)
        local, _ = local.apply(ruleset.actor(local.state, action), action)
        remote = stub.ApplyActions(
            engine_pb2.ApplyActionsRequest(state=remote, actions=[message])
        ).state
        assert remote == converted.game_to_proto(local)

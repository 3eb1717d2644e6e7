"""Every state the engine hands out is a state it accepts back.

Random games are played through the RPCs of a real server, deployments included (Attack at
Dawn committed and revealed, sealed by the engine, forfeited by a bad reveal; Marching
Orders), and ended every way (by the rules, resignation, time, abandonment, agreement).
Every state any RPC returns is sent back in its three forms: as returned, as the position
alone (what a server that keeps only positions sends), and as the structured view alone
(what a client of the contract before the position existed sends); the engine accepts each
and reads the same game from each. The copies of a secret deployment that the matchmaker
shows other players and spectators (`matchmaker.states.for_viewer`) are accepted too, so
`moves` and `hint` work while the arrays are hidden.

`make test` plays half of the option sets, a different half from day to day, with seeds
drawn from the run's rotating seed (`tests/seeds.py`); `-m slow` plays every set's fixed
games.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from engine_service.convert import conversions
from engine_service.rules import rulesets
from engine_service.rules.game import Game
from engine_service.rules.napoleonic.deployment import random_deployment, random_player_array
from matchmaker.states import for_viewer, hidden_pending
from tests import seeds
from tests.conftest import TEST_SEAL_KEY
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

pytestmark = pytest.mark.integration

CONVERSIONS = conversions(rulesets(TEST_SEAL_KEY))
PLAYS: list[tuple[str, dict[str, str]]] = [
    ("war", {}),
    ("war", {"compulsion": "huff", "passing_allowed": "true"}),
    ("battle", {}),
    ("napoleonic", {}),
    ("napoleonic", {"scenario": "attack_at_dawn"}),
    ("napoleonic", {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}),
    ("napoleonic", {"deployment": "marching_orders", "repetition_draw": "3"}),
]
ENDINGS = ("rules", "resign", "timeout", "abandon", "agreement")
FORMS = ("returned", "position", "view")


def forms(state: game_pb2.GameState) -> Iterator[tuple[str, game_pb2.GameState]]:
    """A state as returned, as its position alone and (when it came with one) as its
    structured view alone."""
    yield "returned", state
    yield "position", game_pb2.GameState(game=state.game, position=state.position)
    if state.WhichOneof("detail") is None:
        return  # asked without the view (STATE_VIEW_POSITION)
    view = game_pb2.GameState()
    view.CopyFrom(state)
    view.ClearField("position")
    yield "view", view


def accepted(
    stub: engine_pb2_grpc.RulesEngineStub,
    state: game_pb2.GameState,
    asked: set[bytes] | None = None,
) -> None:
    """The engine reads the same game from every form of `state`. A form already in `asked`
    (its bytes: the engine is stateless, the same request has the same answer) is not sent
    again: a replay's states are the played states' position forms."""
    assert state.position, "every state the engine returns carries its position"
    asked = set() if asked is None else asked
    games = []
    for form, sent in forms(state):
        request = sent.SerializeToString(deterministic=True)
        if request not in asked:
            asked.add(request)
            try:
                reply = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=sent))
            except grpc.RpcError as error:
                details = error_details(error)
                pytest.fail(f"{form} form refused: {details.reason} {details.message}\n{state}")
            assert list(reply.to_act) == list(state.to_act), form
        games.append(CONVERSIONS.game_from_proto(sent))
    assert all(game == games[0] for game in games)


def _apply(
    stub: engine_pb2_grpc.RulesEngineStub, state: game_pb2.GameState, action: game_pb2.Action
) -> game_pb2.GameState:
    """The state after one action, asked with the view (every state is checked in every
    form by `accepted`)."""
    return stub.ApplyActions(engine_pb2.ApplyActionsRequest(state=state, actions=[action])).state


def _random_action(game: Game[Any], rng: random.Random) -> game_pb2.Action:
    action = game.ruleset.random_action(game.state, rng)
    assert action is not None
    return CONVERSIONS.action_to_proto(game, action)


def play(
    stub: engine_pb2_grpc.RulesEngineStub,
    game_id: str,
    options: dict[str, str],
    ending: str,
    seed: int | str,
) -> list[game_pb2.GameState]:
    """Every state the RPCs return along one random game, ended as `ending` says."""
    rng = random.Random(f"{game_id}-{options}-{ending}-{seed}")
    created = stub.NewGame(engine_pb2.NewGameRequest(game=game_id, options=options))
    described = stub.DescribeGame(
        engine_pb2.DescribeGameRequest(game=game_id, options=options)
    ).initial_state
    states = [created.state, described]
    state = created.state
    actions: list[game_pb2.Action] = []
    stop_at = rng.randrange(10, 200) if ending != "rules" else 600
    for _ in range(stop_at):
        if state.HasField("outcome"):
            break
        action = _random_action(CONVERSIONS.game_from_proto(state), rng)
        state = _apply(stub, state, action)
        actions.append(action)
        states.append(state)
    if not state.HasField("outcome") and ending != "rules":
        side = rng.choice(_sides(game_id))
        if ending == "agreement":
            other = next(s for s in _sides(game_id) if s != side)
            offer = game_pb2.Action(side=side, offer_draw=game_pb2.OfferDraw())
            state = _apply(stub, state, offer)
            states.append(state)
            actions.append(offer)
            meta = game_pb2.Action(side=other, accept_draw=game_pb2.AcceptDraw())
        else:
            reason = {
                "resign": game_pb2.OUTCOME_REASON_RESIGNATION,
                "timeout": game_pb2.OUTCOME_REASON_TIME,
                "abandon": game_pb2.OUTCOME_REASON_ABANDONED,
            }[ending]
            meta = game_pb2.Action(side=side, resign=game_pb2.Resign(reason=reason))
        state = _apply(stub, state, meta)
        actions.append(meta)
        states.append(state)
    written = stub.WriteRecord(
        engine_pb2.WriteRecordRequest(initial_state=created.state, actions=actions)
    )
    assert written.final_state.position == state.position
    replayed = stub.ReplayRecord(
        engine_pb2.ReplayRecordRequest(
            record=written.record, include_states=True, view=engine_pb2.STATE_VIEW_POSITION
        )
    )
    assert replayed.final_state.position == state.position
    return [*states, written.final_state, replayed.initial_state, *replayed.states]


def _sides(game_id: str) -> tuple[str, ...]:
    return tuple(info.id for info in rulesets()[game_id].sides)


@pytest.mark.parametrize(
    ("game_id", "options", "in_depth"),
    seeds.in_turn(
        [pytest.param(g, o, id=f"{g}-{','.join(o.values()) or 'defaults'}") for g, o in PLAYS],
        every=2,
    ),
)
@pytest.mark.usefixtures("playout_seed")
@pytest.mark.timeout(900)  # up to 15 s of CPU (a Napoleonic set); the rest is a busy machine
def test_every_state_any_rpc_returns_is_accepted_back(
    stub: engine_pb2_grpc.RulesEngineStub, game_id: str, options: dict[str, str], in_depth: bool
) -> None:
    checked = 0
    asked: set[bytes] = set()
    games: list[int | str] = [*range(len(ENDINGS))] if in_depth else [*seeds.sampled(len(ENDINGS))]
    for seed, ending in zip(games, ENDINGS, strict=True):
        for state in play(stub, game_id, options, ending, seed):
            accepted(stub, state, asked)
            checked += 1
    assert checked > 50 and len(asked) > checked


def _deploying(
    stub: engine_pb2_grpc.RulesEngineStub, mode: str
) -> tuple[game_pb2.GameState, game_pb2.Action]:
    """An Attack-at-Dawn state where red has revealed (or sealed) and black has not, and
    black's action that would complete the deployment."""
    options = {"scenario": "attack_at_dawn", "attack_at_dawn_mode": mode}
    state = stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", options=options)).state
    rng = random.Random(mode)
    game = CONVERSIONS.game_from_proto(state)
    commits = {}
    for side in ("red", "black") if mode == "commit_reveal" else ():
        placements, salt = random_player_array(game.state, side, rng.randrange(100))
        commits[side] = (placements, salt)
        array = " ".join(f"{square}={kind}" for square, kind in placements)
        state = _apply(
            stub,
            state,
            game_pb2.Action(side=side, notation=f"commit {array} salt {salt.hex()}"),
        )
    last: game_pb2.Action | None = None
    for side in ("red", "black"):
        game = CONVERSIONS.game_from_proto(state)
        if mode == "commit_reveal":
            placements, salt = commits[side]
            array = " ".join(f"{square}={kind}" for square, kind in placements)
            action = game_pb2.Action(side=side, notation=f"reveal {array} salt {salt.hex()}")
        else:
            seal = random_deployment(game.state, side, rng)
            action = CONVERSIONS.action_to_proto(game, seal)
        if side == "black":
            last = action
            break
        state = _apply(stub, state, action)
    assert last is not None and hidden_pending(state)
    return state, last


@pytest.mark.parametrize("mode", ["commit_reveal", "sealed"])
def test_the_redacted_copies_the_matchmaker_shows_are_accepted(
    stub: engine_pb2_grpc.RulesEngineStub, mode: str
) -> None:
    state, completing = _deploying(stub, mode)
    assert list(state.to_act) == ["black"]
    for viewer in ("black", ""):  # the opponent, and a spectator
        copy = for_viewer(state, viewer)
        assert copy is not state
        withheld = [
            part.split(":", 1)[1].strip()
            for part in copy.position.split(";")
            if part.strip().startswith(("revealed red:", "sealed red:"))
        ]
        assert withheld == ["withheld"]  # the text the engine reads withholds it too
        assert not copy.position_tag  # the engine's tag was of the whole text
        assert b"a2" not in copy.napoleonic.SerializeToString() or mode == "sealed"
        moves = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=copy))
        assert list(moves.to_act) == ["black"]  # red has acted: withheld, not forgotten
        hint = stub.SuggestAction(
            engine_pb2.SuggestActionRequest(
                state=copy, side="black", time_budget=duration_pb2.Duration(nanos=200_000_000)
            )
        )
        assert hint.action.napoleonic.WhichOneof("kind") in ("reveal", "seal")
        with pytest.raises(grpc.RpcError) as refusal:
            stub.ApplyActions(engine_pb2.ApplyActionsRequest(state=copy, actions=[completing]))
        details = error_details(refusal.value)
        assert (refusal.value.code(), details.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_STATE",
        )
        assert "withholds red's deployment" in details.message
    # The author sees its own array, so its copy is the state itself.
    assert for_viewer(state, "red") is state
    finished = stub.ApplyActions(engine_pb2.ApplyActionsRequest(state=state, actions=[completing]))
    accepted(stub, finished.state)
    assert finished.state.napoleonic.phase == 5  # NAPOLEONIC_PHASE_MOVEMENT: laid out


def test_a_forfeited_deployment_ends_in_a_state_the_engine_accepts(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    options = {"scenario": "attack_at_dawn"}
    state = stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", options=options)).state
    game = CONVERSIONS.game_from_proto(state)
    arrays = {}
    for side in ("red", "black"):
        placements, salt = random_player_array(game.state, side, 1)
        arrays[side] = " ".join(f"{square}={kind}" for square, kind in placements)
        commit = f"commit {arrays[side]} salt {salt.hex()}"
        state = _apply(stub, state, game_pb2.Action(side=side, notation=commit))
    # Black reveals with another salt than it committed with: it forfeits (10.1).
    array = arrays["black"]
    lie = game_pb2.Action(side="black", notation=f"reveal {array} salt {bytes(32).hex()}")
    state = _apply(stub, state, lie)
    assert state.outcome.reason == game_pb2.OUTCOME_REASON_DEPLOYMENT_FORFEIT
    assert state.outcome.winner == "red"
    accepted(stub, state)

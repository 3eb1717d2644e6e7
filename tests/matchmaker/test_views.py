"""What each viewer may see: Napoleonic "Attack at Dawn" arrays stay with their authors."""

from __future__ import annotations

import dataclasses

from matchmaker.clocks import start, stop
from matchmaker.record import (
    BOT_PLAYER,
    ActionEntry,
    GameRecord,
    GameStatus,
    RatingStatus,
    Seat,
    SeatKind,
    Visibility,
    moves_json,
)
from matchmaker.states import hidden_pending
from matchmaker.views import (
    game_view,
    notations_for,
    public_events,
    public_notation,
    redacted_state,
)
from wargame.v1 import game_pb2, matchmaker_pb2
from wargame.v1 import napoleonic_pb2 as nap


def deploying(phase: int) -> game_pb2.GameState:
    array = nap.NapoleonicArray(
        player="red", placements=[nap.NapoleonicPlacement(unit_type="guards", cell="d1")]
    )
    other = nap.NapoleonicArray(
        player="black", placements=[nap.NapoleonicPlacement(unit_type="guards", cell="e8")]
    )
    state = game_pb2.GameState(game="napoleonic", to_act=["black"])
    state.napoleonic.phase = phase  # type: ignore[assignment]
    state.napoleonic.deployment.mode = "commit_reveal"
    state.napoleonic.deployment.reveals.extend([array, other])
    state.napoleonic.deployment.sealed.add(player="black", ciphertext=b"secret")
    return state


def record(state: game_pb2.GameState, moves: list[ActionEntry]) -> GameRecord:
    return GameRecord(
        id="g1",
        ruleset="napoleonic",
        status=GameStatus.RUNNING,
        version=3,
        visibility=Visibility.PUBLIC,
        rated=False,
        created_ms=1,
        updated_ms=2,
        acted_ms=2,
        seats=[Seat("red", "pred", "Red"), Seat("black", BOT_PLAYER, "Bot", SeatKind.BOT)],
        state_bytes=state.SerializeToString(),
        initial_bytes=b"",
        clock=start(60_000, 0, ["red", "black"], 0, ["black"]),
        invite="CODE",
        bot_ms=0,
        rating_status=RatingStatus.NONE,
        moves_raw=moves_json("[]", moves),
    )


MOVES = [
    ActionEntry("red", "reveal guards d1 salt 7373", "reveal (hidden)"),
    ActionEntry("black", "reveal guards e8 salt 7474", "reveal (hidden)"),
]


def test_others_reveals_are_cut_while_the_deployment_is_hidden() -> None:
    state = deploying(nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL)
    assert hidden_pending(state)
    red = redacted_state(state, "red").napoleonic.deployment
    # Others' entries stay, withheld: who has deployed is public, how is not.
    assert [(a.player, len(a.placements), a.withheld) for a in red.reveals] == [
        ("red", 1, False),
        ("black", 0, True),
    ]
    assert [(s.player, s.ciphertext, s.withheld) for s in red.sealed] == [("black", b"", True)]
    spectator = redacted_state(state, "").napoleonic.deployment
    assert [(len(a.placements), a.withheld) for a in spectator.reveals] == [(0, True), (0, True)]
    assert [(s.ciphertext, s.withheld) for s in spectator.sealed] == [(b"", True)]
    assert b"e8" not in redacted_state(state, "red").SerializeToString()
    assert not redacted_state(state, "").position  # the position writes every array
    assert len(state.napoleonic.deployment.reveals[1].placements) == 1  # the stored state


def test_once_laid_out_everything_is_open() -> None:
    state = deploying(nap.NAPOLEONIC_PHASE_MOVEMENT)
    assert not hidden_pending(state)
    assert redacted_state(state, "") is state
    view = game_view(record(state, MOVES), "", 10)
    assert list(view.moves) == [m.notation for m in MOVES]


def test_moves_show_the_author_its_own_notation_and_others_the_public_one() -> None:
    game = record(deploying(nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL), MOVES)
    red = game_view(game, "pred", 10)
    assert red.your_side == "red"
    assert list(red.moves) == ["reveal guards d1 salt 7373", "reveal (hidden)"]
    assert red.invite_code == "CODE"
    spectator = game_view(game, "someone", 10)
    assert list(spectator.moves) == ["reveal (hidden)", "reveal (hidden)"]
    assert spectator.your_side == "" and spectator.invite_code == ""
    assert (
        b"salt" not in spectator.SerializeToString() and b"e8" not in spectator.SerializeToString()
    )


def test_update_notations_follow_the_same_rule() -> None:
    full, public = ["reveal a1 salt 1"], ["reveal (hidden)"]
    assert notations_for(full, public, "red", "red", True) == full
    assert notations_for(full, public, "red", "black", True) == public
    assert notations_for(full, public, "red", "black", False) == full
    assert notations_for([], ["e3-e5"], "red", "black", True) == ["e3-e5"]


def test_views_of_seats_and_clock() -> None:
    game = record(deploying(nap.NAPOLEONIC_PHASE_MOVEMENT), [])
    view = game_view(game, "pred", 10_000)
    assert [s.side for s in view.seats] == ["red", "black"]
    assert view.seats[1].kind == matchmaker_pb2.SEAT_KIND_BOT and view.seats[1].player.bot
    assert view.clock.running == "black"
    assert view.clock.remaining["black"].ToMilliseconds() == 50_000
    assert view.clock.remaining["red"].ToMilliseconds() == 60_000
    brief = game_view(game, "", 10, with_state=False, with_moves=False)
    assert not brief.HasField("state") and not brief.moves


def test_defence_in_depth_hides_arrays_the_engine_left_in() -> None:
    seal = game_pb2.Action(side="red")
    seal.napoleonic.seal.placements.add(unit_type="guards", cell="d1")
    assert public_notation(seal, "seal d1=G", "seal d1=G") == "seal (hidden)"
    assert public_notation(seal, "seal d1=G", "sealed") == "sealed"
    move = game_pb2.Action(side="red", notation="move c2-c3")
    assert public_notation(move, "move c2-c3", "move c2-c3") == "move c2-c3"
    events = [
        game_pb2.Event(
            kind=game_pb2.EVENT_KIND_DEPLOYMENT_REVEALED,
            side="red",
            text="Red reveals d1=G",
            cells=["d1"],
        ),
        game_pb2.Event(kind=game_pb2.EVENT_KIND_PHASE_CHANGED, text="next"),
    ]
    shown = public_events(events, {"red"})
    assert "d1" not in shown[0].text and not shown[0].cells and shown[0].side == "red"
    assert shown[1] == events[1]
    assert public_events(events, {"black"}) == events


def test_a_finished_games_clocks_read_as_they_stopped() -> None:
    """Clocks stop when a game ends: however late the game is looked at, its view shows
    the time each side had left then, as of the moment it ended, with no clock running."""
    running = record(deploying(nap.NAPOLEONIC_PHASE_MOVEMENT), [])
    assert running.clock is not None
    ended = dataclasses.replace(
        running, status=GameStatus.FINISHED, clock=stop(running.clock, 40_000)
    )
    clock = game_view(ended, "pred", 100_000).clock
    assert clock.running == ""
    assert clock.as_of.ToMilliseconds() == 40_000
    assert clock.remaining["black"].ToMilliseconds() == 20_000
    assert clock.remaining["red"].ToMilliseconds() == 60_000

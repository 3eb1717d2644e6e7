"""What each viewer may see: Napoleonic "Attack at Dawn" arrays stay with their authors."""

from __future__ import annotations

import dataclasses

from matchmaker.clocks import start, stop
from matchmaker.record import (
    BOT_PLAYER,
    ActionEntry,
    GameRecord,
    GameStatus,
    Seat,
    SeatKind,
    Visibility,
    moves_json,
)
from matchmaker.states import for_viewer, hidden_pending
from matchmaker.store import StreamEntry
from matchmaker.views import (
    game_view,
    notations_for,
    notice_message,
    public_events,
    public_notation,
    public_record,
    watch_message,
)
from tests.matchmaker.helpers import game_record
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
    return game_record(
        state,
        [Seat("red", "pred", "Red"), Seat("black", BOT_PLAYER, "Bot", SeatKind.BOT)],
        ruleset="napoleonic",
        clock=start(60_000, 0, ["red", "black"], 0, ["black"]),
        invite="CODE",
        moves_raw=moves_json("[]", moves),
    )


MOVES = [
    ActionEntry("red", "reveal guards d1 salt 7373", "reveal (hidden)"),
    ActionEntry("black", "reveal guards e8 salt 7474", "reveal (hidden)"),
]


def test_others_reveals_are_cut_while_the_deployment_is_hidden() -> None:
    state = deploying(nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL)
    assert hidden_pending(state)
    red = for_viewer(state, "red").napoleonic.deployment
    # Others' entries stay, withheld: who has deployed is public, how is not.
    assert [(a.player, len(a.placements), a.withheld) for a in red.reveals] == [
        ("red", 1, False),
        ("black", 0, True),
    ]
    assert [(s.player, s.ciphertext, s.withheld) for s in red.sealed] == [("black", b"", True)]
    spectator = for_viewer(state, "").napoleonic.deployment
    assert [(len(a.placements), a.withheld) for a in spectator.reveals] == [(0, True), (0, True)]
    assert [(s.ciphertext, s.withheld) for s in spectator.sealed] == [(b"", True)]
    assert b"e8" not in for_viewer(state, "red").SerializeToString()
    assert not for_viewer(state, "").position  # the position writes every array
    assert len(state.napoleonic.deployment.reveals[1].placements) == 1  # the stored state


def test_once_laid_out_everything_is_open() -> None:
    state = deploying(nap.NAPOLEONIC_PHASE_MOVEMENT)
    assert not hidden_pending(state)
    assert for_viewer(state, "") is state
    view = game_view(record(state, MOVES), "", 10)
    assert list(view.moves) == [m.notation for m in MOVES]


def test_moves_show_the_author_its_own_notation_and_others_the_public_one() -> None:
    game = record(deploying(nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL), MOVES)
    red = game_view(game, "pred", 10)
    assert red.your_side == "red"
    own = red.state.napoleonic.deployment.reveals[0]
    assert (own.player, len(own.placements), own.withheld) == ("red", 1, False)
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


def war_record(**changes: object) -> GameRecord:
    """A rated, private, running Game of War between South and North (North away)."""
    game = game_record(
        game_pb2.GameState(game="war", to_act=["south"]),
        [
            Seat(
                "south",
                "psouth",
                "South",
                rating_before="1480.0,340.0,0.061,3",
                rating_after="1662.5,290.25,0.0599,1",
            ),
            Seat("north", "pnorth", "North"),
        ],
        id="g2",
        version=7,
        visibility=Visibility.PRIVATE,
        rated=True,
        created_ms=1_700_000_000_000,
        updated_ms=1_700_000_100_000,
        acted_ms=1_700_000_100_000,
        invite="INVITE",
        away={"north": 5},
        rematch="g3",
        rematch_of="g1",
    )
    return dataclasses.replace(game, **changes)  # type: ignore[arg-type]


def test_a_view_carries_the_games_facts_and_its_seats() -> None:
    view = game_view(war_record(), "pnorth", 10)
    assert (view.id, view.game, view.status, view.version, view.your_side) == (
        "g2",
        "war",
        matchmaker_pb2.GAME_STATUS_RUNNING,
        7,
        "north",
    )
    assert view.visibility == matchmaker_pb2.VISIBILITY_PRIVATE and view.rated
    assert (view.rematch_game_id, view.rematch_of, view.invite_code) == ("g3", "g1", "INVITE")
    assert view.created_at.ToMilliseconds() == 1_700_000_000_000
    assert not view.HasField("clock") and not view.HasField("outcome")
    seats = [
        (s.side, s.kind, s.bot_level, s.connected, s.reserved_for, s.player.id, s.player.bot)
        for s in view.seats
    ]
    human = matchmaker_pb2.SEAT_KIND_HUMAN
    assert seats == [
        ("south", human, 0, True, "", "psouth", False),
        ("north", human, 0, False, "", "pnorth", False),  # away: not connected
    ]
    assert [s.player.display_name for s in view.seats] == ["South", "North"]
    south, north = view.seats
    # The ratings the game's result moved, before and after, in the game's pool.
    assert (south.rating_before.game, south.rating_after.game) == ("war", "war")
    before, after = south.rating_before, south.rating_after
    assert (before.rating, before.deviation, before.volatility, before.games) == (
        1480.0,
        340.0,
        0.061,
        3,
    )
    assert (after.rating, after.deviation, after.volatility, after.games) == (
        1662.5,
        290.25,
        0.0599,
        1,
    )
    assert not north.HasField("rating_before") and not north.HasField("rating_after")


def test_bot_seats_show_their_level_and_open_seats_whom_they_wait_for() -> None:
    seats = [Seat("south", "psouth", "South"), Seat("north", BOT_PLAYER, "Bot", SeatKind.BOT)]
    default = game_view(war_record(seats=seats, away={"north": 5}), "", 10).seats[1]
    assert (default.kind, default.bot_level, default.connected) == (
        matchmaker_pb2.SEAT_KIND_BOT,
        5,  # no level asked for: the strongest
        True,  # the bot is always there
    )
    assert (default.player.id, default.player.display_name, default.player.bot) == (
        BOT_PLAYER,
        "Bot",
        True,
    )
    assert game_view(war_record(seats=seats, bot_level=2), "", 10).seats[1].bot_level == 2
    waiting = [Seat("south", "psouth", "South"), Seat("north", reserved="pnorth")]
    open_seat = game_view(war_record(seats=waiting, away={}), "", 10).seats[1]
    assert (open_seat.connected, open_seat.reserved_for) == (False, "pnorth")
    assert not open_seat.HasField("player")


def test_a_view_shows_the_state_it_is_given_to_draw() -> None:
    game = war_record()
    drawn = game_pb2.GameState(game="war", to_act=["south"], position="drawn")
    assert game_view(game, "", 10, drawn=drawn).state == drawn
    assert game_view(game, "", 10).state == game.state


def test_clocks_show_the_time_control_and_never_less_than_nothing() -> None:
    """Both deploying at once, both clocks run (listed comma-separated); a clock that ran
    out shows zero, not a negative time."""
    clock = start(30_000, 2_000, ["south", "north"], 0, ["south", "north"])
    clock = dataclasses.replace(clock, remaining={"south": 30_000, "north": 10_000})
    view = game_view(war_record(clock=clock), "", 20_000).clock
    assert view.running == "south,north"
    assert view.remaining["south"].ToMilliseconds() == 10_000
    assert view.remaining["north"].ToMilliseconds() == 0
    assert view.as_of.ToMilliseconds() == 20_000
    assert view.time_control.base.ToMilliseconds() == 30_000
    assert view.time_control.increment.ToMilliseconds() == 2_000


def test_finished_games_show_how_they_ended() -> None:
    ending = game_pb2.Outcome(reason=game_pb2.OUTCOME_REASON_TIME, message="both flags fell")
    timed_out = war_record(status=GameStatus.FINISHED, ending=ending.SerializeToString())
    view = game_view(timed_out, "", 10)
    assert view.status == matchmaker_pb2.GAME_STATUS_FINISHED and view.outcome == ending
    unplayed = war_record(status=GameStatus.FINISHED, state_bytes=b"", closed="nobody joined")
    assert game_view(unplayed, "", 10).outcome == game_pb2.Outcome(
        reason=game_pb2.OUTCOME_REASON_ABANDONED, message="nobody joined"
    )
    assert not game_view(war_record(state_bytes=b"", closed="x"), "", 10).HasField("outcome")


def notice(kind: str, **fields: str) -> StreamEntry:
    return StreamEntry(7, b"", "north", (), seq=1, notice={"n": kind, "s": "north", **fields})


def test_notices_say_what_happened_to_whom() -> None:
    view = game_view(war_record(), "", 10)
    left = notice_message(notice("DISCONNECTED", t="1700000000123", g="g2"), view)
    assert (left.version, left.side, left.at.ToMilliseconds()) == (7, "north", 1_700_000_000_123)
    assert left.notice.kind == matchmaker_pb2.NOTICE_KIND_DISCONNECTED
    assert (left.notice.side, left.notice.game_id, left.notice.text) == (
        "north",
        "g2",
        "north disconnected",
    )
    assert left.game == view
    back = notice_message(notice("RECONNECTED"), None)
    assert back.notice.kind == matchmaker_pb2.NOTICE_KIND_RECONNECTED
    assert back.notice.text == "north reconnected" and not back.HasField("game")
    assert back.at.ToMilliseconds() == 0 and back.notice.game_id == ""  # no time, no game
    warned = notice_message(notice("ABANDON_WARNING", d="1700000060000"), None).notice
    assert warned.kind == matchmaker_pb2.NOTICE_KIND_ABANDON_WARNING
    assert warned.text == (
        "north has left; the game ends as abandoned at 22:14:20 UTC unless they come back"
    )
    assert warned.deadline.ToMilliseconds() == 1_700_000_060_000
    offer = notice_message(notice("REMATCH_OFFERED", g="g3"), None).notice
    assert (offer.kind, offer.text, offer.game_id) == (
        matchmaker_pb2.NOTICE_KIND_REMATCH_OFFERED,
        "north offers a rematch",
        "g3",
    )
    odd = notice_message(notice("SOMETHING_NEW"), None).notice
    assert (odd.kind, odd.text) == (matchmaker_pb2.NOTICE_KIND_UNSPECIFIED, "")
    sideless = StreamEntry(7, b"", "", (), seq=2, notice={"n": "SOMETHING_NEW"})
    assert notice_message(sideless, None).notice.side == ""


def test_a_public_record_is_tagged_and_stops_before_hidden_moves() -> None:
    ending = game_pb2.Outcome(reason=game_pb2.OUTCOME_REASON_TIME, message="both flags fell")
    entries, tags = public_record(war_record(ending=ending.SerializeToString()))
    assert entries == []
    assert tags == {
        "South": "South",
        "North": "North",
        "Date": "2023.11.14",
        "Session": "g2",
        "Termination": "both flags fell",
    }
    hidden = record(deploying(nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL), MOVES)
    shown, tags = public_record(hidden)
    assert shown == [] and "Termination" not in tags and tags["Red"] == "Red"
    opened = record(deploying(nap.NAPOLEONIC_PHASE_MOVEMENT), MOVES)
    assert public_record(opened)[0] == MOVES


def test_hidden_deployment_events_say_only_who_did_what() -> None:
    kinds = [
        game_pb2.EVENT_KIND_DEPLOYMENT_COMMITTED,
        game_pb2.EVENT_KIND_DEPLOYMENT_SEALED,
        game_pb2.EVENT_KIND_DEPLOYMENT_REVEALED,
    ]
    events = [game_pb2.Event(kind=k, side="red", text="d1=G", cells=["d1"]) for k in kinds]
    assert public_events(events, {"red"}) == [
        game_pb2.Event(kind=kinds[0], side="red", text="red's deployment is committed"),
        game_pb2.Event(kind=kinds[1], side="red", text="red's deployment is sealed"),
        game_pb2.Event(kind=kinds[2], side="red", text="red's deployment is revealed"),
    ]


def test_the_position_text_withholds_only_other_players_arrays() -> None:
    state = deploying(nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL)
    turn = "board 8x8; turn: black deploy_reveal 0"
    state.position = f"{turn}; revealed red: d1=G; sealed black: U0VDUkVU"
    red = for_viewer(state, "red").position
    assert red == f"{turn}; revealed red: d1=G; sealed black: withheld"
    black = for_viewer(state, "black").position
    assert black == f"{turn}; revealed red: withheld; sealed black: U0VDUkVU"


def test_an_update_shows_its_author_the_full_notation_while_hidden() -> None:
    sent = matchmaker_pb2.WatchGameResponse(version=4, side="red", notations=["reveal (hidden)"])
    entry = StreamEntry(4, sent.SerializeToString(), "red", ("reveal guards d1 salt 7373",))
    view = game_view(war_record(), "", 10)
    mine = watch_message(entry, "red", True, view)
    assert list(mine.notations) == ["reveal guards d1 salt 7373"] and mine.game == view
    theirs = watch_message(entry, "black", True, None)
    assert list(theirs.notations) == ["reveal (hidden)"] and not theirs.HasField("game")
    assert (theirs.version, theirs.side) == (4, "red")
    assert list(watch_message(entry, "black", False, None).notations) == [
        "reveal guards d1 salt 7373"
    ]
    plain = StreamEntry(5, sent.SerializeToString(), "red", ())
    assert list(watch_message(plain, "red", True, None).notations) == ["reveal (hidden)"]

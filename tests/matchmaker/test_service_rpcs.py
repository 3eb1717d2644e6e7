"""Each Matchmaker RPC's answer, called over gRPC on loopback with a real Redis and a real
engine: who the caller is (bearer tokens), the seats a new game gets, joining by invite,
browsing page by page, the quick-match stream, playing, resigning and draws, watching,
records and leaderboards."""

from __future__ import annotations

import base64
import queue
import random
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from matchmaker import keys
from matchmaker.seating import TimeControl
from tests.matchmaker.conftest import Client, InProcessMatchmaker, WarReplica, players_of
from tests.matchmaker.helpers import (
    SEALED_DAWN,
    StreamReader,
    Watcher,
    expect_error,
    legal_actions,
    play_moves,
    sealed_array,
    seconds,
    start_game,
    submission,
    submit_text,
    sync_client,
    wait_for,
)
from wargame.v1 import engine_pb2, game_pb2, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode
BOT = mm.SEAT_KIND_BOT
HUMAN = mm.SEAT_KIND_HUMAN


def _seats(game: mm.GameView) -> list[tuple[str, str, str, int, int]]:
    return [(s.side, s.player.id, s.player.display_name, s.kind, s.bot_level) for s in game.seats]


# -- callers -------------------------------------------------------------------------------


def test_the_bearer_scheme_is_read_in_any_case_and_spaces_around_the_token_are_ignored(
    matchmaker: InProcessMatchmaker, ada: Client
) -> None:
    with grpc.insecure_channel(matchmaker.address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        for authorization in (f"bearer {ada.token}", f" BEARER   {ada.token}  "):
            reply = stub.GetPlayer(
                mm.GetPlayerRequest(), metadata=(("authorization", authorization),), timeout=30
            )
            assert (reply.player.id, reply.player.display_name) == (ada.player_id, "Ada")


def test_a_player_is_shown_to_callers_without_a_token_but_a_bad_token_is_refused(
    matchmaker: InProcessMatchmaker, ada: Client
) -> None:
    anonymous = Client(matchmaker.address)
    forged = Client(matchmaker.address, token="not-a-token")
    try:
        seen = anonymous.GetPlayer(mm.GetPlayerRequest(player_id=ada.player_id)).player
        assert (seen.id, seen.display_name) == (ada.player_id, "Ada")
        expect_error(
            lambda: forged.GetPlayer(mm.GetPlayerRequest(player_id=ada.player_id)),
            Code.UNAUTHENTICATED,
            "TOKEN_INVALID",
        )
        refused = expect_error(
            lambda: anonymous.GetPlayer(mm.GetPlayerRequest()),
            Code.UNAUTHENTICATED,
            "TOKEN_MISSING",
        )
        assert refused.message == "this call needs a player token: authorization: Bearer <token>"
    finally:
        anonymous.close()
        forged.close()


def test_a_new_token_acts_for_the_same_player_until_revoked_by_id_or_by_itself(
    matchmaker: InProcessMatchmaker, ada: Client
) -> None:
    issued = ada.CreateToken(mm.CreateTokenRequest())
    assert issued.token not in ("", ada.token) and issued.token_id not in ("", ada.token_id)
    device = Client(matchmaker.address, token=issued.token)
    try:
        assert device.GetPlayer(mm.GetPlayerRequest()).player.id == ada.player_id
        ada.RevokeToken(mm.RevokeTokenRequest(token_id=issued.token_id))
        expect_error(
            lambda: device.GetPlayer(mm.GetPlayerRequest()), Code.UNAUTHENTICATED, "TOKEN_INVALID"
        )
        # An empty id revokes the calling token itself.
        ada.RevokeToken(mm.RevokeTokenRequest())
        expect_error(
            lambda: ada.GetPlayer(mm.GetPlayerRequest()), Code.UNAUTHENTICATED, "TOKEN_INVALID"
        )
    finally:
        device.close()


def test_a_registered_player_gets_its_id_name_and_a_token_that_works(
    matchmaker: InProcessMatchmaker,
) -> None:
    with grpc.insecure_channel(matchmaker.address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        reply = stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name="Grace"), timeout=30)
        assert reply.player.display_name == "Grace" and reply.player.id
        assert reply.token and reply.token_id
        me = stub.GetPlayer(
            mm.GetPlayerRequest(),
            metadata=(("authorization", f"Bearer {reply.token}"),),
            timeout=30,
        ).player
        assert (me.id, me.display_name) == (reply.player.id, "Grace")
        bad = expect_error(
            lambda: stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name=""), timeout=30),
            Code.INVALID_ARGUMENT,
        )
        assert bad.fields and bad.fields[0][0] == "display_name"
        assert stub.Echo(mm.EchoRequest(payload=b"\x00ping"), timeout=30).payload == b"\x00ping"


# -- creating and joining --------------------------------------------------------------------


def test_a_game_against_a_person_seats_the_caller_and_opens_the_other_seat_with_an_invite(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker
) -> None:
    south, north = war_players["south"], war_players["north"]
    created = south.CreateGame(mm.CreateGameRequest(game="war", side="north"))
    game = created.game
    assert game.status == mm.GAME_STATUS_OPEN and game.your_side == "north"
    assert _seats(game) == [
        ("south", "", "", HUMAN, 0),
        ("north", south.player_id, "South", HUMAN, 0),
    ]
    assert len(created.invite_code) == 19 and created.invite_code == game.invite_code
    assert game.visibility == mm.VISIBILITY_PUBLIC and not game.rated
    # The code, typed in lower case, seats the joiner in the open seat.
    joined = north.JoinGame(mm.JoinGameRequest(invite_code=created.invite_code.lower())).game
    assert (joined.id, joined.status, joined.your_side) == (
        game.id,
        mm.GAME_STATUS_RUNNING,
        "south",
    )
    assert [(s.side, s.player.id) for s in joined.seats] == [
        ("south", north.player_id),
        ("north", south.player_id),
    ]


def test_a_caller_without_a_side_gets_one_of_the_sides_left_to_people(
    war_players: dict[str, Client],
) -> None:
    south = war_players["south"]
    sides = set()
    for _ in range(12):
        game = south.CreateGame(mm.CreateGameRequest(game="war")).game
        assert game.your_side in ("south", "north")
        sides.add(game.your_side)
        # With the bot on north the caller always gets south.
        against = south.CreateGame(mm.CreateGameRequest(game="war", bot_sides=["north"])).game
        assert against.your_side == "south"
        for made in (game, against):  # a player may sit in 20 unfinished games at most
            south.Resign(mm.ResignRequest(game_id=made.id))
    assert sides == {"south", "north"}  # a coin: 2**-11 to fail by chance


def test_a_game_against_the_bot_starts_at_once_with_the_bot_seated_at_the_default_level(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker
) -> None:
    south = war_players["south"]
    created = south.CreateGame(mm.CreateGameRequest(game="war", side="south", opponent=BOT))
    game = created.game
    assert game.status == mm.GAME_STATUS_RUNNING and created.invite_code == ""
    level = matchmaker.settings.bot_level
    assert level == 5
    person, bot = game.seats
    assert (person.side, person.player.id, person.kind, person.bot_level) == (
        "south",
        south.player_id,
        HUMAN,
        0,
    )
    assert (bot.side, bot.player.display_name, bot.kind, bot.bot_level) == (
        "north",
        "Bot",
        BOT,
        level,
    )
    assert bot.player.bot
    # The same with bot_sides naming the other side, and a level asked for.
    listed = south.CreateGame(
        mm.CreateGameRequest(game="war", side="north", bot_sides=["south"], bot_level=2)
    )
    assert listed.game.status == mm.GAME_STATUS_RUNNING and listed.invite_code == ""
    assert [(s.side, s.kind, s.bot_level) for s in listed.game.seats] == [
        ("south", BOT, 2),
        ("north", HUMAN, 0),
    ]


def test_a_private_game_is_private_and_a_rated_one_rated(war_players: dict[str, Client]) -> None:
    south = war_players["south"]
    private = south.CreateGame(
        mm.CreateGameRequest(game="war", visibility=mm.VISIBILITY_PRIVATE, rated=True)
    ).game
    assert private.visibility == mm.VISIBILITY_PRIVATE and private.rated
    public = south.CreateGame(mm.CreateGameRequest(game="war", visibility=mm.VISIBILITY_PUBLIC))
    assert public.game.visibility == mm.VISIBILITY_PUBLIC
    missing = expect_error(
        lambda: south.CreateGame(mm.CreateGameRequest()), Code.INVALID_ARGUMENT, "MISSING_FIELD"
    )
    assert missing.fields == (("game", "game is required"),)


def test_joining_by_id_names_the_side_taken(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    players = players_of(matchmaker.address, clients, "south", "north")
    game = start_game(players, "war")
    assert game.your_side == "north"
    seen = players["south"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert seen.your_side == "south" and seen.version == game.version


# -- browsing ---------------------------------------------------------------------------------


def _offset(token: str) -> int:
    return int(base64.urlsafe_b64decode(token.encode()).decode())


def test_browsing_pages_through_the_games_newest_first_without_gaps_or_overlaps(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker
) -> None:
    south, north = war_players["south"], war_players["north"]
    ids = [
        south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game.id for _ in range(4)
    ]
    first = north.BrowseGames(mm.BrowseGamesRequest(page_size=2))
    assert [g.id for g in first.games] == ids[:1:-1][:2] and first.next_page_token
    second = north.BrowseGames(mm.BrowseGamesRequest(page_size=2, page_token=first.next_page_token))
    # The last page is full, and there is nothing after it: no token.
    assert [g.id for g in second.games] == ids[1::-1] and second.next_page_token == ""
    assert _offset(first.next_page_token) == 2
    # A player sees its side in the listed games it sits in; a spectator sees none.
    assert {g.your_side for g in south.BrowseGames(mm.BrowseGamesRequest()).games} == {"south"}
    anonymous = Client(matchmaker.address)
    try:
        listed = anonymous.BrowseGames(mm.BrowseGamesRequest(game="war")).games
        assert [g.id for g in listed] == ids[::-1] and {g.your_side for g in listed} == {""}
        assert all(not g.HasField("state") and not g.moves for g in listed)
    finally:
        anonymous.close()
    unknown = expect_error(
        lambda: north.BrowseGames(mm.BrowseGamesRequest(game="go")), Code.NOT_FOUND, "UNKNOWN_GAME"
    )
    assert unknown.message


def test_a_page_holds_twenty_games_unless_asked_otherwise(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    south, north = war_players["south"], war_players["north"]
    west = clients(matchmaker.address, "West")  # a player may sit in 20 unfinished games
    ids = [
        (south if i % 2 else west).CreateGame(mm.CreateGameRequest(game="war")).game.id
        for i in range(21)
    ]
    page = north.BrowseGames(mm.BrowseGamesRequest())
    assert [g.id for g in page.games] == ids[:0:-1] and _offset(page.next_page_token) == 20
    rest = north.BrowseGames(mm.BrowseGamesRequest(page_token=page.next_page_token))
    assert [g.id for g in rest.games] == ids[:1] and rest.next_page_token == ""
    joined = north.JoinGame(mm.JoinGameRequest(game_id=ids[3])).game
    running = north.BrowseGames(mm.BrowseGamesRequest(status=mm.GAME_STATUS_RUNNING)).games
    assert [g.id for g in running] == [joined.id]
    opened = north.BrowseGames(mm.BrowseGamesRequest(status=mm.GAME_STATUS_OPEN, page_size=100))
    assert joined.id not in [g.id for g in opened.games] and len(opened.games) == 20


# -- quick match ----------------------------------------------------------------------------


def _queue(client: Client, **request: Any) -> StreamReader:
    return StreamReader(
        client.stub.JoinQueue(mm.JoinQueueRequest(**request), metadata=client.metadata, timeout=60)
    )


def _next(reader: StreamReader) -> mm.JoinQueueResponse:
    """The stream's next message (a waiting one reports at least every `HEARTBEAT`)."""
    try:
        message: mm.JoinQueueResponse = reader.messages.get(timeout=20)
    except queue.Empty:
        raise AssertionError(f"no message: {reader.how()}") from None
    return message


def test_two_players_in_one_queue_are_told_their_wait_then_given_the_same_game(
    war_players: dict[str, Client],
) -> None:
    south, north = war_players["south"], war_players["north"]
    timed = mm.TimeControl(base=seconds(300))
    first = _queue(south, game="war", time_control=timed)
    try:
        waiting = _next(first)
        assert (waiting.position, waiting.waiting) == (1, 1) and waiting.ticket
        assert not waiting.HasField("game") and waiting.waited.ToMilliseconds() >= 0
        second = _queue(north, game="war", time_control=timed)
        games: dict[str, mm.GameView] = {}
        for name, reader in (("south", first), ("north", second)):
            while name not in games:
                message = _next(reader)
                if message.HasField("game"):
                    assert message.ticket
                    games[name] = message.game
        assert games["south"].id == games["north"].id
        assert games["south"].status == mm.GAME_STATUS_RUNNING
        assert {games["south"].your_side, games["north"].your_side} == {"south", "north"}
        # The game's clocks are read as of the moment it is handed over.
        for game in games.values():
            assert game.clock.running == "south" and game.clock.as_of.ToMilliseconds() > 0
            assert game.clock.remaining["north"].ToMilliseconds() == 300_000
        assert wait_for(lambda: first.ended.is_set() and second.ended.is_set())
        assert first.error is None and second.error is None
        # Matched and handed the game, each may queue again at once.
        for client in (south, north):
            again = _queue(client, game="war")
            try:
                assert _next(again).ticket
            finally:
                client.LeaveQueue(mm.LeaveQueueRequest())
                again.call.cancel()
    finally:
        first.call.cancel()


@pytest.mark.parametrize("by_ticket", [True, False])
def test_leaving_the_queue_ends_the_stream_without_a_game(
    war_players: dict[str, Client], by_ticket: bool
) -> None:
    south = war_players["south"]
    reader = _queue(south, game="war")
    try:
        ticket = _next(reader).ticket
        south.LeaveQueue(mm.LeaveQueueRequest(ticket=ticket if by_ticket else ""))
        assert wait_for(reader.ended.is_set)
        assert reader.error is None
        while not reader.messages.empty():
            assert not reader.messages.get().HasField("game")
        # Out of the queue: a new join starts at the head again, alone.
        again = _queue(south, game="war")
        try:
            assert (_next(again).position, 1) == (1, 1)
        finally:
            again.call.cancel()
    finally:
        reader.call.cancel()


# -- playing ----------------------------------------------------------------------------------


def test_submitted_actions_answer_with_their_notations_and_a_retry_is_replayed(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    south = war_players["south"]
    game = start_game(war_players, "war")
    (action, *_) = legal_actions(engine_stub, game.state)
    request = submission(game, action.action)
    reply = south.SubmitActions(request)
    assert list(reply.notations) == [action.notation] and not reply.replayed
    assert reply.game.version == game.version + 1 and reply.game.your_side == "south"
    assert list(reply.game.moves) == [action.notation] and reply.events
    again = south.SubmitActions(request)
    assert again.replayed and list(again.notations) == [action.notation]
    assert again.game.version == game.version + 1


def test_submitting_without_a_token_is_refused(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker
) -> None:
    game = start_game(war_players, "war")
    anonymous = Client(matchmaker.address)
    try:
        refused = expect_error(
            lambda: anonymous.SubmitActions(
                mm.SubmitActionsRequest(game_id=game.id, expected_version=game.version)
            ),
            Code.UNAUTHENTICATED,
            "TOKEN_MISSING",
        )
        assert refused.message == "this call needs a player token: authorization: Bearer <token>"
    finally:
        anonymous.close()


def test_resigning_gives_the_game_to_the_opponent_and_draw_answers_decide_the_offer(
    war_players: dict[str, Client],
) -> None:
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war")
    offered = north.OfferDraw(mm.OfferDrawRequest(game_id=game.id)).game
    assert offered.state.draw_offer == "north" and offered.your_side == "north"
    declined = south.AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=False)).game
    assert declined.status == mm.GAME_STATUS_RUNNING and declined.state.draw_offer == ""
    assert declined.your_side == "south" and list(declined.moves)[-1] == "decline draw"
    south.OfferDraw(mm.OfferDrawRequest(game_id=game.id))
    drawn = north.AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True)).game
    assert drawn.status == mm.GAME_STATUS_FINISHED and list(drawn.moves)[-1] == "accept draw"
    assert (drawn.outcome.reason, drawn.outcome.winner) == (game_pb2.OUTCOME_REASON_AGREEMENT, "")

    other = start_game(war_players, "war")
    resigned = south.Resign(mm.ResignRequest(game_id=other.id)).game
    assert resigned.status == mm.GAME_STATUS_FINISHED and resigned.your_side == "south"
    assert (resigned.outcome.reason, resigned.outcome.winner) == (
        game_pb2.OUTCOME_REASON_RESIGNATION,
        "north",
    )


def test_resigning_an_open_game_withdraws_it_and_it_has_no_record(
    war_players: dict[str, Client],
) -> None:
    south = war_players["south"]
    game = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    closed = south.Resign(mm.ResignRequest(game_id=game.id)).game
    assert (closed.id, closed.status, closed.your_side) == (
        game.id,
        mm.GAME_STATUS_FINISHED,
        "south",
    )
    assert closed.outcome.winner == "" and not closed.moves
    unplayed = expect_error(
        lambda: south.GetRecord(mm.GetRecordRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_STARTED",
    )
    assert unplayed.message == f"game {game.id} was never played"


# -- watching, records, leaderboards --------------------------------------------------------


def test_a_finished_games_stream_sends_every_update_then_ends(
    war_players: dict[str, Client], engine_stub: Any, matchmaker: InProcessMatchmaker
) -> None:
    south = war_players["south"]
    game = start_game(war_players, "war")
    game = play_moves(engine_stub, war_players, game.id, 3, random.Random(4))
    final = south.Resign(mm.ResignRequest(game_id=game.id)).game
    anonymous = Client(matchmaker.address)
    try:
        updates = list(anonymous.WatchGame(mm.WatchGameRequest(game_id=game.id)))
        versions = [u.version for u in updates if not u.HasField("notice")]
        assert versions == list(range(1, final.version + 1))
        assert not any(u.resync for u in updates)
        last = updates[-1]
        assert last.game.status == mm.GAME_STATUS_FINISHED and last.game.your_side == ""
        # From a later version on: only what came after it.
        later = list(south.WatchGame(mm.WatchGameRequest(game_id=game.id, after_version=2)))
        assert [u.version for u in later if not u.HasField("notice")] == list(
            range(3, final.version + 1)
        )
        assert later[-1].game.your_side == "south"
        assert (
            list(south.WatchGame(mm.WatchGameRequest(game_id=game.id, after_version=final.version)))
            == []
        )
    finally:
        anonymous.close()


def test_a_live_stream_sends_the_next_update_as_it_is_committed(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    north = war_players["north"]
    game = start_game(war_players, "war")
    watcher = Watcher(north, game.id, after=game.version)
    try:
        play_moves(engine_stub, war_players, game.id, 1, random.Random(8))
        (update,) = watcher.until(game.version + 1)
        assert update.game.version == game.version + 1 and update.game.your_side == "north"
    finally:
        watcher.close()


def test_a_record_is_served_for_a_running_game_to_anyone(
    war_players: dict[str, Client], engine_stub: Any, matchmaker: InProcessMatchmaker
) -> None:
    game = start_game(war_players, "war")
    play_moves(engine_stub, war_players, game.id, 2, random.Random(2))
    anonymous = Client(matchmaker.address)
    try:
        record = anonymous.GetRecord(mm.GetRecordRequest(game_id=game.id)).record
        assert "South" in record and "North" in record
        # The record holds the game's moves: replayed, it reaches the stored state.
        replayed = engine_stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record))
        assert (
            replayed.final_state == anonymous.GetGame(mm.GetGameRequest(game_id=game.id)).game.state
        )
    finally:
        anonymous.close()


def test_the_leaderboard_ranks_from_one_and_serves_a_multiplayer_pool(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker
) -> None:
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war", rated=True)
    north.Resign(mm.ResignRequest(game_id=game.id))
    anonymous = Client(matchmaker.address)
    try:
        board = anonymous.GetLeaderboard(mm.GetLeaderboardRequest(game="war")).entries
        assert [(e.rank, e.player.id, e.player.display_name) for e in board] == [
            (1, south.player_id, "South"),
            (2, north.player_id, "North"),
        ]
        assert board[0].rating.game == "war" and board[0].rating.rating > 1500
        assert board[0].rating.games == 1
        top = anonymous.GetLeaderboard(mm.GetLeaderboardRequest(game="war", limit=1)).entries
        assert [e.player.id for e in top] == [south.player_id]
        pool = anonymous.GetLeaderboard(mm.GetLeaderboardRequest(game="napoleonic.multiplayer"))
        assert list(pool.entries) == []
        expect_error(
            lambda: anonymous.GetLeaderboard(mm.GetLeaderboardRequest(game="go")),
            Code.NOT_FOUND,
            "UNKNOWN_GAME",
        )
    finally:
        anonymous.close()


def test_a_late_watcher_of_a_trimmed_finished_game_gets_it_whole_then_its_rematch_offer(
    engine_stub: Any, war_replica: WarReplica
) -> None:
    """Updates no longer kept are replaced by one resync carrying the game as it stands;
    a watcher following the rematch then waits for the offer, which ends the stream."""
    _server, players = war_replica(finished_stream_keep=1)
    south, north = players["south"], players["north"]
    game = start_game(players, "war")
    play_moves(engine_stub, players, game.id, 2, random.Random(6))
    final = north.Resign(mm.ResignRequest(game_id=game.id)).game
    watcher = Watcher(south, game.id, after=0, follow_rematch=True)
    try:
        first = watcher.messages.get(timeout=20)
        assert first.resync and first.version == final.version and not first.notations
        assert (first.game.version, first.game.status, first.game.your_side) == (
            final.version,
            mm.GAME_STATUS_FINISHED,
            "south",
        )
        assert first.game.outcome == final.outcome
        offered = south.Rematch(mm.RematchRequest(game_id=game.id)).game
        # The same game again, sides swapped, the other seat kept for the opponent.
        assert (offered.status, offered.your_side) == (mm.GAME_STATUS_OPEN, "north")
        notice, _ = watcher.notice(mm.NOTICE_KIND_REMATCH_OFFERED)
        assert notice.notice.game_id == offered.id
        assert wait_for(watcher.ended.is_set) and watcher.error is None
        assert watcher.messages.empty()
    finally:
        watcher.close()


def test_a_watcher_following_a_rematch_waits_for_one_as_long_as_the_server_allows(
    engine_stub: Any, war_replica: WarReplica
) -> None:
    _server, players = war_replica(rematch_follow=1.0)
    south, north = players["south"], players["north"]
    game = start_game(players, "war")
    final = north.Resign(mm.ResignRequest(game_id=game.id)).game
    watcher = Watcher(south, game.id, after=final.version - 1, follow_rematch=True)
    try:
        (last,) = watcher.until(final.version)
        assert last.game.status == mm.GAME_STATUS_FINISHED and not last.resync
        # No rematch offered: the stream ends about a second after the game did, not before
        # (an offer made within that second still reaches the watcher).
        assert wait_for(watcher.ended.is_set, timeout=15) and watcher.error is None
        assert watcher.ended_at is not None
        assert watcher.ended_at * 1000 >= last.at.ToMilliseconds() + 1000
    finally:
        watcher.close()
    # Without following, a finished game's stream ends at its last update.
    plain = list(south.WatchGame(mm.WatchGameRequest(game_id=game.id, after_version=0)))
    assert [m.version for m in plain if not m.HasField("notice")][-1] == final.version


def test_a_watch_after_a_version_starts_with_the_notices_that_followed_it(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker
) -> None:
    """Players without a stream are announced as gone: notices that follow the game's
    version, which a watch from that version sends first."""
    game = start_game(war_players, "war")
    anonymous = Client(matchmaker.address)
    first = Watcher(anonymous, game.id, after=game.version)
    try:
        notice, before = first.notice(mm.NOTICE_KIND_DISCONNECTED)
        assert before == [] and notice.version == game.version
        # The game has not moved on: the notice carries it.
        assert notice.game.id == game.id and notice.game.version == game.version
    finally:
        first.close()
    again = Watcher(anonymous, game.id, after=game.version)
    try:
        repeated = again.messages.get(timeout=20)
        assert repeated.version == game.version
        assert (repeated.notice.kind, repeated.notice.side) == (
            notice.notice.kind,
            notice.notice.side,
        )
    finally:
        again.close()
        anonymous.close()


def _connected(client: Client, game_id: str) -> dict[str, bool]:
    game = client.GetGame(mm.GetGameRequest(game_id=game_id)).game
    return {seat.side: seat.connected for seat in game.seats}


def test_a_seated_players_open_stream_shows_it_connected_and_a_spectators_does_not(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker
) -> None:
    south = war_players["south"]
    game = start_game(war_players, "war")
    anonymous = Client(matchmaker.address)
    spectator = Watcher(anonymous, game.id, after=game.version)
    watcher = Watcher(south, game.id, after=game.version)
    try:
        # Nobody is away until the presence script first runs (for South's stream): then
        # North, without a stream of its own, is; the spectator's stream counts for nobody.
        both = {"south": True, "north": False}
        assert wait_for(lambda: _connected(south, game.id) == both), _connected(south, game.id)
        watcher.close()
        # Its stream closed, the player has left (at once, not when its mark would lapse).
        assert wait_for(lambda: not _connected(south, game.id)["south"], timeout=2.5)
    finally:
        watcher.close()
        spectator.close()
        anonymous.close()


def test_the_servers_shutdown_ends_queue_and_watch_streams_cleanly(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    server = replica()
    players = players_of(server.address, clients, "south", "north")
    game = start_game(players, "war")
    queued = _queue(clients(server.address, "West"), game="war")
    watcher = Watcher(players["south"], game.id, after=game.version)
    try:
        assert _next(queued).position == 1
        assert wait_for(lambda: _connected(players["north"], game.id)["south"])
        server.stop()
        assert wait_for(queued.ended.is_set) and wait_for(watcher.ended.is_set)
        assert queued.error is None and watcher.error is None
        while not queued.messages.empty():
            assert not queued.messages.get().HasField("game")
    finally:
        queued.call.cancel()
        watcher.close()


def test_a_player_at_its_most_unfinished_games_may_neither_create_nor_queue_for_another(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    server = replica(max_open_games=1)
    ada = clients(server.address, "Ada")
    first = ada.CreateGame(mm.CreateGameRequest(game="war")).game
    message = (
        "you sit in 1 unfinished games, the most one player may: finish, resign or "
        "withdraw one first"
    )
    for call in (
        lambda: ada.CreateGame(mm.CreateGameRequest(game="war", opponent=BOT)),
        lambda: next(iter(ada.JoinQueue(mm.JoinQueueRequest(game="war"), timeout=10))),
    ):
        refused = expect_error(call, Code.RESOURCE_EXHAUSTED, "TOO_MANY_GAMES")
        assert refused.message == message
    ada.Resign(mm.ResignRequest(game_id=first.id))  # withdrawn: room again
    assert ada.CreateGame(mm.CreateGameRequest(game="war", opponent=BOT)).game.status == (
        mm.GAME_STATUS_RUNNING
    )


def test_a_waiting_player_is_told_as_its_wait_grows_and_the_rating_window_widens(
    war_players: dict[str, Client],
) -> None:
    """Base window 100, widened by 25 a second waited (the defaults): the rounded window
    changes every 40 ms, so each status poll (every 0.1 s here) has news."""
    reader = _queue(war_players["south"], game="war")
    try:
        messages = [_next(reader) for _ in range(4)]
    finally:
        reader.call.cancel()
    assert {(m.position, m.waiting, m.ticket) for m in messages} == {(1, 1, messages[0].ticket)}
    waited = [m.waited.ToMilliseconds() for m in messages]
    assert all(m.HasField("waited") for m in messages) and waited == sorted(waited)
    assert waited[-1] > waited[0]
    # News comes with each change, long before the 5 s heartbeat would send it anyway.
    assert waited[1] - waited[0] < 4000
    for message, ms in zip(messages, waited, strict=True):
        assert message.rating_window == pytest.approx(100 + 25 * ms / 1000, abs=0.05)


def test_a_player_whose_profile_lapsed_is_told_it_has_expired(ada: Client, redis_url: str) -> None:
    """A token may outlive its player's profile by a moment (each expires by itself)."""
    client = sync_client(redis_url)
    try:
        assert client.delete(keys.player(ada.player_id)) == 1
    finally:
        client.close()
    for call in (
        lambda: ada.CreateGame(mm.CreateGameRequest(game="war")),
        lambda: ada.JoinGame(mm.JoinGameRequest(game_id="gnone")),
    ):
        gone = expect_error(call, Code.NOT_FOUND, "PLAYER_NOT_FOUND")
        assert gone.message == "the player has expired"


def test_a_sealed_array_is_shown_in_the_stream_to_its_side_only_while_it_is_secret(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    players = players_of(matchmaker.address, clients, "red", "black")
    red, black = players["red"], players["black"]
    game = start_game(players, "napoleonic", options=SEALED_DAWN)
    # Live: streams open before the array is sealed, each waiting for the next update.
    live = {side: Watcher(players[side], game.id, after=game.version) for side in players}
    assert wait_for(lambda: all(_connected(red, game.id).values()))
    (full,) = submit_text(red, game.id, f"seal {sealed_array('red')}").notations
    assert "=I" in full

    def seen_by(client: Client, watcher: Watcher | None = None) -> list[str]:
        watcher = watcher or Watcher(client, game.id, after=game.version)  # catching up
        try:
            (update,) = watcher.until(game.version + 1)
        finally:
            watcher.close()
        assert update.side == "red"
        return list(update.notations)

    for watcher in (None, live["red"]):
        assert seen_by(red, watcher) == [full]
    for watcher in (None, live["black"]):
        (public,) = seen_by(black, watcher)
        assert public != full and "=I" not in public


def test_a_matched_player_whose_game_nobody_made_makes_it_itself_after_the_grace(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    """A replica may pair two tickets and stop before making their game: the waiting
    player's stream makes it once `match_create_grace` (1 s here) has passed."""
    # No pairing rounds but those asked for here: none every interval, none when a player
    # joins (on a busy machine, a late round would pair the two before this test does).
    server = replica(pair_interval=3600.0)
    assert server.replica is not None
    server.replica.service.poke_pairer = lambda: None
    players = players_of(server.address, clients, "south", "north")
    south, north = players["south"], players["north"]
    reader = _queue(south, game="war")
    try:
        assert _next(reader).position == 1

        async def pair_without_a_game(replica: Any) -> float:
            queues = replica.queues
            spec = await queues.spec("war", {}, "", TimeControl(), False)
            await queues.join(north.player_id, "North", spec)
            (match,) = await queues.pair(spec.queue_id)
            assert await queues.game_for(spec.queue_id, match, create=False) is None
            return time.monotonic()

        paired = server.call(pair_without_a_game)
        message = _next(reader)
        while not message.HasField("game"):
            message = _next(reader)
        assert time.monotonic() - paired >= 1.0
        game = message.game
        assert game.status == mm.GAME_STATUS_RUNNING and game.your_side in ("south", "north")
        assert {seat.player.id for seat in game.seats} == {south.player_id, north.player_id}
        assert wait_for(reader.ended.is_set) and reader.error is None
    finally:
        reader.call.cancel()


def test_a_waiting_players_stream_keeps_it_in_the_queue_past_the_tickets_liveness(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    """Each status poll renews the ticket and the player's place (6 s of liveness here, polled
    every 0.1 s): the player still waits there after 7.5 s, so a second join is refused. (A
    busy machine that stalled the replica for longer than the liveness, 1 s, then 3 s, rightly
    lost the ticket: its stream ended.)"""
    server = replica(ticket_liveness=6.0)
    ada = clients(server.address, "Ada")
    reader = _queue(ada, game="war")
    try:
        while _next(reader).waited.ToMilliseconds() < 7500:
            pass
        refused = expect_error(
            lambda: next(iter(ada.JoinQueue(mm.JoinQueueRequest(game="war"), timeout=10))),
            Code.FAILED_PRECONDITION,
            "ALREADY_QUEUED",
        )
        assert refused.message == "you are already waiting in a queue: leave it first"
    finally:
        reader.call.cancel()


def test_a_page_token_longer_than_any_the_server_hands_out_is_refused(ada: Client) -> None:
    """Even one that would decode to an offset: base64 decoding skips a stray character,
    so this 33-character token reads as offset 1."""
    token = base64.urlsafe_b64encode(("0" * 23 + "1").encode()).decode() + "!"
    assert len(token) == 33 and _offset(token) == 1
    refused = expect_error(
        lambda: ada.BrowseGames(mm.BrowseGamesRequest(page_token=token)),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    assert refused.fields == (("page_token", "the page token is malformed"),)

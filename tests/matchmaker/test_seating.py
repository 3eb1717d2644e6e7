"""Seating (`matchmaker/seating.py`): a time control read from the contract's message, and
the clock a new game is stored with (standing while the game is open, running for the side
to act once every seat is taken)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from google.protobuf.duration_pb2 import Duration
from prometheus_client import REGISTRY

from cli_client.lobby import is_game_id
from matchmaker import invites, keys
from matchmaker.engine import Engine
from matchmaker.players import Players
from matchmaker.ratings import Rating, Result, update
from matchmaker.record import BOT_PLAYER, GameRecord, GameStatus, Seat, SeatKind, Visibility
from matchmaker.scripts import Scripts
from matchmaker.seating import GameSpec, Seating, TimeControl
from matchmaker.server import Replica
from matchmaker.store import Store
from matchmaker.store import text as store_text
from tests.matchmaker.conftest import Client, InProcessMatchmaker, fast_settings, players_of, run
from tests.matchmaker.helpers import seconds, start_game, store_client
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import matchmaker_pb2 as mm


def test_a_time_control_keeps_its_base_and_increment() -> None:
    message = mm.TimeControl(base=seconds(300), increment=seconds(2.5))
    assert TimeControl.of(message) == TimeControl(300_000, 2_500)
    assert TimeControl.of(mm.TimeControl(base=seconds(60))) == TimeControl(60_000, 0)


def test_a_time_control_with_a_zero_base_is_refused() -> None:
    # An increment with no base would be a clock that starts flagged: refused, naming the field.
    with pytest.raises(Refusal) as refused:
        TimeControl.of(mm.TimeControl(base=seconds(0), increment=seconds(5)), "queue.time_control")
    assert refused.value.reason == Reason.MALFORMED_REQUEST
    assert [name for name, _ in refused.value.fields] == ["queue.time_control.base"]


DAY_MS = 24 * 3600 * 1000
HOUR_MS = 3600 * 1000


def milliseconds(value: int) -> Duration:
    """A protobuf Duration of `value` ms."""
    duration = Duration()
    duration.FromMilliseconds(value)
    return duration


def test_a_base_time_of_1_ms_is_the_shortest_taken() -> None:
    assert TimeControl.of(mm.TimeControl(base=milliseconds(1))) == TimeControl(1, 0)
    assert TimeControl(1, 0).text() == "1+0"


def test_a_base_time_of_7_days_is_the_longest_taken() -> None:
    week = mm.TimeControl(base=milliseconds(7 * DAY_MS))
    assert TimeControl.of(week) == TimeControl(7 * DAY_MS, 0)
    with pytest.raises(Refusal) as refused:
        TimeControl.of(mm.TimeControl(base=milliseconds(7 * DAY_MS + 1)))
    assert refused.value.reason == Reason.MALFORMED_REQUEST
    assert refused.value.fields == (
        ("time_control.base", "the base time must be positive and at most 7 days"),
    )


def test_an_increment_of_0_to_1_hour_is_taken() -> None:
    base = milliseconds(60_000)
    assert TimeControl.of(mm.TimeControl(base=base, increment=milliseconds(HOUR_MS))) == (
        TimeControl(60_000, HOUR_MS)
    )
    for wrong in (HOUR_MS + 1, -1):
        with pytest.raises(Refusal) as refused:
            TimeControl.of(mm.TimeControl(base=base, increment=milliseconds(wrong)), "tc")
        assert refused.value.fields == (("tc.increment", "the increment must be 0 to 1 hour"),)


def test_no_time_control_or_an_unset_one_is_untimed() -> None:
    assert TimeControl.of(None) == TimeControl(0, 0)
    assert TimeControl.of(mm.TimeControl()) == TimeControl(0, 0)
    with pytest.raises(Refusal) as refused:
        TimeControl.of(mm.TimeControl(increment=seconds(0)))  # set, though zero: no base
    assert [name for name, _ in refused.value.fields] == ["time_control.base"]


@pytest.mark.integration
def test_an_open_game_is_stored_with_its_clocks_standing_until_it_starts(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """The stored clock is what every replica reads: while the game waits for its second
    player no side's time runs; once it starts, the side to act's does."""
    south, north = (clients(matchmaker.address, name) for name in ("South", "North"))
    created = south.CreateGame(
        mm.CreateGameRequest(
            game="war", side="south", time_control=mm.TimeControl(base=seconds(60))
        )
    ).game
    record, _ = matchmaker.call(lambda replica: replica.store.get(created.id))
    assert record.clock is not None and record.clock.remaining == {"south": 60_000, "north": 60_000}
    assert record.clock.running == ()
    north.JoinGame(mm.JoinGameRequest(game_id=created.id))
    record, _ = matchmaker.call(lambda replica: replica.store.get(created.id))
    assert record.clock is not None and record.clock.running == ("south",)


def won_earlier(matchmaker: InProcessMatchmaker, player_id: str) -> Rating:
    """Three earlier wins counted in a player's Game of War rating: the rating it has now."""

    async def wins(replica: Replica) -> str:
        for number in range(3):
            await replica.players.apply_result(f"earlier-{number}", "war", player_id, Rating(), 1.0)
        return await replica.players.rating_text(player_id, "war")

    rating = Rating.parse(matchmaker.call(wins))
    assert rating.rating > 1600 and rating.games == 3
    return rating


def scored_loss(game: mm.GameView, side: str, opponent: Rating) -> None:
    """A newcomer's loss on `side` was scored against `opponent` (as the view shows it)."""
    loser = next(seat for seat in game.seats if seat.side == side)
    expected = Rating.parse(update(Rating(), [Result(opponent, 0.0)]).text())
    assert loser.rating_before.rating == 1500
    assert loser.rating_after.rating == pytest.approx(expected.rating, abs=1e-3)
    assert loser.rating_after.deviation == pytest.approx(expected.deviation, abs=1e-3)


@pytest.mark.integration
def test_a_rated_game_is_scored_against_the_rating_the_joiner_brought(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """The player who takes the open seat of a rated game sits with its rating of the
    moment: the creator, who loses, is scored against that rating, not a newcomer's."""
    two = players_of(matchmaker.address, clients, "south", "north")
    brought = won_earlier(matchmaker, two["north"].player_id)
    game = start_game(two, "war", rated=True)  # South creates, North joins
    two["south"].Resign(mm.ResignRequest(game_id=game.id))
    scored_loss(two["north"].GetGame(mm.GetGameRequest(game_id=game.id)).game, "south", brought)


@pytest.mark.integration
def test_a_rated_game_takes_the_creators_rating_as_of_the_start(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """A creator whose rating changed while its game waited (another game settled) sits
    with the rating of the moment the game starts: the joiner, who loses, is scored
    against that one."""
    two = players_of(matchmaker.address, clients, "south", "north")
    created = two["south"].CreateGame(mm.CreateGameRequest(game="war", side="south", rated=True))
    now = won_earlier(matchmaker, two["south"].player_id)
    two["north"].JoinGame(mm.JoinGameRequest(game_id=created.game.id))
    two["north"].Resign(mm.ResignRequest(game_id=created.game.id))
    scored_loss(two["south"].GetGame(mm.GetGameRequest(game_id=created.game.id)).game, "north", now)


# -- seating, driven on `Seating` itself (a real Redis and rules engine) ----------------


@contextlib.asynccontextmanager
async def seating_of(redis_url: str, engine: str, **changes: Any) -> AsyncIterator[Seating]:
    """The seating of a replica (its store, engine client and players) with these settings."""
    settings = fast_settings(redis_url, engine, **changes)
    redis = await store_client(redis_url)
    scripts = Scripts(redis)
    rules = Engine(engine, settings)
    store = Store(redis, scripts, settings)
    try:
        yield Seating(store, rules, Players(redis, scripts, settings), settings)
    finally:
        await rules.close()
        await redis.aclose()


WAR = GameSpec(ruleset="war", options={})


def ada_and(second: Seat) -> list[Seat]:
    """Ada on South, and `second` on North."""
    return [Seat("south", "p-ada", "Ada"), second]


async def counted(seating: Seating, player_id: str) -> list[str]:
    """The games a player's unfinished games count."""
    rows: Any = await seating.store.redis.zrange(keys.player_games(player_id), 0, -1)
    return sorted(store_text(row) for row in rows)


async def listed(seating: Seating, status: GameStatus) -> list[tuple[str, float]]:
    """The games of a Game of War browse list, with their creation times."""
    rows = await seating.store.list_page([status], ["war"], 0, 50)
    return [(game_id, created) for _, _, game_id, created in rows]


async def refusal_of(call: Awaitable[Any]) -> tuple[Code, str, str, tuple[tuple[str, str], ...]]:
    """How `call` is refused: code, reason, message and fields."""
    with pytest.raises(Refusal) as refused:
        await call
    found = refused.value
    return found.code, found.reason, found.message, found.fields


@pytest.mark.integration
def test_a_game_with_every_seat_taken_runs_at_once(redis_url: str, engine_address: str) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            spec = replace(WAR, time_control=TimeControl(60_000, 1_000), rated=True)
            game, now = await seating.create(spec, ada_and(Seat("north", "p-bob", "Bob")))
            assert (game.status, game.version, game.ruleset, game.rated) == (
                "running",
                1,
                "war",
                True,
            )
            assert (game.created_ms, game.updated_ms, game.acted_ms) == (now, now, now)
            assert game.invite == ""  # every seat taken: nobody to invite
            assert game.clock is not None and game.clock.running == tuple(game.state.to_act)
            assert game.clock.remaining == {"south": 60_000, "north": 60_000}
            stored, _ = await seating.store.get(game.id)
            assert (stored.status, stored.version, stored.seats) == ("running", 1, game.seats)
            assert await listed(seating, GameStatus.RUNNING) == [(game.id, now)]
            assert await listed(seating, GameStatus.OPEN) == []
            assert await counted(seating, "p-ada") == await counted(seating, "p-bob") == [game.id]

    run(scenario())


@pytest.mark.integration
def test_an_open_game_starts_when_its_last_seat_is_taken(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            spec = replace(WAR, time_control=TimeControl(60_000, 0))
            game, created = await seating.create(spec, ada_and(Seat("north")))
            assert (game.status, game.version) == ("open", 1)
            assert game.clock is not None and game.clock.running == ()
            # It counts for its seated player only, never for the open seat's nobody.
            assert await counted(seating, "p-ada") == [game.id]
            assert await counted(seating, "") == []
            assert await listed(seating, GameStatus.OPEN) == [(game.id, created)]
            joined, now = await seating.join("p-bob", "Bob", game_id=game.id)
            assert (joined.status, joined.version, joined.updated_ms) == ("running", 2, now)
            assert [(s.side, s.player, s.name) for s in joined.seats] == [
                ("south", "p-ada", "Ada"),
                ("north", "p-bob", "Bob"),
            ]
            assert joined.clock is not None and joined.clock.running == tuple(joined.state.to_act)
            stored, _ = await seating.store.get(game.id)
            assert (stored.status, stored.version, stored.seats) == ("running", 2, joined.seats)
            # It moves to the running list, still by the time it was made.
            assert await listed(seating, GameStatus.OPEN) == []
            assert await listed(seating, GameStatus.RUNNING) == [(game.id, created)]
            assert await counted(seating, "p-bob") == [game.id]
            # Joining again changes nothing; anyone else finds the game taken.
            again, _ = await seating.join("p-bob", "Bob", game_id=game.id)
            assert again.version == 2
            assert await refusal_of(seating.join("p-cyd", "Cyd", game_id=game.id)) == (
                Code.FAILED_PRECONDITION,
                "GAME_NOT_OPEN",
                f"game {game.id} is running; it takes no more players",
                (),
            )
            assert await counted(seating, "p-cyd") == []

    run(scenario())


@pytest.mark.integration
def test_a_seat_is_refused_when_taken_kept_for_another_or_unknown(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            game, _ = await seating.create(WAR, ada_and(Seat("north")))
            assert await refusal_of(
                seating.join("p-bob", "Bob", game_id=game.id, side="south")
            ) == (
                Code.FAILED_PRECONDITION,
                "SEAT_TAKEN",
                "the south seat is taken",
                (("side", "the south seat is taken"),),
            )
            code, reason, _, fields = await refusal_of(
                seating.join("p-bob", "Bob", game_id=game.id, side="east")
            )
            assert (code, reason, fields) == (
                Code.INVALID_ARGUMENT,
                "MALFORMED_REQUEST",
                (("side", "game war has no side 'east'; sides: south, north"),),
            )
            kept, _ = await seating.create(WAR, ada_and(Seat("north", reserved="p-bob")))
            for side in ("north", ""):
                assert await refusal_of(
                    seating.join("p-cyd", "Cyd", game_id=kept.id, side=side)
                ) == (
                    Code.PERMISSION_DENIED,
                    "SEAT_TAKEN",
                    "the north seat is kept for the player offered this rematch",
                    (("side", "the north seat is kept for the player offered this rematch"),),
                )
            assert await counted(seating, "p-bob") == await counted(seating, "p-cyd") == []
            # A game with a kept seat is not listed as open; the player it is kept for takes
            # it, and the game, public, is listed as running from then on.
            assert [game_id for game_id, _ in await listed(seating, GameStatus.OPEN)] == [game.id]
            joined, _ = await seating.join("p-bob", "Bob", game_id=kept.id)
            assert (joined.status, joined.seats[1].player) == ("running", "p-bob")
            assert await listed(seating, GameStatus.RUNNING) == [(kept.id, kept.created_ms)]

    run(scenario())


@pytest.mark.integration
def test_a_private_game_is_joined_by_its_invite_code_only(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            spec = replace(WAR, visibility=Visibility.PRIVATE)
            game, _ = await seating.create(spec, ada_and(Seat("north")), with_invite=True)
            normal = invites.normalize(game.invite)
            assert normal is not None and await seating.store.invite_target(normal) == game.id
            assert (await seating.store.get(game.id))[0].invite == game.invite
            assert await listed(seating, GameStatus.OPEN) == []  # private: never listed
            assert await refusal_of(seating.join("p-bob", "Bob", game_id=game.id)) == (
                Code.FAILED_PRECONDITION,
                "GAME_NOT_OPEN",
                f"game {game.id} is private: join it with its invite code",
                (),
            )
            wrong = "2222-2222-2222-2222" if normal != "2" * 16 else "3333-3333-3333-3333"
            assert await refusal_of(seating.join("p-bob", "Bob", code=wrong)) == (
                Code.NOT_FOUND,
                "SESSION_NOT_FOUND",
                "no game has this invite code (unknown or expired)",
                (("invite_code", "no game has this invite code (unknown or expired)"),),
            )
            code, reason, _, fields = await refusal_of(seating.join("p-bob", "Bob", code="7K3M"))
            assert (code, reason, fields) == (
                Code.INVALID_ARGUMENT,
                "MALFORMED_REQUEST",
                (
                    (
                        "invite_code",
                        "an invite code is 16 letters and digits in groups of 4, "
                        "like 7K3M-9QX2-HF4P-T8WZ",
                    ),
                ),
            )
            joined, _ = await seating.join("p-bob", "Bob", code=game.invite.lower())
            assert (joined.id, joined.status) == (game.id, "running")

    run(scenario())


@pytest.mark.integration
def test_an_invite_code_already_taken_is_drawn_again_five_times_at_most(
    redis_url: str, engine_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drawn code that opens another game already is never shared: a new one is drawn,
    up to five in all; then the game is not made, and counts for nobody."""
    taken, fresh = "7K3M-9QX2-HF4P-T8WZ", "2222-3333-4444-5555"
    drawn: list[str] = []

    def draw(codes: list[str]) -> None:
        drawn.clear()
        pending = iter(codes)

        def new_code() -> str:
            drawn.append(next(pending))
            return drawn[-1]

        monkeypatch.setattr(invites, "new_code", new_code)

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            assert await seating.store.set_invite("7K3M9QX2HF4PT8WZ", "gearlier")
            draw([taken] * 4 + [fresh])
            spec = replace(WAR, visibility=Visibility.PRIVATE)
            game, _ = await seating.create(spec, ada_and(Seat("north")), with_invite=True)
            assert (game.invite, len(drawn)) == (fresh, 5)
            assert await seating.store.invite_target("2222333344445555") == game.id
            assert await seating.store.invite_target("7K3M9QX2HF4PT8WZ") == "gearlier"
            draw([taken] * 5 + [fresh])
            with pytest.raises(RuntimeError, match="no free invite code after 5 tries"):
                await seating.create(spec, ada_and(Seat("north", "p-bob", "Bob")), with_invite=True)
            assert len(drawn) == 5
            assert await counted(seating, "p-ada") == [game.id]
            assert await counted(seating, "p-bob") == []
            assert [made.id for made in await games_made(seating)] == [game.id]

    run(scenario())


@pytest.mark.integration
def test_creating_a_game_twice_under_one_id_makes_it_once(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            first, _ = await seating.create(WAR, ada_and(Seat("north")), game_id="g-match-1")
            again, _ = await seating.create(
                WAR, ada_and(Seat("north", "p-bob", "Bob")), game_id="g-match-1"
            )
            assert (again.id, again.version, again.status) == ("g-match-1", 1, "open")
            assert (again.created_ms, again.seats) == (first.created_ms, first.seats)

    run(scenario())


@pytest.mark.integration
def test_a_game_made_without_an_id_gets_a_fresh_one_the_client_reads_as_a_game_id(
    redis_url: str, engine_address: str
) -> None:
    """A game id is "g" and 14 lowercase base32 characters (the form of a queue match's
    ids, and what `--join` tells from an invite code); every game gets its own."""

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            made = [(await seating.create(WAR, ada_and(Seat("north"))))[0] for _ in range(3)]
            for game in made:
                assert re.fullmatch(r"g[a-z2-7]{14}", game.id), game.id
                assert is_game_id(game.id) and invites.normalize(game.id) is None
                assert (await seating.store.get(game.id))[0].id == game.id
            assert len({game.id for game in made}) == 3

    run(scenario())


@pytest.mark.integration
def test_of_two_players_racing_for_the_last_seat_the_one_refused_counts_no_game(
    redis_url: str, engine_address: str
) -> None:
    """Bob and Cyd join the same open seat at once: one sits, the other finds the game
    running (whether it read the game before or after the seat was taken) and keeps no
    count of it. (A few rounds: which of them reads the game first depends on timing.)"""

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            for _ in range(4):
                game, _ = await seating.create(WAR, ada_and(Seat("north")))
                joins = await asyncio.gather(
                    seating.join("p-bob", "Bob", game_id=game.id),
                    seating.join("p-cyd", "Cyd", game_id=game.id),
                    return_exceptions=True,
                )
                refused = [found for found in joins if isinstance(found, Refusal)]
                assert len(refused) == 1, joins
                assert (refused[0].code, refused[0].reason, refused[0].message) == (
                    Code.FAILED_PRECONDITION,
                    "GAME_NOT_OPEN",
                    f"game {game.id} is running; it takes no more players",
                )
                stored, _ = await seating.store.get(game.id)
                winner = stored.seats[1].player
                loser = "p-cyd" if winner == "p-bob" else "p-bob"
                assert (stored.status, stored.version, winner) in {
                    ("running", 2, "p-bob"),
                    ("running", 2, "p-cyd"),
                }
                assert game.id in await counted(seating, winner)
                assert game.id not in await counted(seating, loser)

    run(scenario())


@pytest.mark.integration
def test_a_player_at_the_most_games_is_refused_and_nobody_keeps_the_count(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address, max_open_games=1) as seating:
            first, _ = await seating.create(WAR, ada_and(Seat("north")))
            code, reason, message, _ = await refusal_of(
                seating.create(WAR, ada_and(Seat("north")), capped=["p-ada"])
            )
            assert (code, reason) == (Code.RESOURCE_EXHAUSTED, "TOO_MANY_GAMES")
            assert message.startswith("you sit in 1 unfinished games, the most one player may")
            assert await counted(seating, "p-ada") == [first.id]
            assert await listed(seating, GameStatus.OPEN) == [(first.id, first.created_ms)]
            # Uncapped (a queue match), the game counts all the same.
            seats = [Seat("south", "p-bob", "Bob"), Seat("north", "p-ada", "Ada")]
            second, _ = await seating.create(WAR, seats)
            assert await counted(seating, "p-ada") == sorted([first.id, second.id])
            # An engine refusal makes no game and counts none.
            code, reason, _, _ = await refusal_of(
                seating.create(GameSpec(ruleset="war", options={"board": "huge"}), seats[:1])
            )
            assert code == Code.INVALID_ARGUMENT
            assert await counted(seating, "p-bob") == [second.id]

    run(scenario())


@pytest.mark.integration
def test_a_player_withdraws_a_game_nobody_joined(redis_url: str, engine_address: str) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address, open_game_ttl=90.5) as seating:
            game, _ = await seating.create(WAR, ada_and(Seat("north")))
            await seating.store.schedule(game.id, game.created_ms + 90_500)
            assert await seating.withdraw("p-bob", game.id) is None  # not seated
            done = await seating.withdraw("p-ada", game.id)
            assert done is not None
            closed, now = done
            assert (closed.status, closed.version, closed.ended_ms, closed.updated_ms) == (
                "finished",
                2,
                now,
                now,
            )
            assert closed.closed == "south withdrew the game before anyone joined"
            stored, _ = await seating.store.get(game.id)
            assert (stored.status, stored.closed) == ("finished", closed.closed)
            assert await seating.store.redis.zscore(seating.store._due(game.id), game.id) is None
            assert await listed(seating, GameStatus.OPEN) == []
            assert await counted(seating, "p-ada") == []
            # Closed by the sweeper instead: the reason says how long it waited.
            other, now = await seating.create(WAR, ada_and(Seat("north")))
            swept = await seating.close_open(other, now)
            assert swept is not None and swept.closed == "nobody joined within 90.5 s"
            assert await seating.close_open(other, now) is None  # changed meanwhile
            # A running game is resigned, not withdrawn.
            running, _ = await seating.create(WAR, ada_and(Seat("north", "p-bob", "Bob")))
            assert await seating.withdraw("p-ada", running.id) is None
            assert (await seating.store.get(running.id))[0].status == "running"

    run(scenario())


GRAND_BATTLE = GameSpec(ruleset="napoleonic", options={"scenario": "grand_battle_2v2"})


@pytest.mark.integration
def test_in_a_game_of_four_a_player_leaves_and_the_last_one_withdraws_it(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            seats = [
                Seat("red", "p-ada", "Ada"),
                Seat("black", "p-bob", "Bob"),
                Seat("blue"),
                Seat("green"),
            ]
            game, _ = await seating.create(GRAND_BATTLE, seats)
            left = await seating.withdraw("p-ada", game.id)
            assert left is not None
            after, now = left
            assert (after.status, after.version, after.updated_ms) == ("open", 2, now)
            assert [(s.side, s.player) for s in after.seats] == [
                ("red", ""),
                ("black", "p-bob"),
                ("blue", ""),
                ("green", ""),
            ]
            stored, _ = await seating.store.get(game.id)
            assert (stored.version, stored.seats) == (2, after.seats)
            # The watchers hear the seat left, by its side.
            (made, leave) = await seating.store.updates_after(game.id, 0)
            assert [(entry.version, entry.side) for entry in (made, leave)] == [(1, ""), (2, "red")]
            assert mm.WatchGameResponse.FromString(leave.message).side == "red"
            assert await counted(seating, "p-ada") == []
            assert await counted(seating, "p-bob") == [game.id]
            # Bob, alone now, gives up waiting: the game is closed.
            done = await seating.withdraw("p-bob", game.id)
            assert done is not None and done[0].status == "finished"
            assert done[0].closed == "black withdrew the game before anyone joined"
            assert await counted(seating, "p-bob") == []

    run(scenario())


def commits() -> dict[str, float]:
    """How many seating changes the matchmaker counted as committed, by kind (its metric
    `wargame_matchmaker_commits_total`)."""
    kinds = ("create", "join", "leave", "close")
    found = {kind: REGISTRY.get_sample_value(COMMITS_TOTAL, {"kind": kind}) for kind in kinds}
    return {kind: value or 0.0 for kind, value in found.items()}


COMMITS_TOTAL = "wargame_matchmaker_commits_total"


@pytest.mark.integration
def test_every_seating_change_is_counted_as_a_commit_of_its_kind(
    redis_url: str, engine_address: str
) -> None:
    """A game made, a seat taken, a seat left and a game closed unplayed: one commit each,
    counted under its kind; a game made again under its id commits nothing."""

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            before = commits()

            def since() -> dict[str, float]:
                return {kind: count - before[kind] for kind, count in commits().items()}

            seats = [Seat("red", "p-ada", "Ada"), Seat("black"), Seat("blue"), Seat("green")]
            game, _ = await seating.create(GRAND_BATTLE, seats, game_id="gcounted")
            await seating.create(GRAND_BATTLE, seats, game_id="gcounted")
            assert since() == {"create": 1, "join": 0, "leave": 0, "close": 0}
            await seating.join("p-bob", "Bob", game_id=game.id)
            assert since() == {"create": 1, "join": 1, "leave": 0, "close": 0}
            await seating.withdraw("p-bob", game.id)  # Ada sits too: Bob only leaves
            assert since() == {"create": 1, "join": 1, "leave": 1, "close": 0}
            await seating.withdraw("p-ada", game.id)  # alone: the game is closed
            assert since() == {"create": 1, "join": 1, "leave": 1, "close": 1}

    run(scenario())


@pytest.mark.integration
def test_the_bots_of_a_game_of_four_sit_as_they_were_when_the_last_person_joins(
    redis_url: str, engine_address: str
) -> None:
    """Joining reads every seated person's rating of the moment; the bots' seats, with no
    rating, are left exactly as they were."""

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            bots = [Seat(side, BOT_PLAYER, "Bot", SeatKind.BOT) for side in ("black", "green")]
            seats = [Seat("red", "p-ada", "Ada"), bots[0], Seat("blue"), bots[1]]
            game, _ = await seating.create(GRAND_BATTLE, seats)
            assert game.status == "open"
            assert await counted(seating, BOT_PLAYER) == await counted(seating, "") == []
            joined, _ = await seating.join("p-bob", "Bob", game_id=game.id)
            assert joined.status == "running"
            stored, _ = await seating.store.get(game.id)
            for seats_now in (joined.seats, stored.seats):
                assert [seats_now[1], seats_now[3]] == bots
                assert [(s.player, s.name) for s in (seats_now[0], seats_now[2])] == [
                    ("p-ada", "Ada"),
                    ("p-bob", "Bob"),
                ]

    run(scenario())


async def finished(seating: Seating, game: GameRecord, **changes: Any) -> GameRecord:
    """`game` ended (a next version, FINISHED), as stored."""
    now = await seating.store.time_ms()
    ended = replace(game, status=GameStatus.FINISHED, version=game.version + 1, **changes)
    result = await seating.store.commit_change(game, ended, now, mm.WatchGameResponse())
    assert result.outcome == "ok"
    return (await seating.store.get(game.id, full=True))[0]


@pytest.mark.integration
def test_a_rematch_swaps_the_sides_and_keeps_the_seat_for_the_opponent(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            spec = replace(WAR, time_control=TimeControl(60_000, 1_000), rated=True)
            played, _ = await seating.create(spec, ada_and(Seat("north", "p-bob", "Bob")))
            old = await finished(seating, played)
            game, now = await seating.rematch("p-ada", "Ada", old.id)
            assert (game.status, game.rematch_of, game.rated, game.ruleset) == (
                "open",
                old.id,
                True,
                "war",
            )
            assert [(s.side, s.player, s.name, s.reserved) for s in game.seats] == [
                ("south", "", "", "p-bob"),
                ("north", "p-ada", "Ada", ""),
            ]
            assert game.clock is not None
            assert (game.clock.base_ms, game.clock.increment_ms) == (60_000, 1_000)
            assert (await seating.store.get(old.id))[0].rematch == game.id
            (offer,) = await seating.store.updates_after(old.id, old.version)
            assert (offer.position, offer.notice) == (
                (old.version, 1),
                {"n": "REMATCH_OFFERED", "s": "south", "g": game.id, "t": str(now)},
            )
            # The opponent's rematch of the old game is the offered one: it takes its seat.
            taken, _ = await seating.rematch("p-bob", "Bob", old.id)
            assert (taken.id, taken.status) == (game.id, "running")
            assert [(s.side, s.player, s.name) for s in taken.seats] == [
                ("south", "p-bob", "Bob"),
                ("north", "p-ada", "Ada"),
            ]

    run(scenario())


@pytest.mark.integration
def test_a_rematch_of_a_private_game_is_private_and_its_kept_seat_taken_without_a_code(
    redis_url: str, engine_address: str
) -> None:
    """The new game is as private as the old one (never listed, no invite code: nobody
    else is invited); the opponent takes the seat kept for it by the game's id alone."""

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            private = replace(WAR, visibility=Visibility.PRIVATE)
            played, _ = await seating.create(
                private, ada_and(Seat("north", "p-bob", "Bob")), with_invite=True
            )
            old = await finished(seating, played)
            game, _ = await seating.rematch("p-ada", "Ada", old.id)
            assert (game.visibility, game.invite, game.status) == ("private", "", "open")
            assert await listed(seating, GameStatus.OPEN) == []
            assert await refusal_of(seating.join("p-cyd", "Cyd", game_id=game.id)) == (
                Code.FAILED_PRECONDITION,
                "GAME_NOT_OPEN",
                f"game {game.id} is private: join it with its invite code",
                (),
            )
            joined, _ = await seating.join("p-bob", "Bob", game_id=game.id)
            assert (joined.status, joined.seats[0].player, joined.seats[0].name) == (
                "running",
                "p-bob",
                "Bob",
            )
            assert await listed(seating, GameStatus.RUNNING) == []  # private: never listed

    run(scenario())


@pytest.mark.integration
def test_a_rematch_of_a_bot_starts_at_once(redis_url: str, engine_address: str) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            bot = Seat("north", BOT_PLAYER, "Bot", SeatKind.BOT)
            spec = replace(WAR, bot_ms=50, bot_level=2)
            old = await finished(seating, (await seating.create(spec, ada_and(bot)))[0])
            game, _ = await seating.rematch("p-ada", "Ada", old.id)
            assert game.status == "running" and game.clock is None
            assert (game.bot_ms, game.bot_level) == (50, 2)
            assert [(s.side, s.player, s.name, s.kind) for s in game.seats] == [
                ("south", BOT_PLAYER, "Bot", "bot"),
                ("north", "p-ada", "Ada", "human"),
            ]

    run(scenario())


@pytest.mark.integration
def test_a_rematch_is_for_a_finished_game_of_two_one_played(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            running, _ = await seating.create(WAR, ada_and(Seat("north", "p-bob", "Bob")))
            assert await refusal_of(seating.rematch("p-ada", "Ada", running.id)) == (
                Code.FAILED_PRECONDITION,
                "GAME_NOT_FINISHED",
                f"game {running.id} has not finished: play it out first",
                (),
            )
            old = await finished(seating, running)
            assert await refusal_of(seating.rematch("p-cyd", "Cyd", old.id)) == (
                Code.PERMISSION_DENIED,
                "NOT_A_PLAYER",
                f"you hold no seat in game {old.id}",
                (),
            )
            closed, _ = await seating.create(WAR, ada_and(Seat("north")))
            closed = await finished(seating, closed, closed="nobody joined within 1 s")
            assert await refusal_of(seating.rematch("p-ada", "Ada", closed.id)) == (
                Code.FAILED_PRECONDITION,
                "GAME_NOT_FINISHED",
                f"game {closed.id} was never played",
                (),
            )
            three = [Seat(side, f"p-{side}", side) for side in ("red", "black", "green")]
            spec = GameSpec(ruleset="napoleonic", options={"scenario": "three_way"})
            trio = await finished(seating, (await seating.create(spec, three))[0])
            assert await refusal_of(seating.rematch("p-green", "green", trio.id)) == (
                Code.FAILED_PRECONDITION,
                "GAME_NOT_OPEN",
                f"a rematch is for games of two players; game {trio.id} had 3: "
                "start a new game of its scenario",
                (),
            )
            four = [Seat(side, f"p-{side}", side) for side in ("red", "black", "blue", "green")]
            big = await finished(seating, (await seating.create(GRAND_BATTLE, four))[0])
            assert await refusal_of(seating.rematch("p-red", "red", big.id)) == (
                Code.FAILED_PRECONDITION,
                "GAME_NOT_OPEN",
                f"a rematch is for games of two players; game {big.id} had 4: "
                "start a new game of its scenario",
                (),
            )
            assert await refusal_of(seating.rematch("p-ada", "Ada", "g-gone")) == (
                Code.NOT_FOUND,
                "SESSION_NOT_FOUND",
                "no game 'g-gone' (unknown or expired)",
                (("game_id", "no game 'g-gone' (unknown or expired)"),),
            )

    run(scenario())


@pytest.mark.integration
def test_wrong_invite_codes_cost_the_guessing_player_only(
    redis_url: str, engine_address: str
) -> None:
    """Each player may guess a few wrong codes (its own burst), then is held back; another
    player's guesses are its own (the address and global limits are off here)."""
    limits = {"guess_player_rate": 0.001, "guess_player_burst": 2.0}
    off = {"guess_peer_rate": 0.0, "guess_rate": 0.0}

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address, **limits, **off) as seating:
            wrong = "2222-2222-2222-2222"
            for _ in range(2):
                code, reason, _, _ = await refusal_of(
                    seating.join("p-ada", "Ada", code=wrong, address="10.0.0.1")
                )
                assert (code, reason) == (Code.NOT_FOUND, "SESSION_NOT_FOUND")
            code, reason, message, _ = await refusal_of(
                seating.join("p-ada", "Ada", code=wrong, address="10.0.0.1")
            )
            assert (code, reason) == (Code.RESOURCE_EXHAUSTED, "RATE_LIMITED")
            assert message.startswith("too many wrong invite codes from you")
            code, reason, _, _ = await refusal_of(
                seating.join("p-bob", "Bob", code=wrong, address="10.0.0.1")
            )
            assert (code, reason) == (Code.NOT_FOUND, "SESSION_NOT_FOUND")

    run(scenario())


@pytest.mark.integration
def test_a_rematch_is_made_with_the_old_games_options(redis_url: str, engine_address: str) -> None:
    """The options and the preset both: the Rotated North preset turns North's layout."""

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            spec = GameSpec(
                ruleset="war", options={"compulsion": "legality"}, preset="rotated_north"
            )
            played, _ = await seating.create(spec, ada_and(Seat("north", "p-bob", "Bob")))
            old = await finished(seating, played)
            game, _ = await seating.rematch("p-bob", "Bob", old.id)
            assert (game.options, game.preset, game.rematch_of) == (
                {"compulsion": "legality"},
                "rotated_north",
                old.id,
            )
            assert game.state.options["north_layout"] == "rotate_180"
            assert game.state.options["compulsion"] == "legality"
            stored, _ = await seating.store.get(game.id, full=True)
            assert (stored.options, stored.preset) == ({"compulsion": "legality"}, "rotated_north")

    run(scenario())


@pytest.mark.integration
def test_a_player_at_the_most_games_gets_no_rematch(redis_url: str, engine_address: str) -> None:
    async def scenario() -> None:
        async with seating_of(redis_url, engine_address, max_open_games=1) as seating:
            played, _ = await seating.create(WAR, ada_and(Seat("north", "p-bob", "Bob")))
            old = await finished(seating, played)  # counts no more: it is finished
            waiting, _ = await seating.create(WAR, ada_and(Seat("north")))
            code, reason, _, _ = await refusal_of(seating.rematch("p-ada", "Ada", old.id))
            assert (code, reason) == (Code.RESOURCE_EXHAUSTED, "TOO_MANY_GAMES")
            assert await counted(seating, "p-ada") == [waiting.id]
            assert (await seating.store.get(old.id))[0].rematch == ""

    run(scenario())


async def games_made(seating: Seating) -> list[GameRecord]:
    """Every game stored."""
    found = []
    async for name in seating.store.redis.scan_iter(match=keys.game("*")):
        game_id = store_text(name).split("{")[1].rstrip("}")
        found.append((await seating.store.get(game_id))[0])
    return found


@pytest.mark.integration
def test_rematches_both_players_ask_for_at_once_make_one_game(
    redis_url: str, engine_address: str
) -> None:
    """Both players ask at the same moment: the first rematch recorded on the old game is
    the one both play; the other's new game, if it made one, is closed at once, due for
    nothing. (A few rounds: whether the second sees the first's rematch before making its
    own depends on the timing.)"""

    async def scenario() -> None:
        async with seating_of(redis_url, engine_address) as seating:
            for _ in range(4):
                played, _ = await seating.create(WAR, ada_and(Seat("north", "p-bob", "Bob")))
                old = await finished(seating, played)
                (ada, _), (bob, _) = await asyncio.gather(
                    seating.rematch("p-ada", "Ada", old.id),
                    seating.rematch("p-bob", "Bob", old.id),
                )
                assert ada.id == bob.id == (await seating.store.get(old.id))[0].rematch
                game, _ = await seating.store.get(ada.id)
                assert game.status == "running"
                assert [(s.player, s.name) for s in game.seats] == [
                    ("p-bob", "Bob"),
                    ("p-ada", "Ada"),
                ]
                made = [
                    other
                    for other in await games_made(seating)
                    if other.rematch_of == old.id and other.id != game.id
                ]
                assert len(made) <= 1
                for other in made:
                    (asker,) = [s.player for s in other.seats if s.player]
                    old_seat = old.seat_of(asker)
                    assert old_seat is not None
                    assert (other.status, other.closed) == (
                        "finished",
                        f"{old_seat.side} accepted the rematch offered at once",
                    )
                    due = seating.store._due(other.id)
                    assert await seating.store.redis.zscore(due, other.id) is None
                    assert other.id not in await counted(seating, asker)

    run(scenario())

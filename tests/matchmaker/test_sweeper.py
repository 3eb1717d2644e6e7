"""The sweeper's work on a game vs the bot, on a replica's own parts (no workers running,
so the test alone sweeps): the due time it returns, the bot's resignation when its action
is refused, and the log context of its work."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from matchmaker.bot import Bot
from matchmaker.engine import EngineError, EngineFailure
from matchmaker.record import BOT_PLAYER, GameRecord, GameStatus, Seat, SeatKind
from matchmaker.seating import GameSpec, TimeControl
from matchmaker.server import Replica
from matchmaker.sweeper import RETRY_MS
from tests.matchmaker.conftest import both_stores, fast_settings
from tests.matchmaker.helpers import captured_logs
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.runtime.status import ErrorDetails
from wargame.v1 import game_pb2

pytestmark = pytest.mark.integration


@contextlib.asynccontextmanager
async def bot_game(
    redis_url: str, engine_address: str, **settings: Any
) -> AsyncIterator[tuple[Replica, str]]:
    """A replica's parts (not serving, no workers) and a Game of War it created: Ada plays
    North, the bot South, to move."""
    replica = await Replica.connect(fast_settings(redis_url, engine_address, **settings))
    try:
        game, _ = await replica.seating.create(
            GameSpec("war", {}),
            [
                Seat("south", BOT_PLAYER, "Bot", SeatKind.BOT),
                Seat("north", "p-ada", "Ada", SeatKind.HUMAN),
            ],
        )
        assert game.to_act() == ("south",)
        yield replica, game.id
    finally:
        await replica.close()


async def loaded(replica: Replica, game_id: str) -> GameRecord:
    game, _, _ = await replica.store.load(game_id)
    assert game is not None
    return game


def test_after_the_bots_move_a_game_against_a_person_alone_is_due_at_no_time(
    redis_url: str, engine_address: str
) -> None:
    """Ada never came (North is away once a presence lifetime from the start has passed,
    the grace of a player just seated): once the bot has moved, nobody else waits for her,
    so she is never warned and the untimed game is never due again (`work_on` says None)
    until she acts."""

    async def scenario() -> None:
        async with bot_game(redis_url, engine_address) as (replica, game_id):
            grace_ends = (await loaded(replica, game_id)).started_ms + int(
                replica.settings.presence_ttl * 1000
            )
            while await replica.store.time_ms() <= grace_ends:  # by the Redis clock
                await asyncio.sleep(0.1)
            before = await replica.store.time_ms()
            when = await replica.sweeper.work_on(game_id)
            game = await loaded(replica, game_id)
            assert [entry.side for entry in game.moves] == ["south"]
            assert game.to_act() == ("north",) and "north" in game.away
            assert before <= game.updated_ms and when is None and game.warned == {}

    asyncio.run(scenario())


async def worked_with(
    replica: Replica, game_id: str, bot: type[Bot]
) -> tuple[GameRecord, list[dict[str, Any]]]:
    """The sweeper works on the game once with `bot` in the bot's seat, and the game ends
    (nothing left to rate): the game after, and what was logged meanwhile."""
    replica.sweeper.bot = bot(replica.engine, replica.store.vault, replica.settings)
    with captured_logs() as logs:
        assert await replica.sweeper.work_on(game_id) is None
    return await loaded(replica, game_id), logs


class RefusedBot(Bot):
    """A bot whose action the engine refuses (as if it had suggested an illegal move)."""

    async def action(self, game: GameRecord, seat: Seat) -> game_pb2.Action:
        return game_pb2.Action(side=seat.side, notation="Ch1-h9")


def test_a_bot_whose_action_is_refused_resigns(redis_url: str, engine_address: str) -> None:
    async def scenario() -> None:
        async with bot_game(redis_url, engine_address) as (replica, game_id):
            game, logs = await worked_with(replica, game_id, RefusedBot)
            assert game.status == GameStatus.FINISHED
            outcome = game.state.outcome
            assert (outcome.winner, outcome.reason) == (
                "north",
                game_pb2.OUTCOME_REASON_RESIGNATION,
            )
            assert [entry.side for entry in game.moves] == ["south"]
            # The operator reads which game's bot resigned, and why the engine refused.
            [entry] = [
                entry for entry in logs if entry["event"] == "bot resigns: its action was refused"
            ]
            assert (entry["game_id"], entry["reason"], entry["log_level"]) == (
                game_id,
                "ILLEGAL_MOVE_GEOMETRY",
                "warning",
            )
            assert entry["message"].startswith("'Ch1-h9': the South Cannon on h1 cannot go to h9")

    asyncio.run(scenario())


def test_the_sweepers_work_is_logged_as_the_sweepers(redis_url: str, engine_address: str) -> None:
    """A round of the sweeper claims the bot's game and works on it: every entry it logs
    meanwhile names the worker and the game, and they and the engine's entries of its calls
    share one request id."""

    async def scenario() -> None:
        async with bot_game(redis_url, engine_address) as (replica, game_id):
            with captured_logs() as logs:
                await replica.sweeper._claim()
                await replica.sweeper.drain(30)
            assert [entry.side for entry in (await loaded(replica, game_id)).moves] == ["south"]
            # (The engine serves in this process too: its entries share the request id.)
            ours = [entry for entry in logs if entry["component"] == "matchmaker"]
            assert {"due game claimed", "bot moved"} <= {entry["event"] for entry in ours}
            assert "reschedule failed" not in {entry["event"] for entry in ours}
            moved = await loaded(replica, game_id)
            [entry] = [entry for entry in ours if entry["event"] == "bot moved"]
            assert (entry["side"], entry["moves"]) == ("south", [moved.moves[0].public])
            assert {(entry.get("worker"), entry.get("game_id")) for entry in ours} == {
                ("sweeper", game_id)
            }
            request_ids = {entry.get("request_id") for entry in ours}
            assert len(request_ids) == 1 and None not in request_ids, ours
            # The engine's entries of the sweeper's calls carry it too. An entry of no request
            # at all (another part's, as a paired run saw once) is not the sweeper's work; an
            # entry of another request would be.
            calls = [entry for entry in logs if entry["event"] == "rpc"]
            assert calls and {entry.get("request_id") for entry in calls} == request_ids, logs
            assert {entry.get("request_id") for entry in logs} - {None} == request_ids, logs

    asyncio.run(scenario())


class SilentBot(Bot):
    """A bot for which the engine finds no action (it refuses the request for one)."""

    async def action(self, game: GameRecord, seat: Seat) -> game_pb2.Action:
        raise EngineError(
            ErrorDetails(grpc.StatusCode.FAILED_PRECONDITION, "no action found", "NO_SUGGESTION")
        )


def test_a_bot_without_a_suggestion_resigns_and_the_log_says_why(
    redis_url: str, engine_address: str
) -> None:
    """The operator reads which game's bot resigned, and the engine's reason and message."""

    async def scenario() -> None:
        async with bot_game(redis_url, engine_address) as (replica, game_id):
            game, logs = await worked_with(replica, game_id, SilentBot)
            outcome = game.state.outcome
            assert (game.status, outcome.winner, outcome.reason) == (
                GameStatus.FINISHED,
                "north",
                game_pb2.OUTCOME_REASON_RESIGNATION,
            )
            assert [
                (entry["game_id"], entry["reason"], entry["message"], entry["log_level"])
                for entry in logs
                if entry["event"] == "bot resigns: no suggestion"
            ] == [(game_id, "NO_SUGGESTION", "no action found", "warning")]

    asyncio.run(scenario())


class UnavailableBot(Bot):
    """A bot whose work is refused as unavailable (as if a part it needs were away)."""

    async def action(self, game: GameRecord, seat: Seat) -> game_pb2.Action:
        raise Refusal(Code.UNAVAILABLE, Reason.INVALID_STATE, "not now")


async def put_off(replica: Replica, game_id: str, bot: type[Bot]) -> list[dict[str, Any]]:
    """The sweeper attempts the game's due work with `bot` in the bot's seat, the work
    fails and the game is due again `RETRY_MS` later: what was logged meanwhile."""
    replica.sweeper.bot = bot(replica.engine, replica.store.vault, replica.settings)
    before = await replica.store.time_ms()
    with captured_logs() as logs:
        when = await replica.sweeper._attempt(game_id)
    assert when is not None and when >= before + RETRY_MS
    return logs


def test_failed_due_work_is_logged_and_tried_again_later(
    redis_url: str, engine_address: str
) -> None:
    """A refusal is an expected failure: logged at info level with its message, no
    traceback, and the game is due again `RETRY_MS` later, untouched."""

    async def scenario() -> None:
        async with bot_game(redis_url, engine_address) as (replica, game_id):
            logs = await put_off(replica, game_id, UnavailableBot)
            assert (await loaded(replica, game_id)).moves == []
            assert [
                (entry["error"], entry["log_level"], entry["exc_info"])
                for entry in logs
                if entry["event"] == "due work failed; retrying later"
            ] == [("not now", "info", False)]

    asyncio.run(scenario())


async def created(replica: Replica, seats: list[Seat], **spec: Any) -> GameRecord:
    game, _ = await replica.seating.create(GameSpec("war", {}, **spec), seats)
    return game


def test_an_open_game_is_due_at_its_expiry_and_closed_once_it_has_passed(
    redis_url: str, engine_address: str
) -> None:
    """Nobody joined: until `open_game_ttl` has passed the sweeper leaves the game open and
    says when to look again; after it, the game is closed and never due again."""

    async def scenario() -> None:
        for ttl, closes in ((60.0, False), (0.0, True)):
            settings = fast_settings(redis_url, engine_address, open_game_ttl=ttl)
            replica = await Replica.connect(settings)
            try:
                game = await created(
                    replica,
                    [Seat("north", "p-ada", "Ada", SeatKind.HUMAN), Seat("south", "", "")],
                )
                assert game.status == GameStatus.OPEN
                when = await replica.sweeper.work_on(game.id)
                after = await loaded(replica, game.id)
                if closes:
                    assert when is None and after.status == GameStatus.FINISHED
                    assert after.closed == "nobody joined within 0 s"
                else:
                    assert when == game.created_ms + 60_000
                    assert after.status == GameStatus.OPEN
            finally:
                await replica.close()

    asyncio.run(scenario())


def test_the_bot_answers_a_draw_offer_made_to_it_and_the_log_says_how(
    redis_url: str, engine_address: str
) -> None:
    """Ada (South, to move, far ahead) offers a draw: the bot, North, is not to act, yet
    the sweeper has it answer; it declines, and the game goes on with Ada to move."""

    async def scenario() -> None:
        settings = fast_settings(redis_url, engine_address, draw_answer_time=0.2)
        replica = await Replica.connect(settings)
        try:
            setup = "mhc1gk1chm/1t1t1t1t1t/t1t1t1t1t1/10/10/10/10/10/10/4GK4 S FF:ff"
            game = await created(
                replica,
                [
                    Seat("north", BOT_PLAYER, "Bot", SeatKind.BOT),
                    Seat("south", "p-ada", "Ada", SeatKind.HUMAN),
                ],
                setup=setup,
            )
            offer = game_pb2.Action(side="south", offer_draw=game_pb2.OfferDraw())
            await replica.play.commit(game, await replica.store.time_ms(), [offer])
            with captured_logs() as logs:
                when = await replica.sweeper.work_on(game.id)
            after = await loaded(replica, game.id)
            assert after.status == GameStatus.RUNNING and after.state.draw_offer == ""
            assert [entry.public for entry in after.moves] == ["offer draw", "decline draw"]
            assert after.to_act() == ("south",) and when is None  # Ada's turn: nothing due
            assert [
                (entry["game_id"], entry["action"])
                for entry in logs
                if entry["event"] == "the bot answers a draw offer"
            ] == [(game.id, "decline_draw")]
        finally:
            await replica.close()

    asyncio.run(scenario())


def test_a_clock_that_ran_out_ends_the_game_and_the_log_names_the_side(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        replica = await Replica.connect(fast_settings(redis_url, engine_address))
        try:
            game = await created(
                replica,
                [
                    Seat("north", BOT_PLAYER, "Bot", SeatKind.BOT),
                    Seat("south", "p-ada", "Ada", SeatKind.HUMAN),
                ],
                time_control=TimeControl(base_ms=300),
            )
            assert game.to_act() == ("south",)
            # Wait (on the store's clock) until South's 300 ms have run out.
            while await replica.store.time_ms() <= game.updated_ms + 400:
                await asyncio.sleep(0.05)
            with captured_logs() as logs:
                when = await replica.sweeper.work_on(game.id)
            after = await loaded(replica, game.id)
            outcome = after.state.outcome
            assert (after.status, outcome.winner, outcome.reason) == (
                GameStatus.FINISHED,
                "north",
                game_pb2.OUTCOME_REASON_TIME,
            )
            assert when is None
            assert [
                (entry["game_id"], entry["sides"])
                for entry in logs
                if entry["event"] == "time ran out"
            ] == [(game.id, ["south"])]
        finally:
            await replica.close()

    asyncio.run(scenario())


class WaitingBot(Bot):
    """A bot that thinks until the test lets it answer."""

    started: asyncio.Event
    release: asyncio.Event

    async def action(self, game: GameRecord, seat: Seat) -> game_pb2.Action:
        self.started.set()
        await self.release.wait()
        return await super().action(game, seat)


def test_a_claim_is_renewed_while_the_work_lasts_so_no_other_replica_takes_the_game(
    redis_url: str, engine_address: str
) -> None:
    """The bot thinks longer than the lease: the claim is pushed ahead meanwhile, so once
    the first lease has run out the game is still not due for another replica, and the
    bot moves once."""

    async def scenario() -> None:
        async with bot_game(redis_url, engine_address, sweep_lease=0.3, index_shards=1) as (
            replica,
            game_id,
        ):
            bot = WaitingBot(replica.engine, replica.store.vault, replica.settings)
            bot.started, bot.release = asyncio.Event(), asyncio.Event()
            replica.sweeper.bot = bot
            try:
                await replica.sweeper._claim()
                await asyncio.wait_for(bot.started.wait(), 10)

                due_index = replica.store._due(game_id)  # the game's own slot's (layout 2)
                shard = replica.store.due_keys.index(due_index)

                async def lease() -> float:
                    score = await replica.redis.zscore(due_index, game_id)
                    assert score is not None
                    return float(score)

                first = await lease()

                async def renewed_for_a_whole_lease() -> None:
                    while await lease() < first + 300:
                        await asyncio.sleep(0.02)

                await asyncio.wait_for(renewed_for_a_whole_lease(), 10)
                assert await replica.store.time_ms() >= first  # the first lease has run out
                assert (await replica.store.claim_due(shard, 300, 10))[1] == []
            finally:  # the bot answers, pass or fail, so the work ends
                bot.release.set()
                await replica.sweeper.drain(30)
            assert [entry.side for entry in (await loaded(replica, game_id)).moves] == ["south"]

    asyncio.run(scenario())


@both_stores
def test_a_sweep_runs_the_claim_script_only_in_the_shards_with_a_game_due(
    redis_url: str, engine_address: str
) -> None:
    """A round looks at every due-index shard at once (`Store.due_now`: one pipelined look
    at each shard's earliest entry) and claims only where a game is due: with the bot's turn
    due, in that game's shard alone, and the game is worked on; in the next round, with the
    game claimed a lease ahead, in none. (A claim script in each of the 32 shards each round
    made an idle replica's sweeps its busiest work.)"""

    async def scenario() -> None:
        async with bot_game(redis_url, engine_address) as (replica, game_id):
            store, claimed_in = replica.store, []
            claim = store.claim_due

            async def counted(shard: int, lease_ms: int, limit: int) -> tuple[int, list[str]]:
                claimed_in.append(shard)
                return await claim(shard, lease_ms, limit)

            store.claim_due = counted  # type: ignore[method-assign]
            try:
                await replica.sweeper._claim()
                assert claimed_in == [store.due_keys.index(store._due(game_id))]
                claimed_in.clear()
                await replica.sweeper._claim()
                assert claimed_in == []
            finally:
                await replica.sweeper.drain(30)
            assert [entry.side for entry in (await loaded(replica, game_id)).moves] == ["south"]

    asyncio.run(scenario())


class FailingEngineBot(Bot):
    """A bot whose engine call fails (as if the engine had a bug)."""

    async def action(self, game: GameRecord, seat: Seat) -> game_pb2.Action:
        raise EngineFailure(
            Code.INTERNAL, Reason.ENGINE_UNAVAILABLE, "the engine failed", engine="INTERNAL: bug"
        )


def test_an_engine_failure_in_due_work_is_logged_as_an_error_naming_the_engines_answer(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with bot_game(redis_url, engine_address) as (replica, game_id):
            sweeper = replica.sweeper
            sweeper.bot = FailingEngineBot(replica.engine, replica.store.vault, replica.settings)
            with captured_logs() as logs:
                when = await sweeper._attempt(game_id)
            assert when is not None
            assert [
                (entry["error"], entry["engine"], entry["log_level"])
                for entry in logs
                if entry["event"] == "due work failed: engine"
            ] == [("the engine failed", "INTERNAL: bug", "error")]

    asyncio.run(scenario())


class BusyBot(Bot):
    """A bot whose search the engine turns away because its search pool is full."""

    async def action(self, game: GameRecord, seat: Seat) -> game_pb2.Action:
        raise EngineError(
            ErrorDetails(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "the engine is busy with 3 searches or replays; retry in 1.5 s",
                "ENGINE_BUSY",
            )
        )


def test_a_bot_turned_away_by_a_busy_engine_thinks_again_later_and_does_not_resign(
    redis_url: str, engine_address: str
) -> None:
    """A busy engine is no reason to lose a game: the bot's turn is due again `RETRY_MS`
    later, the game untouched; then an engine with room gets its move played."""

    async def scenario() -> None:
        async with bot_game(redis_url, engine_address) as (replica, game_id):
            logs = await put_off(replica, game_id, BusyBot)
            game = await loaded(replica, game_id)
            assert (game.status, game.moves) == (GameStatus.RUNNING, [])
            assert not [entry for entry in logs if str(entry["event"]).startswith("bot resigns")]
            replica.sweeper.bot = Bot(replica.engine, replica.store.vault, replica.settings)
            await replica.sweeper._attempt(game_id)
            game = await loaded(replica, game_id)
            assert game.status == GameStatus.RUNNING and [m.side for m in game.moves] == ["south"]

    asyncio.run(scenario())

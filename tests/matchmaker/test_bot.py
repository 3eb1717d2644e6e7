"""The bot on a replica's own parts and the real engine: its level, thinking time and
secret seed, its answer to a draw offer whether or not it is to act, its Attack-at-Dawn
deployment (commit, then a reveal of the same array whoever commits first; sealed; none
when its army does not fit its rows), and the array it picks."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from matchmaker.bot import Bot, secret_array
from matchmaker.engine import Engine
from matchmaker.record import BOT_PLAYER, GameRecord, Seat, SeatKind
from matchmaker.seating import GameSpec
from matchmaker.server import Replica
from matchmaker.vault import Vault
from tests.matchmaker.conftest import fast_settings
from tests.matchmaker.helpers import captured_logs, sealed_array
from wargame.v1 import game_pb2
from wargame.v1 import napoleonic_pb2 as nap

pytestmark = pytest.mark.integration

# Game of War set-ups: North left with a Gun and its King, or South (then who is to move).
NORTH_CRUSHED = "4gk4/10/10/10/10/10/10/T1T1T1T1T1/1T1T1T1T1T/MHC1GK1CHM"
SOUTH_CRUSHED = "mhc1gk1chm/1t1t1t1t1t/t1t1t1t1t1/10/10/10/10/10/10/4GK4"


@contextlib.asynccontextmanager
async def parts(redis_url: str, engine_address: str, **settings: Any) -> AsyncIterator[Replica]:
    """A replica's parts (not serving, no workers) with the in-process engine."""
    replica = await Replica.connect(fast_settings(redis_url, engine_address, **settings))
    try:
        yield replica
    finally:
        await replica.close()


async def bot_game(
    replica: Replica,
    ruleset: str,
    bot_side: str,
    human_side: str,
    options: Mapping[str, str] | None = None,
    **spec: Any,
) -> tuple[GameRecord, Seat]:
    """A running game of Ada against the bot: the game and the bot's seat."""
    bot = Seat(bot_side, BOT_PLAYER, "Bot", SeatKind.BOT)
    game, _ = await replica.seating.create(
        GameSpec(ruleset, dict(options or {}), **spec),
        [bot, Seat(human_side, "p-ada", "Ada", SeatKind.HUMAN)],
    )
    return game, bot


def test_the_bot_plays_at_the_games_level_and_time_else_the_settings(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with parts(redis_url, engine_address, bot_level=2, bot_time=0.4) as replica:
            plain, seat = await bot_game(replica, "war", "south", "north")
            asked, _ = await bot_game(replica, "war", "south", "north", bot_level=5, bot_ms=150)
            bot = replica.bot
            assert (bot.level(plain, seat), bot.thinking_time(plain)) == (2, 0.4)
            assert (bot.level(asked, seat), bot.thinking_time(asked)) == (5, 0.15)
            # A seat's own level comes first.
            own = dataclasses.replace(seat, level=3)
            assert (bot.level(plain, own), bot.level(asked, own)) == (3, 3)

    asyncio.run(scenario())


def test_the_bots_seed_is_secret_stable_and_fits_the_engines_seed() -> None:
    """Derived from the installation's secret per game and side (never from what a player
    sees), the same each time it is asked, and at most 63 bits (the engine's seed is a
    uint64, read as a signed int64 by some engines)."""

    async def scenario() -> None:
        settings = fast_settings("redis://unused")
        vault = Vault(bytes(range(1, 33)))
        bot = Bot(Engine("127.0.0.1:1", settings), vault, settings)
        other = Bot(Engine("127.0.0.1:1", settings), Vault(bytes(range(2, 34))), settings)
        seed = bot.seed("g1", "south")
        assert seed == bot.seed("g1", "south")
        assert seed == int.from_bytes(vault.derive("bot seed|g1|south")[:8], "big") >> 1
        assert 0 < seed < 2**63
        seeds = {seed, bot.seed("g1", "north"), bot.seed("g2", "south"), other.seed("g1", "south")}
        assert len(seeds) == 4

    asyncio.run(scenario())


def test_the_bots_action_is_for_its_side_and_the_engine_takes_it(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with parts(redis_url, engine_address) as replica:
            game, seat = await bot_game(replica, "war", "south", "north")
            action = await replica.bot.action(game, seat)
            assert action.side == "south"
            played = await replica.play.commit(game, await replica.store.time_ms(), [action])
            assert [entry.side for entry in played.game.moves] == ["south"]

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("setup", "to_move", "accepts"),
    [
        # The bot (North) is not to act: it judges from the side to act, its opponent.
        (NORTH_CRUSHED, "S", True),
        (SOUTH_CRUSHED, "S", False),
        # The bot is to act: it judges from its own side.
        (NORTH_CRUSHED, "N", True),
        (SOUTH_CRUSHED, "N", False),
    ],
)
def test_the_bot_accepts_a_draw_only_when_the_game_is_even_or_worse_for_it(
    redis_url: str, engine_address: str, setup: str, to_move: str, accepts: bool
) -> None:
    async def scenario() -> None:
        async with parts(redis_url, engine_address, draw_answer_time=0.2) as replica:
            game, seat = await bot_game(
                replica, "war", "north", "south", setup=f"{setup} {to_move} FF:ff"
            )
            answer = await replica.bot.answer_draw(game, seat)
            assert answer.side == "north"
            assert answer.WhichOneof("kind") == ("accept_draw" if accepts else "decline_draw")

    asyncio.run(scenario())


def test_a_bot_that_cannot_judge_a_draw_declines_it_and_says_why(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        async with parts(redis_url, engine_address) as replica:
            game, seat = await bot_game(
                replica, "war", "north", "south", setup=f"{NORTH_CRUSHED} S FF:ff"
            )
            settings = dataclasses.replace(replica.settings, engine_timeout=2.0)
            away = Bot(Engine("127.0.0.1:1", settings), replica.store.vault, settings)
            with captured_logs() as logs:
                answer = await away.answer_draw(game, seat)
            assert (answer.side, answer.WhichOneof("kind")) == ("north", "decline_draw")
            [entry] = [e for e in logs if e["event"] == "the bot declines a draw it cannot judge"]
            assert entry["game_id"] == game.id and entry["error"]
            assert entry["log_level"] == "info"

    asyncio.run(scenario())


@pytest.mark.parametrize("human_first", [False, True], ids=["bot commits first", "human first"])
def test_the_bot_commits_then_reveals_the_same_secret_array_and_salt(
    redis_url: str, engine_address: str, human_first: bool
) -> None:
    """The round of the bot's secret counts its own commitments only: whoever commits
    first, the array and salt it reveals are those it committed to (10.1)."""

    async def scenario() -> None:
        async with parts(redis_url, engine_address) as replica:
            game, seat = await bot_game(
                replica, "napoleonic", "black", "red", {"scenario": "attack_at_dawn"}
            )
            vault = replica.store.vault
            salt = vault.derive(f"bot salt|{game.id}|black|0").hex()
            commit = await replica.bot.action(game, seat)
            word, _, rest = commit.notation.partition(" ")
            array, _, committed_salt = rest.partition(" salt ")
            assert (commit.side, word, committed_salt) == ("black", "commit", salt)
            squares = [item.partition("=")[0] for item in array.split()]
            assert len(squares) == 15 == len(set(squares))
            mine = sealed_array("red")
            now = await replica.store.time_ms()
            red = game_pb2.Action(side="red", notation=f"commit {mine} salt {'ab' * 32}")
            if human_first:
                played = await replica.play.commit(game, now, [red])
                commit = await replica.bot.action(played.game, seat)
                assert commit.notation == f"commit {array} salt {salt}"
                played = await replica.play.commit(played.game, played.now_ms, [commit])
            else:
                played = await replica.play.commit(game, now, [commit])
                played = await replica.play.commit(played.game, played.now_ms, [red])
            drawn = await replica.engine.drawn(played.game.state)
            assert drawn.napoleonic.phase == nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL
            reveal = await replica.bot.action(played.game, seat)
            assert reveal.notation == f"reveal {array} salt {salt}"
            played = await replica.play.commit(played.game, played.now_ms, [reveal])
            assert played.game.to_act() == ("red",)

    asyncio.run(scenario())


def test_a_sealed_deployment_sends_the_array_alone(redis_url: str, engine_address: str) -> None:
    async def scenario() -> None:
        async with parts(redis_url, engine_address) as replica:
            game, seat = await bot_game(
                replica,
                "napoleonic",
                "black",
                "red",
                {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
            )
            action = await replica.bot.action(game, seat)
            word, _, array = action.notation.partition(" ")
            assert (action.side, word, "salt" in array) == ("black", "seal", False)
            assert len(array.split()) == 15
            played = await replica.play.commit(game, await replica.store.time_ms(), [action])
            assert played.game.to_act() == ("red",)

    asyncio.run(scenario())


def test_the_secret_array_puts_each_unit_on_its_own_square_whatever_the_listing_order() -> None:
    squares = [f"{file}{rank}" for file in "abcdefgh" for rank in "123"]
    army = ["infantry"] * 8 + ["cavalry"] * 4 + ["artillery", "artillery", "guards"]
    secret = bytes(range(32))
    array = secret_array(secret, squares, army)
    items = [item.partition("=") for item in array.split(" ")]
    assert [kind for _, _, kind in items] == army
    placed = [square for square, _, _ in items]
    assert len(set(placed)) == len(army) and set(placed) <= set(squares)
    shuffled = list(squares)
    random.Random(5).shuffle(shuffled)
    assert secret_array(secret, shuffled, army) == array
    others = {secret_array(bytes([n]) * 32, squares, army) for n in range(5)}
    assert len(others) == 5

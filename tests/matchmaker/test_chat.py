"""A game's chat through the Matchmaker RPC, with a real Redis and a real engine: seated
players say lines that every watcher (spectators too) reads and the record keeps; lines
are cleaned of control characters, bounded in length and rate, and only the seated speak."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import grpc
import pytest

from matchmaker import keys
from matchmaker.chat import clean
from matchmaker.store import millis
from tests.matchmaker.conftest import Client, InProcessMatchmaker, run
from tests.matchmaker.helpers import Watcher, expect_error, start_game
from tests.matchmaker.test_store import change, make_store, streams_left_by_a_last_millisecond
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode


def _chat_lines(watcher: Watcher, count: int) -> list[mm.ChatLine]:
    lines: list[mm.ChatLine] = []
    deadline = time.monotonic() + 90
    while len(lines) < count:
        message = watcher._next(deadline, f"{count} chat lines", [])
        if message.HasField("chat"):
            lines.append(message.chat)
    return lines


def test_clean_text_keeps_words_and_drops_what_a_terminal_would_obey() -> None:
    assert clean("good\x1b[2J luck\x07 \u202eevil\u202c\n\tgg") == "good[2J luck evil gg"
    assert clean("\x1b]0;title\x07") == "]0;title"
    assert clean("  \r\n ") == ""
    assert clean("Ça va? 👍") == "Ça va? 👍"


def test_seated_players_chat_spectators_read_and_the_record_keeps_it(
    war_players: dict[str, Client], matchmaker: InProcessMatchmaker, ada: Client
) -> None:
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war")
    spectator = Client(matchmaker.address)
    try:
        watcher = Watcher(spectator, game.id, after=game.version)
        said = south.SendChat(mm.SendChatRequest(game_id=game.id, text="good luck\x1b[31m!")).line
        assert (said.side, said.name, said.text) == ("south", "South", "good luck[31m!")
        north.SendChat(mm.SendChatRequest(game_id=game.id, text="you too"))
        first, second = _chat_lines(watcher, 2)
        assert (first.side, first.text, second.side, second.text) == (
            "south",
            "good luck[31m!",
            "north",
            "you too",
        )
        assert first.at.ToMilliseconds() <= second.at.ToMilliseconds()
        # Someone without a seat only reads.
        expect_error(
            lambda: ada.SendChat(mm.SendChatRequest(game_id=game.id, text="hi")),
            Code.PERMISSION_DENIED,
            "NOT_A_PLAYER",
        )
        # After the game, the chat is kept with the record; a late watcher reads it too.
        south.Resign(mm.ResignRequest(game_id=game.id))
        north.SendChat(mm.SendChatRequest(game_id=game.id, text="gg"))
        record = spectator.GetRecord(mm.GetRecordRequest(game_id=game.id))
        assert [(line.side, line.text) for line in record.chat] == [
            ("south", "good luck[31m!"),
            ("north", "you too"),
            ("north", "gg"),
        ]
        late = [m.chat.text for m in spectator.WatchGame(mm.WatchGameRequest(game_id=game.id))]
        assert [text for text in late if text] == ["good luck[31m!", "you too", "gg"]
    finally:
        spectator.close()


def test_a_line_too_long_or_empty_is_refused_and_a_flood_is_rate_limited(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    server = replica(chat_burst=3.0, chat_rate=0.01, chat_max_chars=20)
    players = {side: clients(server.address, side.capitalize()) for side in ("south", "north")}
    south = players["south"]
    game = start_game(players, "war")
    too_long = expect_error(
        lambda: south.SendChat(mm.SendChatRequest(game_id=game.id, text="x" * 21)),
        Code.INVALID_ARGUMENT,
        "CHAT_TOO_LONG",
    )
    assert too_long.message == "a chat line is at most 20 characters, not 21"
    expect_error(
        lambda: south.SendChat(mm.SendChatRequest(game_id=game.id, text="\x1b\x07 ")),
        Code.INVALID_ARGUMENT,
        "MISSING_FIELD",
    )
    for n in range(3):
        south.SendChat(mm.SendChatRequest(game_id=game.id, text=f"line {n}"))
    limited = expect_error(
        lambda: south.SendChat(mm.SendChatRequest(game_id=game.id, text="one more")),
        Code.RESOURCE_EXHAUSTED,
        "RATE_LIMITED",
    )
    assert "too many chat lines from you" in limited.message
    # The other player's bucket is its own.
    players["north"].SendChat(mm.SendChatRequest(game_id=game.id, text="hello"))
    record = south.GetRecord(mm.GetRecordRequest(game_id=game.id))
    assert [line.text for line in record.chat] == ["line 0", "line 1", "line 2", "hello"]


def test_a_game_keeps_its_newest_chat_lines_each_stamped_with_the_servers_time(
    redis_url: str,
) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        script_keys = [keys.game("g1"), keys.game_stream("g1")]
        before = millis(await store.redis.time())
        stamps = []
        for n in range(5):
            _id, at = await store.scripts.run(
                "chat", script_keys, ["south", "S", f"line {n}", 3, 100]
            )
            stamps.append(int(at))
        after = millis(await store.redis.time())
        assert before <= stamps[0] <= stamps[-1] <= after
        kept = json.loads(await store.redis.hget(keys.game("g1"), "chat") or "")
        assert [(*line[:3], int(line[3])) for line in kept] == [
            ("south", "S", "line 2", stamps[2]),
            ("south", "S", "line 3", stamps[3]),
            ("south", "S", "line 4", stamps[4]),
        ]
        await store.redis.aclose()

    run(scenario())


def test_a_chat_line_on_a_game_in_its_last_millisecond_leaves_no_stream_behind(
    redis_url: str,
) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        said = ("south", "Sue", "hello", "10", "100")
        left = await streams_left_by_a_last_millisecond(store, "chat", *said)
        assert -1 not in left
        await store.redis.aclose()

    run(scenario())

"""A game's chat: lines its seated players say, read by every watcher, kept with the game.

A line is taken from the speaker's chat bucket (`limit.lua`, `Settings.chat_rate` and
`chat_burst`), cleaned of control and format characters (nothing a terminal would obey,
no bidirectional overrides), then stored and announced in one step (`chat.lua`): the
game hash keeps the newest `chat_keep` lines (they expire with the game, and GetRecord
returns them), and the game's stream carries the line to the watchers like a notice.
"""

from __future__ import annotations

import json
import unicodedata

from matchmaker import keys
from matchmaker.errors import game_not_found, not_seated
from matchmaker.limits import Bucket, Limits
from matchmaker.record import SeatKind
from matchmaker.settings import Settings
from matchmaker.store import Store, StreamEntry
from wargame.runtime.refusal import Code, Reason, Refusal, missing
from wargame.v1 import matchmaker_pb2

CHAT_KIND = "CHAT"  # the kind of a chat line's stream entry (its notice field "n")
UNSHOWN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})  # controls, formats, no characters


def clean(text: str) -> str:
    """The text without the characters a terminal would obey or that reorder it (control,
    format, unassigned), runs of white space made one space."""
    kept = "".join(
        " " if char.isspace() else char
        for char in text
        if char.isspace() or unicodedata.category(char) not in UNSHOWN
    )
    return " ".join(kept.split())


def line_message(side: str, name: str, text: str, at_ms: int) -> matchmaker_pb2.ChatLine:
    """A chat line as the contract has it."""
    line = matchmaker_pb2.ChatLine(side=side, name=name, text=text)
    line.at.FromMilliseconds(at_ms)
    return line


def chat_message(entry: StreamEntry) -> matchmaker_pb2.WatchGameResponse:
    """A chat line of the stream as every watcher sees it."""
    fields = entry.notice
    return matchmaker_pb2.WatchGameResponse(
        version=entry.version,
        chat=line_message(
            fields.get("s", ""), fields.get("m", ""), fields.get("t", ""), int(fields.get("a") or 0)
        ),
    )


def is_chat(entry: StreamEntry) -> bool:
    """Whether a stream entry is a chat line."""
    return entry.notice.get("n") == CHAT_KIND


async def say(
    store: Store, limits: Limits, settings: Settings, *, player_id: str, game_id: str, text: str
) -> matchmaker_pb2.ChatLine:
    """`player_id` says `text` in `game_id`: checked, limited, kept and sent to watchers."""
    game, _ = await store.get(game_id)
    seat = game.seat_of(player_id)
    if seat is None or seat.kind != SeatKind.HUMAN:
        raise not_seated(game_id)
    said = clean(text)
    if not said:
        raise missing("text")
    if len(said) > settings.chat_max_chars:
        raise Refusal(
            Code.INVALID_ARGUMENT,
            Reason.CHAT_TOO_LONG,
            f"a chat line is at most {settings.chat_max_chars} characters, not {len(said)}",
            field="text",
        )
    bucket = Bucket(
        keys.player_chat(player_id),
        settings.chat_rate,
        settings.chat_burst,
        "too many chat lines from you",
    )
    await limits.take([bucket])
    reply = await store.scripts.run(
        "chat",
        [keys.game(game_id), keys.game_stream(game_id)],
        [seat.side, seat.name, said, settings.chat_keep, settings.stream_maxlen],
    )
    entry_id, at_ms = reply[0], int(reply[1])
    if not entry_id:
        raise game_not_found(game_id)
    return line_message(seat.side, seat.name, said, at_ms)


async def chat_lines(store: Store, game_id: str) -> list[matchmaker_pb2.ChatLine]:
    """A game's chat as kept, oldest first."""
    raw = await store.redis.hget(keys.game(game_id), "chat")
    if not raw:
        return []
    return [line_message(side, name, text, int(at)) for side, name, text, at in json.loads(raw)]

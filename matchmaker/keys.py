"""Every Redis key the matchmaker uses, built here and nowhere else.

Keys that one atomic operation touches together share a hash tag (the part in braces), so
they live in one slot and the same Lua scripts run on Redis Cluster:

- one game:   ``wg:game:{<game id>}`` (hash) with ``...:actions`` (list), ``...:stream``
  (stream of updates), ``...:presence`` (who watches) and ``...:idem:<player>:<key>``
  (idempotency records);
- one player: ``wg:player:{<player id>}`` (hash) with its tokens, rate-limit buckets,
  queue ticket, unfinished games and the set of games already counted in its ratings;
- one queue:  ``wg:queue:{<queue id>}:...`` (ratings, join times, arrival order, tickets,
  matches);
- indexes over games and queues, written on every commit or join, are sharded: shard
  ``n`` of the due-work index is ``wg:{due:<n>}``, and so on, one hash tag per shard, so
  no single key (and no single cluster node) takes every commit of the fleet; a game or
  queue lives in the shard `shard` gives its id. In key layout 2 (`SCHEMA`), a game made
  by `new_game_id` keeps its due time in ``wg:due:{<tag>}`` (`game_due`), one of 16
  shards whose slot the game's id was chosen to share. Leaderboards (one key per ruleset,
  written once per rated game) and invite codes (one key each) are not sharded;
- limits, each a single key with its own tag: ``wg:limit:{<limit>}`` for everyone and
  ``wg:limit:{<limit>:<address>}`` per caller address.

Ids are random and never contain braces, so a tag is exactly the id; text a client sends
(addresses, invite codes) is checked to hold none either before it becomes part of a key.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import zlib
from binascii import crc_hqx
from functools import cache

PREFIX = "wg"

# The layout of the keys (`schema`): 1, the layout before it was recorded; 2, the due time of
# a game created since kept in its own hash slot (`game_due`). A replica reads every layout
# up to SCHEMA and writes the one Redis holds; `wargame-matchmaker migrate` moves Redis to
# SCHEMA once every replica reads it.
SCHEMA = 2
SLOTS = 16384  # Redis Cluster's hash slots: a key's slot is CRC16(its hash tag) mod SLOTS


def plausible_id(text: str) -> bool:
    """True when a client-sent id could be one of ours (ids are short, ASCII letters and
    digits): anything else names nothing, and never becomes part of a key."""
    return 0 < len(text) <= 64 and text.isascii() and text.isalnum()


def _digest(text: str, size: int = 16) -> str:
    """A short stable digest (for client-chosen strings that go into key names)."""
    return hashlib.sha256(text.encode()).hexdigest()[:size]


# -- games -------------------------------------------------------------------------------


def game(game_id: str) -> str:
    """Hash: the session (meta fields, current and initial state, clocks, seats)."""
    return f"{PREFIX}:game:{{{game_id}}}"


def game_actions(game_id: str) -> str:
    """List: every committed action with its notations, oldest first."""
    return f"{PREFIX}:game:{{{game_id}}}:actions"


def game_stream(game_id: str) -> str:
    """Stream: one entry per committed version, entry id ``<version>-0``."""
    return f"{PREFIX}:game:{{{game_id}}}:stream"


def game_idempotency(game_id: str, player_id: str, key: str) -> str:
    """String: ``<request fingerprint>|<version>`` of a submission, with a TTL."""
    return f"{PREFIX}:game:{{{game_id}}}:idem:{player_id}:{_digest(key)}"


def game_channel(game_id: str) -> str:
    """Shard channel (pub/sub, not a key) of the game's live updates: every append to the
    game's stream is announced on it (SPUBLISH in `commit.lua`, `presence.lua`,
    `notice.lua`). Named like the stream, so it lives in the game's slot."""
    return game_stream(game_id)


def game_no_idempotency(game_id: str) -> str:
    """A name in the game's slot that is never set: the idempotency record of a commit or a
    read without a key (the scripts take a fixed number of keys)."""
    return f"{PREFIX}:game:{{{game_id}}}:idem:-"


def game_presence(game_id: str) -> str:
    """Hash: ``<side>|<watch id>`` -> until when (ms) that watcher of the side is present."""
    return f"{PREFIX}:game:{{{game_id}}}:presence"


def game_due(game_id: str) -> str | None:
    """The due-index shard in the game's own hash slot (layout 2), for a game whose id
    `new_game_id` made; None for any other id (its due time is in `due`)."""
    tag = _DUE_TAGS.get(slot(game_id))
    return None if tag is None else due_slot(tag)


def new_game_id() -> str:
    """A random game id whose hash slot is one of the due shards' (`game_due`): ``g``, 11
    random characters, then 3 chosen so. (CRC16 is linear: the CRC of the id is that of
    the random part followed by zeros, XOR that of the 3 characters, so they are looked up
    in a table of the 32,768 suffixes by the low 14 bits of their CRC.)"""
    suffixes = _suffixes()
    while True:  # a shard at random; the rare CRC no suffix has: new random characters
        head = "g" + _base32(11)
        base = crc_hqx((head + "\0\0\0").encode(), 0) % SLOTS
        suffix = suffixes.get(base ^ secrets.choice(DUE_SLOTS))
        if suffix is not None:
            return head + suffix


def slot(tag: str) -> int:
    """The hash slot of a hash tag."""
    return crc_hqx(tag.encode(), 0) % SLOTS


def _base32(size: int) -> str:
    raw = base64.b32encode(secrets.token_bytes((size * 5 + 7) // 8)).decode().lower()
    return raw[:size]


@cache
def _suffixes() -> dict[int, str]:
    """3-character base32 suffixes by the low 14 bits of their CRC16."""
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    return {
        crc_hqx(text.encode(), 0) % SLOTS: text
        for text in (a + b + c for a in alphabet for b in alphabet for c in alphabet)
    }


def game_keys(game_id: str) -> tuple[str, str, str]:
    """The keys every commit of a game touches: hash, actions, stream."""
    return game(game_id), game_actions(game_id), game_stream(game_id)


def invite(code: str) -> str:
    """String: the game id an invite code (its normalized form, `invites.py`) opens."""
    return f"{PREFIX}:invite:{{{code}}}"


# -- players -----------------------------------------------------------------------------


def player(player_id: str) -> str:
    """Hash: display name, creation time, ratings per ruleset."""
    return f"{PREFIX}:player:{{{player_id}}}"


def player_token(player_id: str, token_hash: str) -> str:
    """String: the token id of a live token, looked up by the token's hash."""
    return f"{PREFIX}:player:{{{player_id}}}:token:{token_hash}"


def player_tokens(player_id: str) -> str:
    """Hash: token id -> token hash, for revoking by id."""
    return f"{PREFIX}:player:{{{player_id}}}:tokens"


def player_bucket(player_id: str) -> str:
    """Hash: the player's rate-limit token bucket."""
    return f"{PREFIX}:player:{{{player_id}}}:bucket"


def player_guesses(player_id: str) -> str:
    """Hash: the token bucket of the player's wrong invite codes."""
    return f"{PREFIX}:player:{{{player_id}}}:guesses"


def player_chat(player_id: str) -> str:
    """Hash: the token bucket of the player's chat lines (`chat.py`)."""
    return f"{PREFIX}:player:{{{player_id}}}:chat"


def player_games(player_id: str) -> str:
    """Sorted set: the player's unfinished games (game id -> since, ms), capped in number."""
    return f"{PREFIX}:player:{{{player_id}}}:games"


def player_queue(player_id: str) -> str:
    """String: ``<queue id>:<ticket>`` while the player waits in a queue."""
    return f"{PREFIX}:player:{{{player_id}}}:queue"


def player_rated(player_id: str) -> str:
    """Sorted set: games already counted in the player's ratings (score: when), bounded."""
    return f"{PREFIX}:player:{{{player_id}}}:rated"


def player_keys(player_id: str) -> tuple[str, ...]:
    """Every long-lived key of a player (they expire together when it goes idle)."""
    return (
        player(player_id),
        player_tokens(player_id),
        player_rated(player_id),
        player_games(player_id),
    )


# -- queues ------------------------------------------------------------------------------


def queue_ratings(queue_id: str) -> str:
    """Sorted set: waiting ticket -> rating."""
    return f"{PREFIX}:queue:{{{queue_id}}}:ratings"


def queue_joined(queue_id: str) -> str:
    """Sorted set: waiting ticket -> join time (ms)."""
    return f"{PREFIX}:queue:{{{queue_id}}}:joined"


def queue_alive(queue_id: str) -> str:
    """Sorted set: waiting ticket -> alive-until (ms), pushed on by the waiting stream."""
    return f"{PREFIX}:queue:{{{queue_id}}}:alive"


def queue_tickets(queue_id: str) -> str:
    """Hash: waiting ticket -> JSON (player, name, rating, joined, alive-until)."""
    return f"{PREFIX}:queue:{{{queue_id}}}:tickets"


def queue_matches(queue_id: str) -> str:
    """Hash: matched ticket -> JSON (game id, both seats)."""
    return f"{PREFIX}:queue:{{{queue_id}}}:matches"


def queue_matched(queue_id: str) -> str:
    """Sorted set: matched ticket -> match time, to drop unclaimed matches."""
    return f"{PREFIX}:queue:{{{queue_id}}}:matched"


def queue_config(queue_id: str) -> str:
    """String: JSON of what the queue's games are created with."""
    return f"{PREFIX}:queue:{{{queue_id}}}:config"


def queue_arrivals(queue_id: str) -> str:
    """Sorted set: waiting ticket -> arrival number, the queue's order (oldest first).

    Join times alone cannot order a queue: two joins in one millisecond tie."""
    return f"{PREFIX}:queue:{{{queue_id}}}:arrivals"


def queue_sequence(queue_id: str) -> str:
    """String: the last arrival number given out (INCR), so arrivals never tie."""
    return f"{PREFIX}:queue:{{{queue_id}}}:sequence"


def queue_keys(queue_id: str) -> tuple[str, ...]:
    """The keys of one queue, in the order the queue scripts take them."""
    return (
        queue_ratings(queue_id),
        queue_joined(queue_id),
        queue_alive(queue_id),
        queue_tickets(queue_id),
        queue_matches(queue_id),
        queue_matched(queue_id),
        queue_config(queue_id),
        queue_arrivals(queue_id),
        queue_sequence(queue_id),
    )


def queue_id(spec: str) -> str:
    """The id of the queue for a canonical spec text (ruleset, options, time control, rated)."""
    return "q" + _digest(spec, 20)


# -- indexes -----------------------------------------------------------------------------


def shard(name: str, shards: int) -> int:
    """The index shard of a game or queue id: a stable hash, the same on every replica."""
    return zlib.crc32(name.encode()) % shards


def due(shard: int) -> str:
    """Sorted set, one per shard: game id -> when something must next happen to it (clock
    flag, abandonment, bot turn, open-game expiry, pending ratings), in ms; while a
    sweeper works on a game, the end of its lease."""
    return f"{PREFIX}:{{due:{shard}}}"


# The due-index shards of layout 2: hash tags whose slots spread evenly over the cluster's
# (one every SLOTS / 16, so every primary of up to 16 holds one); the games `new_game_id`
# makes live in these slots, each game's due time beside it.
DUE_TAGS = (
    "duee9n", "duem46", "dueaqk", "duep33", "dueeld", "duetj4", "dueiiq", "dueim1",
    "duewy", "dues9", "duekz5", "duecwm", "duevl2", "duegjb", "duekk7", "duecfo",
)  # fmt: skip
_DUE_TAGS = {slot(tag): tag for tag in DUE_TAGS}
DUE_SLOTS = tuple(_DUE_TAGS)


def due_slot(tag: str) -> str:
    """Sorted set, one per `DUE_TAGS` tag (layout 2): game id -> when something must next
    happen to it, for the games in the tag's slot (see `due`)."""
    return f"{PREFIX}:due:{{{tag}}}"


def schema() -> str:
    """String: the layout of the keys (`SCHEMA`); none means 1."""
    return f"{PREFIX}:{{schema}}"


def queues(shard: int) -> str:
    """Sorted set, one per shard: queue id -> last activity (ms), the queues the pairing
    workers visit."""
    return f"{PREFIX}:{{queues:{shard}}}"


def browse(status: str, ruleset: str, shard: int) -> str:
    """Sorted set, one per shard: public game id -> creation time (ms), per status
    (open/running) and ruleset."""
    return f"{PREFIX}:browse:{{{status}:{ruleset}:{shard}}}"


def shard_counts() -> str:
    """Set: every index shard count a replica has written with on this Redis (readers of
    the indexes cover the largest, so changing the setting strands nothing)."""
    return f"{PREFIX}:{{shards}}"


def leaderboard(ruleset: str) -> str:
    """Sorted set: player id -> rating in one ruleset (the best few thousand)."""
    return f"{PREFIX}:leaderboard:{{{ruleset}}}"


# -- limits ------------------------------------------------------------------------------


def limit(name: str) -> str:
    """Hash: the token bucket of one limit for everyone ("register", "guess")."""
    return f"{PREFIX}:limit:{{{name}}}"


def limit_address(name: str, address: str) -> str:
    """Hash: the token bucket of one limit for one caller address (`limits.caller_address`)."""
    return f"{PREFIX}:limit:{{{name}:{address}}}"

"""Key discipline: the keys one operation touches share a Redis Cluster hash slot."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from matchmaker import keys
from matchmaker.scripts import NAMES, source

SCRIPTS = Path(__file__).resolve().parents[2] / "matchmaker" / "scripts"


def crc16(data: bytes) -> int:
    """CRC16/XMODEM, the checksum of Redis Cluster key slots."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def slot(key: str) -> int:
    """The cluster slot of a key (its hash tag if it has a non-empty one)."""
    start = key.find("{")
    if start >= 0:
        end = key.find("}", start + 1)
        if end > start + 1:
            key = key[start + 1 : end]
    return crc16(key.encode()) % 16384


def test_crc16_matches_redis_reference_value() -> None:
    assert crc16(b"123456789") == 0x31C3  # the value in the Redis Cluster specification


def test_every_key_of_one_game_shares_a_slot() -> None:
    game_id = "gabc123"
    names = [*keys.game_keys(game_id), keys.game_idempotency(game_id, "p1", "any key {x}")]
    assert len({slot(name) for name in names}) == 1


def test_every_key_of_one_player_shares_a_slot() -> None:
    player_id = "pxyz"
    names = [
        *keys.player_keys(player_id),
        keys.player_token(player_id, "ab" * 32),
        keys.player_bucket(player_id),
        keys.player_queue(player_id),
    ]
    assert len({slot(name) for name in names}) == 1


def test_every_key_of_one_queue_shares_a_slot() -> None:
    assert len({slot(name) for name in keys.queue_keys(keys.queue_id("spec"))}) == 1


def test_games_spread_over_slots() -> None:
    assert len({slot(keys.game(f"g{i}")) for i in range(100)}) > 90


def test_client_chosen_text_never_reaches_a_key_unhashed() -> None:
    key = keys.game_idempotency("g1", "p1", "x" * 5000 + "}{")
    assert "}{" not in key and len(key) < 100


@pytest.mark.parametrize("name", NAMES)
def test_scripts_document_keys_and_argv_and_build_no_keys(name: str) -> None:
    text = source(name)
    lines = text.splitlines()
    size = next(i for i, line in enumerate(lines) if not line.startswith("--"))
    header, code = "\n".join(lines[:size]), "\n".join(lines[size:])
    assert "KEYS[1]" in header, f"{name}.lua must document its KEYS in its header comment"
    used_keys = set(re.findall(r"KEYS\[(\d+)\]", code))
    for index in used_keys:
        assert re.search(rf"KEYS\[{index}(\]|\.\.)", header), (
            f"{name}.lua: KEYS[{index}] undocumented"
        )
    # Keys reach scripts only through KEYS: no key prefix is ever spelled in Lua.
    assert keys.PREFIX + ":" not in code
    assert "ARGV[" not in header or "ARGV[1]" in header


def test_every_lua_file_is_loaded() -> None:
    assert {path.stem for path in SCRIPTS.glob("*.lua")} == set(NAMES)


def test_plausible_ids_are_short_ascii_letters_and_digits() -> None:
    # What a client sends as an id names nothing (and never reaches a key) unless it
    # could be one of ours.
    for good in ("g", "gabc123", "A" * 64):
        assert keys.plausible_id(good), good
    for bad in ("", "A" * 65, "g-1", "g 1", "g{1}", "gé1", "g١"):
        assert not keys.plausible_id(bad), bad


def test_names_a_rolling_update_relies_on_stay_the_same() -> None:
    # Replicas of two releases share one Redis during an update: a queue's id and an
    # idempotency record's name must come out alike from both, or waiting players and
    # retried submissions are lost.
    spec = "war|standard|rated"
    assert keys.queue_id(spec) == "q" + hashlib.sha256(spec.encode()).hexdigest()[:20]
    digest = hashlib.sha256(b"key-1").hexdigest()[:16]
    assert keys.game_idempotency("g1", "p1", "key-1") == f"wg:game:{{g1}}:idem:p1:{digest}"


def test_a_games_live_updates_are_announced_on_a_channel_named_like_its_stream() -> None:
    assert keys.game_channel("g1") == keys.game_stream("g1") == "wg:game:{g1}:stream"
    assert keys.game_channel("g2") != keys.game_channel("g1")


def test_a_new_games_due_time_lives_in_its_own_slot_on_one_of_sixteen_spread_shards() -> None:
    """Layout 2: a game `new_game_id` makes shares its slot with a due-index shard, so a
    commit and its due time are one script on one node; the 16 shards' slots spread over
    the whole slot space (one in every sixteenth: every primary of up to 16 holds one)."""
    shards = [slot(keys.due_slot(tag)) for tag in keys.DUE_TAGS]
    assert sorted(shard * 16 // 16384 for shard in shards) == list(range(16))
    made = [keys.new_game_id() for _ in range(500)]
    assert len(set(made)) == 500
    for game_id in made:
        assert keys.plausible_id(game_id) and len(game_id) == 15, game_id
        due = keys.game_due(game_id)
        assert due is not None and slot(due) == slot(keys.game(game_id))
    assert len({keys.game_due(game_id) for game_id in made}) == 16  # every shard used
    # Any other id (an older release's) keeps its due time in the shards of layout 1.
    assert [keys.game_due(f"g{i}") for i in range(50)].count(None) >= 49

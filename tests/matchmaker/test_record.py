"""The session record owns its mapping: every attribute has exactly one hash field, every
field written is read back, and a record survives the trip to Redis and back unchanged."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any, cast

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st

from matchmaker import keys
from matchmaker.clocks import Clock
from matchmaker.record import (
    ALWAYS_WRITTEN,
    FIELDS,
    ActionEntry,
    GameRecord,
    GameStatus,
    RatingStatus,
    Seat,
    SeatKind,
    Visibility,
    _enum,
    mapped_attributes,
    moves_json,
    parse_moves,
)
from matchmaker.states import alliance
from tests.matchmaker.conftest import Client, InProcessMatchmaker
from tests.matchmaker.helpers import play_moves, start_game
from wargame.v1 import game_pb2, napoleonic_pb2, war_pb2
from wargame.v1 import matchmaker_pb2 as mm

words = st.text(max_size=12)
sides = st.sampled_from(["south", "north", "red", "black"])
millis = st.integers(min_value=0, max_value=2**53)
seats = st.builds(Seat, sides, words, words, st.sampled_from(SeatKind), words)
clocks = st.none() | st.builds(
    Clock,
    millis,
    millis,
    st.dictionaries(sides, st.integers(min_value=-(2**40), max_value=2**40), max_size=2),
    millis,
    st.lists(sides, max_size=2).map(tuple),
)
entries = st.builds(ActionEntry, sides, words, words)
# States as the matchmaker stores them: a position and the summary (`states.compact`).
compact_states = st.one_of(
    st.just(b""),
    st.builds(
        lambda game, position, ply, to_act: game_pb2.GameState(
            game=game, position=position, ply=ply, to_act=to_act
        ).SerializeToString(),
        words,
        words.filter(bool),
        st.integers(min_value=0, max_value=500),
        st.lists(sides, max_size=2),
    ),
)
records = st.builds(
    GameRecord,
    id=st.just("g1"),
    ruleset=words,
    status=st.sampled_from(GameStatus),
    version=st.integers(min_value=0, max_value=2**40),
    visibility=st.sampled_from(Visibility),
    rated=st.booleans(),
    created_ms=millis,
    updated_ms=millis,
    acted_ms=millis,
    seats=st.lists(seats, max_size=3),
    state_bytes=compact_states,
    initial_bytes=compact_states,
    clock=clocks,
    invite=words,
    bot_ms=millis,
    rating_status=st.sampled_from(RatingStatus),
    closed=words,
    moves_raw=st.lists(entries, max_size=3).map(lambda added: moves_json("[]", added)),
    ended_ms=millis,
    options=st.dictionaries(words, words, max_size=3),
    preset=words,
    setup=words,
    bot_level=st.integers(min_value=0, max_value=5),
    away=st.dictionaries(sides, millis, max_size=2),
    warned=st.dictionaries(sides, millis, max_size=2),
    ending=st.just(b"")
    | st.builds(lambda winner: game_pb2.Outcome(winner=winner).SerializeToString(), sides),
    rematch=words,
    rematch_of=words,
)


def stored(fields: dict[str, Any]) -> dict[bytes, bytes]:
    """Hash fields as Redis gives them back (names and values as bytes)."""
    return {
        name.encode(): value if isinstance(value, bytes) else str(value).encode()
        for name, value in fields.items()
    }


def as_read(fields: dict[bytes, bytes]) -> dict[bytes, Any]:
    """Hash fields as the record reads them: JSON objects as objects, since the Lua scripts
    also write some (`away`, `warned`) and a Lua table keeps no key order; the rest as bytes."""
    return {
        name: json.loads(value) if name in (b"away", b"warned") and value else value
        for name, value in fields.items()
    }


def test_every_attribute_has_one_field_and_every_field_one_attribute() -> None:
    attributes = [entry.attribute for entry in FIELDS]
    names = [entry.name for entry in FIELDS]
    assert sorted(attributes) == sorted(mapped_attributes())
    assert len(set(attributes)) == len(attributes) and len(set(names)) == len(names)


@given(records)
def test_a_record_survives_the_trip_through_its_hash(record: GameRecord) -> None:
    hashed = record.to_hash()
    at_default = {
        entry.name for entry in FIELDS if getattr(record, entry.attribute) == entry.default
    }
    assert set(hashed) == {entry.name for entry in FIELDS} - (at_default - ALWAYS_WRITTEN)
    assert GameRecord.from_hash(record.id, stored(hashed)) == record


def test_a_state_is_stored_without_its_view_for_drawing() -> None:
    drawn = game_pb2.GameState(
        game="war",
        position="10/10/10/10/10/10/10/10/10/k8K S -:-",
        to_act=["south"],
        ply=3,
        draw_offer="north",
        options={"compulsion": "none"},
        pieces=[game_pb2.Piece(kind="king", side="south", cell="j1")],
    )
    drawn.war.SetInParent()
    record = GameRecord.from_hash("g1", {b"version": b"1"})
    record.state_bytes = drawn.SerializeToString()
    stored_state = record.to_hash()["state"]
    assert isinstance(stored_state, bytes)
    kept = game_pb2.GameState.FromString(stored_state)
    assert kept == game_pb2.GameState(
        game="war", position=drawn.position, to_act=["south"], ply=3, draw_offer="north"
    )


@given(records, records)
def test_changed_fields_turn_one_record_into_the_other(
    before: GameRecord, after: GameRecord
) -> None:
    changed = after.changed_fields(before)
    merged = {**stored(before.to_hash()), **stored(changed)}
    assert GameRecord.from_hash(before.id, merged) == after
    assert after.changed_fields(after) == {}


def test_an_empty_hash_reads_as_the_defaults() -> None:
    record = GameRecord.from_hash("g1", {})
    assert (record.status, record.visibility, record.rating_status) == (
        GameStatus.OPEN,
        Visibility.PUBLIC,
        RatingStatus.NONE,
    )
    assert record.seats == [] and record.moves == [] and record.clock is None
    assert GameRecord.from_hash("g2", {}).seats is not record.seats  # no shared default


def test_moves_field_appends_without_reparsing() -> None:
    first = [ActionEntry("south", "e3-e5", "e3-e5")]
    hidden = [ActionEntry("red", "seal a2=I", "seal (hidden)"), ActionEntry("red", "end", "end")]
    text = moves_json(moves_json("[]", first), hidden)
    assert [m.row() for m in parse_moves(text)] == [m.row() for m in first + hidden]
    assert parse_moves(text)[1].hidden and not parse_moves(text)[2].hidden
    assert moves_json(text, []) == text and parse_moves("") == []


@pytest.mark.integration
def test_a_played_game_holds_only_fields_its_record_reads(
    matchmaker: InProcessMatchmaker,
    clients: Callable[..., Client],
    engine_stub: Any,
    redis_url: str,
) -> None:
    """Every path that writes a game (create, join, moves, an ending, ratings settled, an
    open game closed) leaves only fields of the record's table, each as the record writes
    it, and every field off its default."""
    two = {side: clients(matchmaker.address, side.title()) for side in ("south", "north")}
    game = start_game(two, "war", rated=True)
    play_moves(engine_stub, two, game.id, 3, random.Random(5))
    two["north"].Resign(mm.ResignRequest(game_id=game.id))
    closed = two["south"].CreateGame(mm.CreateGameRequest(game="war")).game
    two["south"].Resign(mm.ResignRequest(game_id=closed.id))
    client = redis.Redis.from_url(redis_url)
    try:
        read = {}
        for game_id in (game.id, closed.id):
            raw = cast(dict[bytes, bytes], client.hgetall(keys.game(game_id)))
            names = {name.decode() for name in raw}
            assert names <= {entry.name for entry in FIELDS}
            read[game_id] = GameRecord.from_hash(game_id, raw)
            written = read[game_id].to_hash()  # the fields off their defaults, at least
            assert set(written) <= names
            every = {
                entry.name: entry.codec.encode(getattr(read[game_id], entry.attribute))
                for entry in FIELDS
            }
            assert as_read(stored({name: every[name] for name in names})) == as_read(raw)
    finally:
        client.close()
    assert read[game.id].rating_status == RatingStatus.DONE and read[game.id].ended_ms
    assert read[closed.id].status == GameStatus.FINISHED and read[closed.id].closed


def test_a_side_fights_for_its_alliance() -> None:
    """In Napoleonic Chess of many players the alliance is the state's; a player without
    one, an unknown side and a game of two sides each fight for themselves."""
    state = game_pb2.GameState(
        game="napoleonic",
        napoleonic=napoleonic_pb2.NapoleonicState(
            players=[
                napoleonic_pb2.NapoleonicPlayer(id="red", alliance="south"),
                napoleonic_pb2.NapoleonicPlayer(id="blue", alliance="south"),
                napoleonic_pb2.NapoleonicPlayer(id="black", alliance="north"),
                napoleonic_pb2.NapoleonicPlayer(id="white"),
            ]
        ),
    )
    assert [alliance(state, side) for side in ("red", "blue", "black", "white", "green")] == [
        "south",
        "south",
        "north",
        "white",
        "green",
    ]
    assert alliance(game_pb2.GameState(game="war", war=war_pb2.WarState()), "red") == "red"


def test_an_enum_field_is_stored_as_its_value_and_read_back() -> None:
    for kind in (GameStatus, Visibility, RatingStatus):
        codec = _enum(kind)
        for member in kind:
            assert codec.encode(member) == member.value
            assert codec.decode(member.value.encode()) is member


def game_of(status: GameStatus, state: game_pb2.GameState, ending: bytes = b"") -> GameRecord:
    """A game of South (a person) and North (a bot) in `status` at `state`."""
    record = GameRecord.from_hash("g1", {})
    record.status = status
    record.seats = [Seat("south", "p1", "South"), Seat("north", "bot", "Bot", SeatKind.BOT)]
    record.state_bytes = state.SerializeToString() if state.ByteSize() else b""
    record.ending = ending
    return record


def test_the_outcome_is_the_engines_or_the_matchmakers_own_or_none() -> None:
    ongoing = game_pb2.GameState(game="war", position="p", to_act=["south"])
    assert game_of(GameStatus.RUNNING, ongoing).outcome() is None
    assert game_of(GameStatus.FINISHED, game_pb2.GameState()).outcome() is None  # closed
    by_rules = game_pb2.GameState(
        game="war", position="p", outcome=game_pb2.Outcome(winner="north")
    )
    outcome = game_of(GameStatus.FINISHED, by_rules).outcome()
    assert outcome is not None and outcome.winner == "north"
    # Both clocks out at once: the matchmaker's own ending, the state still going on.
    both_out = game_pb2.Outcome(reason=game_pb2.OUTCOME_REASON_TIME)
    outcome = game_of(GameStatus.FINISHED, ongoing, both_out.SerializeToString()).outcome()
    assert outcome == both_out


def test_seats_are_found_by_side_player_and_turn() -> None:
    state = game_pb2.GameState(game="war", position="p", to_act=["north"])
    game = game_of(GameStatus.RUNNING, state)
    south, north = game.seats
    assert game.seat_for("north") is north and game.seat_for("green") is None
    assert game.seat_of("p1") is south and game.seat_of("p9") is None
    assert game.seat_of("") is None
    assert game.opponent("south") is north and game.opponent("north") is south
    assert game.to_act() == ("north",)
    assert game.seated_to_act(SeatKind.BOT) is north
    assert game.seated_to_act(SeatKind.HUMAN) is None
    alone = game_of(GameStatus.OPEN, state)
    alone.seats = alone.seats[:1]
    assert alone.opponent("south") is None
    # Only a running game has a side to act, whatever its state says.
    for status in (GameStatus.OPEN, GameStatus.FINISHED):
        assert game_of(status, state).to_act() == ()
        assert game_of(status, state).seated_to_act(SeatKind.BOT) is None

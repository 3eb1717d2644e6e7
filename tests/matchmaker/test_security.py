"""The matchmaker's security suite: one test per finding of the security review, each
reproducing it against real servers (a real Redis, real gRPC servers, real processes where
start-up or logs are the point). Every test here failed on the code before its fix. The
ones that keep state in Redis (limits, caps, invite codes, sealed storage) also run on a
Redis Cluster."""

from __future__ import annotations

import asyncio
import base64
import functools
import itertools
import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

import matchmaker.engine
from matchmaker import invites, keys
from matchmaker.engine import Engine
from matchmaker.limits import bucket_name, caller_address
from matchmaker.settings import Settings
from matchmaker.vault import Vault
from tests.matchmaker.conftest import (
    TEST_SECRET_KEY,
    Client,
    InProcessMatchmaker,
    both_stores,
    players_of,
    start_engine_process,
    start_matchmaker_process,
)
from tests.matchmaker.helpers import (
    expect_error,
    legal_actions,
    sealed_array,
    seconds,
    start_game,
    submit_text,
    sync_client,
    wait_for,
)
from tests.matchmaker.test_main import assert_one_line_failure, launch
from tests.servers import free_port, start_engine, start_redis
from wargame.runtime.logs import HIDDEN, redact, redact_url, scrub
from wargame.runtime.quoting import MESSAGE_BYTES
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, game_pb2
from wargame.v1 import matchmaker_pb2 as mm
from wargame.v1 import napoleonic_pb2 as nap

pytestmark = pytest.mark.integration
Code = grpc.StatusCode
DAWN = {"scenario": "attack_at_dawn"}


def phase(client: Client, game_id: str) -> int:
    return int(client.GetGame(mm.GetGameRequest(game_id=game_id)).game.state.napoleonic.phase)


# -- 15.1 the bot's secret deployment ---------------------------------------------------


def _bot_dawn_game(client: Client) -> tuple[str, set[tuple[str, str]], str]:
    """A commit-reveal Attack-at-Dawn game against the bot, played to the layout: its id,
    the bot's array (square, unit type) and the salt the bot revealed."""
    game = client.CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options=DAWN,
            side="red",
            opponent=mm.SEAT_KIND_BOT,
            bot_time=seconds(0.05),
        )
    ).game
    mine, salt = sealed_array("red"), "ab" * 32
    submit_text(client, game.id, f"commit {mine} salt {salt}")
    wait_for(lambda: phase(client, game.id) == nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL)
    submit_text(client, game.id, f"reveal {mine} salt {salt}")
    wait_for(lambda: phase(client, game.id) == nap.NAPOLEONIC_PHASE_MOVEMENT)
    view = client.GetGame(mm.GetGameRequest(game_id=game.id)).game
    bot_array = {(p.cell, p.kind) for p in view.state.pieces if p.side == "black"}
    (bot_reveal,) = [m for m in view.moves if m.startswith("reveal") and salt not in m]
    return game.id, bot_array, bot_reveal.rpartition(" salt ")[2]


def test_the_bots_secret_array_varies_and_its_salt_comes_from_the_server_secret(
    ada: Client,
) -> None:
    games = [_bot_dawn_game(ada) for _ in range(3)]
    arrays = [frozenset(array) for _, array, _ in games]
    assert all(len(array) == 15 for array in arrays)
    assert len(set(arrays)) == 3, "the bot deployed the same array twice"
    vault = Vault(TEST_SECRET_KEY)
    for game_id, _, salt in games:
        assert salt == vault.derive(f"bot salt|{game_id}|black|0").hex()
        # The same game under another installation's key has another salt and array.
        assert salt != Vault(bytes(range(64, 96))).derive(f"bot salt|{game_id}|black|0").hex()


@pytest.mark.system
@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "--secret-key-file"),
        ("00" * 32, "all zeros"),
        ("ab" * 16, "has 16 bytes"),
        ("0123" * 16, "placeholder"),
        ("not hex", "not hex digits"),
    ],
)
def test_the_matchmaker_refuses_to_start_without_a_real_secret_key(
    tmp_path: Path, content: str | None, words: str
) -> None:
    env = {"WARGAME_MATCHMAKER_SECRET_KEY_FILE": ""}
    if content is not None:
        path = tmp_path / "secret.key"
        path.write_text(content + "\n")
        env["WARGAME_MATCHMAKER_SECRET_KEY_FILE"] = str(path)
    result = launch("serve", "--listen", f"127.0.0.1:{free_port()}", env=env)
    assert_one_line_failure(result, words)


# -- 15.4 RegisterPlayer: limited per address and in all; guests expire ------------------


def _register(address: str, forwarded: str = "") -> mm.RegisterPlayerResponse:
    with grpc.insecure_channel(address) as channel:
        stub = mm_stub(channel)
        metadata = (("x-forwarded-for", forwarded),) if forwarded else ()
        reply: mm.RegisterPlayerResponse = stub.RegisterPlayer(
            mm.RegisterPlayerRequest(display_name="Guest"), metadata=metadata, timeout=10
        )
        return reply


def mm_stub(channel: grpc.Channel) -> Any:
    from wargame.v1 import matchmaker_pb2_grpc

    return matchmaker_pb2_grpc.MatchmakerStub(channel)


@both_stores
def test_registration_is_limited_per_address_and_in_all_across_replicas(
    replica: Callable[..., InProcessMatchmaker],
) -> None:
    limits = {
        "register_peer_rate": 0.001,
        "register_peer_burst": 3.0,
        "register_rate": 0.001,
        "register_burst": 7.0,
        "trusted_proxies": "127.0.0.1/32",
    }
    one = replica(**limits)
    two = replica(**limits)
    for _ in range(3):
        _register(one.address, "203.0.113.7")
    details = expect_error(
        lambda: _register(two.address, "203.0.113.7"), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )
    assert "your address" in details.message and int(details.metadata["retry_after_ms"]) > 0
    # One IPv6 host holds a /64: its addresses share one bucket.
    _register(one.address, "2001:db8:1:2::5")
    _register(two.address, "2001:db8:1:2::77")
    _register(one.address, "10.0.0.1, 2001:db8:1:2::99")  # the last hop is the caller
    expect_error(
        lambda: _register(one.address, "2001:db8:1:2::5"), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )
    # Seven in all, whichever replica and address: the eighth new player waits.
    _register(two.address, "198.51.100.1")
    details = expect_error(
        lambda: _register(one.address, "198.51.100.2"), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )
    assert "at the moment" in details.message


def test_an_untrusted_caller_cannot_pick_its_address(
    replica: Callable[..., InProcessMatchmaker],
) -> None:
    server = replica(register_peer_rate=0.001, register_peer_burst=2.0)
    _register(server.address, "203.0.113.1")
    _register(server.address, "203.0.113.2")
    expect_error(
        lambda: _register(server.address, "203.0.113.3"), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )


class _Context:
    """The two things `caller_address` reads of a call (the rest is the real function)."""

    def __init__(self, peer: str, forwarded: str = "") -> None:
        self._peer = peer
        self._metadata = (("x-forwarded-for", forwarded),) if forwarded else ()

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata


def test_caller_addresses_are_read_for_ipv4_ipv6_and_proxies() -> None:
    from matchmaker.limits import trusted_networks

    address = caller_address
    assert address(_Context("ipv4:198.51.100.9:5123")) == "198.51.100.9"
    assert address(_Context("ipv6:[2001:db8::1]:443")) == "2001:db8::/64"
    assert address(_Context("ipv6:[::ffff:192.0.2.1]:1")) == "192.0.2.1"
    assert address(_Context("unix:/tmp/s")) == "local"
    proxy = trusted_networks("10.0.0.0/8, 192.0.2.0/24")
    seen = _Context("ipv4:10.1.2.3:9", "203.0.113.50, 192.0.2.7")
    assert address(seen, proxy) == "203.0.113.50"
    assert address(seen) == "10.1.2.3"
    assert bucket_name(None, "") == "unknown"


@both_stores
def test_guests_who_never_play_expire_soon_players_keep_the_long_ttl(
    replica: Callable[..., InProcessMatchmaker],
    redis_url: str,
    clients: Callable[..., Client],
) -> None:
    server = replica(guest_ttl=600.0)
    store = sync_client(redis_url)
    guest = clients(server.address, "Guest")
    player = clients(server.address, "Player")
    player.CreateGame(mm.CreateGameRequest(game="war", opponent=mm.SEAT_KIND_BOT))
    second = player.CreateToken(mm.CreateTokenRequest())
    guest.GetPlayer(mm.GetPlayerRequest())  # a guest's calls keep it alive, as a guest
    for key in store.scan_iter(f"wg:player:{{{guest.player_id}}}*"):
        assert 0 < store.ttl(key) <= 600, key
    month = 29 * 24 * 3600
    assert store.ttl(keys.player(player.player_id)) > month
    tokens = [k for k in store.scan_iter(f"wg:player:{{{player.player_id}}}:token:*")]
    assert len(tokens) == 2 and all(store.ttl(token) > month for token in tokens)
    assert second.token and store.hget(keys.player(player.player_id), "played") == b"1"
    store.close()


# -- 15.5 a cap on unfinished games per player ------------------------------------------


@both_stores
def test_one_player_sits_in_a_bounded_number_of_unfinished_games(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
) -> None:
    server = replica(max_open_games=3)
    ada, bob = clients(server.address, "Ada"), clients(server.address, "Bob")
    first = ada.CreateGame(mm.CreateGameRequest(game="war")).game
    ada.CreateGame(mm.CreateGameRequest(game="battle"))
    ada.CreateGame(mm.CreateGameRequest(game="war", opponent=mm.SEAT_KIND_BOT))
    for request in (
        mm.CreateGameRequest(game="war"),
        mm.CreateGameRequest(game="war", opponent=mm.SEAT_KIND_BOT),
    ):
        details = expect_error(
            functools.partial(ada.CreateGame, request),
            Code.RESOURCE_EXHAUSTED,
            "TOO_MANY_GAMES",
        )
        assert "3 unfinished games" in details.message
    other = bob.CreateGame(mm.CreateGameRequest(game="war")).game
    expect_error(
        lambda: ada.JoinGame(mm.JoinGameRequest(game_id=other.id)),
        Code.RESOURCE_EXHAUSTED,
        "TOO_MANY_GAMES",
    )
    expect_error(
        lambda: next(iter(ada.JoinQueue(mm.JoinQueueRequest(game="war"), timeout=10))),
        Code.RESOURCE_EXHAUSTED,
        "TOO_MANY_GAMES",
    )
    ada.Resign(mm.ResignRequest(game_id=first.id))  # withdrawn: one game fewer
    joined = ada.JoinGame(mm.JoinGameRequest(game_id=other.id)).game
    assert joined.status == mm.GAME_STATUS_RUNNING
    bob.Resign(mm.ResignRequest(game_id=other.id))  # finished: one fewer again
    ada.CreateGame(mm.CreateGameRequest(game="war"))


# -- 15.6 secrets never reach the logs ----------------------------------------------------


@pytest.mark.system
def test_no_secret_reaches_the_logs_of_a_start_and_a_whole_game(
    tmp_path: Path, seal_key_file: Path
) -> None:
    password = "pw-" + uuid.uuid4().hex
    store = start_redis(tmp_path / "redis", password=password)
    engine = start_engine_process(tmp_path, seal_key_file)
    url = f"redis://:{password}@127.0.0.1:{store.port}/0"
    process = start_matchmaker_process(
        tmp_path, url, engine.address, "--log-level", "debug", name="logged"
    )
    try:
        ada, bob = Client(process.address, "Ada"), Client(process.address, "Bob")
        # A sealed Attack at Dawn against the bot, then one against a person by invite.
        dawn = ada.CreateGame(
            mm.CreateGameRequest(
                game="napoleonic",
                options={**DAWN, "attack_at_dawn_mode": "sealed"},
                side="red",
                opponent=mm.SEAT_KIND_BOT,
                bot_time=seconds(0.05),
            )
        ).game
        array = sealed_array("red")
        submit_text(ada, dawn.id, f"seal {array}")
        wait_for(lambda: phase(ada, dawn.id) == nap.NAPOLEONIC_PHASE_MOVEMENT)
        laid_out = ada.GetGame(mm.GetGameRequest(game_id=dawn.id)).game.state
        bot_items = [f"{p.cell}={p.kind}" for p in laid_out.pieces if p.side == "black"]
        ada.Resign(mm.ResignRequest(game_id=dawn.id))
        created = ada.CreateGame(mm.CreateGameRequest(game="war", side="south"))
        bob.JoinGame(mm.JoinGameRequest(invite_code=created.invite_code))
        expect_error(
            lambda: bob.JoinGame(mm.JoinGameRequest(invite_code="0000-0000-0000-0000")),
            Code.NOT_FOUND,
        )
        spoiled = Client(process.address, token=ada.token[:-4] + "AAAA")
        expect_error(lambda: spoiled.GetPlayer(mm.GetPlayerRequest()), Code.UNAUTHENTICATED)
        bob.Resign(mm.ResignRequest(game_id=created.game.id))
        key = bytes.fromhex((tmp_path / "matchmaker-secret.key").read_text().strip())
        bot_secrets = [Vault(key).derive(f"bot array|{dawn.id}|black|0").hex()]
    finally:
        process.stop()
        engine.stop()
        store.stop()
    log = process.log()
    for secret in (
        password,
        ada.token,
        ada.token.partition(".")[2],
        bob.token.partition(".")[2],
        created.invite_code,
        key.hex(),
        array,
        array.split()[0],
        *bot_items,
        *bot_secrets,
    ):
        assert secret not in log, f"a secret reached the log: {secret[:12]}..."
    assert f"redis://***@127.0.0.1:{store.port}/0" in log  # the start names its Redis


def test_log_redaction_hides_secret_keys_and_scrubs_text() -> None:
    event = {
        "event": "calling",
        "token": "p" + "a" * 16 + ".secret-secret-secret-secret",
        "redis_password": "hunter2",
        "seal_key": "00ff",
        "salt": b"\x01\x02",
        "token_id": "t123",
        "idempotency_key": "k1",
        "nested": {"authorization": "Bearer abc", "note": "Bearer xyz123 was sent"},
        "url": "rediss://user:hunter2@redis:6380/0?password=p&ssl_cert_reqs=none",
        "error": "cannot reach redis://:hunter2@10.0.0.1:6379/0",
        "hint": "token paaaaaaaaaaaaaaaa.abcdefghijklmnopqrstuvwxyz0123 seen",
    }
    out = redact(None, "info", dict(event))
    text = json.dumps(out)
    for secret in ("hunter2", "secret-secret", "00ff", "abc", "xyz123", "abcdefghijklmnop"):
        assert secret not in text, secret
    assert out["token"] == out["redis_password"] == out["salt"] == HIDDEN
    assert out["token_id"] == "t123" and out["idempotency_key"] == "k1"
    assert out["event"] == "calling" and "redis:6380" in out["url"]
    assert "ssl_cert_reqs=none" in out["url"] and "10.0.0.1:6379" in out["error"]
    assert redact_url("redis://127.0.0.1:6399/0") == "redis://127.0.0.1:6399/0"
    assert "hunter2" not in scrub("see redis://default:hunter2@h:1 now")


# -- 15.8 a refusal quotes a short prefix; an oversized request is REQUEST_TOO_LARGE ------

LONG = 20_000  # characters of bad input: far past gRPC's 16 kB of metadata


def test_long_bad_inputs_and_oversized_requests_are_refused_with_their_reasons(
    ada: Client,
) -> None:
    # Quoted whole, these inputs pushed the status past gRPC's metadata limit: the client got
    # RESOURCE_EXHAUSTED with no reason. Each refusal now keeps its reason and a short text.
    for call, code, reason in (
        (lambda: ada.GetPlayer(mm.GetPlayerRequest(player_id="p" * LONG)), Code.NOT_FOUND, ""),
        (
            lambda: ada.CreateGame(mm.CreateGameRequest(game="war", side="ü" * LONG)),
            Code.INVALID_ARGUMENT,
            "",
        ),
        (
            lambda: ada.RegisterPlayer(mm.RegisterPlayerRequest(display_name="n" * LONG)),
            Code.INVALID_ARGUMENT,
            "MALFORMED_REQUEST",
        ),
    ):
        details = expect_error(call, code, reason)
        assert details.reason, details
        assert len(details.message.encode()) <= MESSAGE_BYTES, details.message
        assert all(len(text.encode()) <= MESSAGE_BYTES for _field, text in details.fields)
    # Beyond the message limit (4 MiB), the matchmaker itself refuses, with the reason.
    for size in (4 * 1024 * 1024 + 1, 7 * 1024 * 1024):
        details = expect_error(
            functools.partial(ada.Echo, mm.EchoRequest(payload=b"x" * size)),
            Code.RESOURCE_EXHAUSTED,
            "REQUEST_TOO_LARGE",
        )
        assert "at most 4194304" in details.message
    assert len(ada.Echo(mm.EchoRequest(payload=b"x" * 4_000_000)).payload) == 4_000_000


# -- 15.9 inputs beyond their range are INVALID_ARGUMENT ----------------------------------


def test_a_huge_page_token_or_version_is_refused_not_a_crash(ada: Client) -> None:
    for token in (
        base64.urlsafe_b64encode(str(10**30).encode()).decode(),
        base64.urlsafe_b64encode(b"9" * 5000).decode(),
        base64.urlsafe_b64encode(b"-1").decode(),
        "x" * 100_000,
    ):
        expect_error(
            functools.partial(ada.BrowseGames, mm.BrowseGamesRequest(page_token=token)),
            Code.INVALID_ARGUMENT,
            "MALFORMED_REQUEST",
        )
    game = ada.CreateGame(mm.CreateGameRequest(game="war")).game
    for version in (2, 2**63, 2**64 - 1):  # ahead of the store: the game as it is
        call = ada.stub.WatchGame(
            mm.WatchGameRequest(game_id=game.id, after_version=version),
            metadata=ada.metadata,
            timeout=10,
        )
        first = next(iter(call))
        call.cancel()
        assert (first.resync, first.version, first.game.version) == (True, 1, 1)
    expect_error(
        lambda: ada.GetGame(mm.GetGameRequest(game_id="g" * 100_000)),
        Code.NOT_FOUND,
        "SESSION_NOT_FOUND",
    )


# -- 15.11 clocks that run out together ----------------------------------------------------


@both_stores
def test_clocks_running_out_together_draw_the_game_never_by_name(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    players = players_of(matchmaker.address, clients, "red", "black")
    game = start_game(
        players,
        "napoleonic",
        options=DAWN,
        rated=True,
        time_control=mm.TimeControl(base=seconds(0.4)),
    )
    assert sorted(game.clock.running.split(",")) == ["black", "red"]
    # Neither commits its array in time: both flags fall at the same moment.
    over = wait_for(
        lambda: (
            (g := players["red"].GetGame(mm.GetGameRequest(game_id=game.id)).game).status
            == mm.GAME_STATUS_FINISHED
            and g
        ),
        timeout=20,
    )
    assert over.outcome.reason == game_pb2.OUTCOME_REASON_TIME and over.outcome.winner == ""
    assert "together" in over.outcome.message
    record = players["black"].GetRecord(mm.GetRecordRequest(game_id=game.id)).record
    assert over.outcome.message in record
    settled = wait_for(
        lambda: all(
            seat.HasField("rating_after")
            for seat in players["red"].GetGame(mm.GetGameRequest(game_id=game.id)).game.seats
        )
    )
    assert settled
    for client in players.values():
        (rating,) = client.GetPlayer(mm.GetPlayerRequest()).player.ratings
        assert rating.games == 1 and abs(rating.rating - 1500) < 1e-6  # a draw between equals


# -- 15.12 invite codes -----------------------------------------------------------------------


CODE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$")


def test_invite_codes_carry_80_bits_and_forgive_typing() -> None:
    codes = {invites.new_code() for _ in range(2000)}
    assert len(codes) == 2000 and all(CODE.match(code) for code in codes)
    assert invites.LENGTH * 5 >= 64
    code = "7K3M-9QX2-HF4P-T8WZ"
    assert invites.normalize(code) == "7K3M9QX2HF4PT8WZ"
    assert invites.normalize("7k3m 9qx2 hf4p t8wz") == "7K3M9QX2HF4PT8WZ"
    assert invites.normalize("OOOO-IIII-LLLL-oooo") == "0000111111110000"
    for bad in ("7K3M-9QX2-HF4P", "7K3M-9QX2-HF4P-T8WU", "x" * 10_000, ""):
        assert invites.normalize(bad) is None


@both_stores
def test_wrong_invite_codes_are_limited_per_player_per_address_and_in_all(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
) -> None:
    server = replica(
        guess_player_rate=0.001,
        guess_player_burst=3.0,
        guess_peer_rate=0.001,
        guess_peer_burst=5.0,
        guess_rate=0.001,
        guess_burst=8.0,
        trusted_proxies="127.0.0.1/32",
    )
    host = clients(server.address, "Host")
    created = host.CreateGame(mm.CreateGameRequest(game="war", visibility=mm.VISIBILITY_PRIVATE))

    def guess(client: Client, code: str, address: str) -> Any:
        return client.stub.JoinGame(
            mm.JoinGameRequest(invite_code=code),
            metadata=(*client.metadata, ("x-forwarded-for", address)),
            timeout=10,
        )

    wrong = "0000-0000-0000-0000"

    def limited_after(name: str, misses: int, address: str, last_from: str) -> str:
        """A new player's `misses` wrong guesses from `address`, each not found, then one
        from `last_from` that is rate limited: its message."""
        player = clients(server.address, name)
        for _ in range(misses):
            expect_error(lambda: guess(player, wrong, address), Code.NOT_FOUND)
        return expect_error(
            lambda: guess(player, wrong, last_from), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
        ).message

    assert "from you" in limited_after("Ann", 3, "203.0.113.1", "203.0.113.2")
    # A fresh player at the same address: the address has two wrong guesses left.
    assert "your address" in limited_after("Ben", 2, "203.0.113.1", "203.0.113.1")
    # Everyone together: eight wrong codes in all, whoever and from wherever.
    for index in range(3):
        player = clients(server.address, f"P{index}")
        expect_error(
            functools.partial(guess, player, wrong, f"198.51.100.{index}"),
            Code.NOT_FOUND,
        )
    late = clients(server.address, "Late")
    details = expect_error(
        lambda: guess(late, wrong, "192.0.2.9"), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )
    assert "at the moment" in details.message
    # ... and a right code is never refused (only a miss is charged).
    assert guess(late, created.invite_code, "192.0.2.9").game.status == mm.GAME_STATUS_RUNNING


@both_stores
def test_a_typed_invite_code_finds_its_game(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    host, guest = clients(matchmaker.address, "Host"), clients(matchmaker.address, "Guest")
    created = host.CreateGame(mm.CreateGameRequest(game="war", visibility=mm.VISIBILITY_PRIVATE))
    assert CODE.match(created.invite_code)
    typed = created.invite_code.lower().replace("-", " ").replace("1", "l").replace("0", "o")
    joined = guest.JoinGame(mm.JoinGameRequest(invite_code=typed)).game
    assert joined.id == created.game.id and joined.status == mm.GAME_STATUS_RUNNING


# -- 15.13 hidden information is out of plain storage until revealed ----------------------


def stored_bytes(redis_url: str) -> list[bytes]:
    """Everything the matchmaker keeps in Redis, as bytes."""
    client: Any = sync_client(redis_url)
    out: list[bytes] = []
    try:
        for key in client.scan_iter(count=1000):
            kind = client.type(key)
            if kind == b"hash":
                out += [v for pair in client.hgetall(key).items() for v in pair]
            elif kind == b"list":
                out += client.lrange(key, 0, -1)
            elif kind == b"stream":
                for _, fields in client.xrange(key):
                    out += [v for pair in fields.items() for v in pair]
            elif kind == b"string":
                out.append(client.get(key) or b"")
            elif kind == b"zset":
                out += client.zrange(key, 0, -1)
    finally:
        client.close()
    return out


def array_traces(array: str) -> list[bytes]:
    """How an array would show in storage: its text items and its encoded placements."""
    letters = {"I": "infantry", "C": "cavalry", "A": "artillery", "G": "guards"}
    traces = []
    for item in array.split()[:4]:
        square, _, letter = item.partition("=")
        traces.append(item.encode())
        traces.append(
            nap.NapoleonicPlacement(unit_type=letters[letter], cell=square).SerializeToString()
        )
    return traces


def leaks(redis_url: str, array: str) -> list[bytes]:
    traces = array_traces(array)
    return [value for value in stored_bytes(redis_url) if any(t in value for t in traces)]


@both_stores
@pytest.mark.parametrize("mode", ["sealed", "commit_reveal"])
def test_a_pending_array_is_kept_out_of_plain_storage(
    matchmaker: InProcessMatchmaker,
    clients: Callable[..., Client],
    engine_stub: Any,
    redis_url: str,
    mode: str,
) -> None:
    players = players_of(matchmaker.address, clients, "red", "black")
    red, black = players["red"], players["black"]
    game = start_game(players, "napoleonic", options={**DAWN, "attack_at_dawn_mode": mode})
    reds, blacks = sealed_array("red"), sealed_array("black")
    if mode == "sealed":
        mine = submit_text(red, game.id, f"seal {reds}")
    else:
        submit_text(red, game.id, f"commit {reds} salt {'11' * 32}")
        submit_text(black, game.id, f"commit {blacks} salt {'22' * 32}")
        mine = submit_text(red, game.id, f"reveal {reds} salt {'11' * 32}")
    assert reds.split()[0] in mine.notations[0]  # its author sees it
    assert (
        red.GetGame(mm.GetGameRequest(game_id=game.id))
        .game.moves[-1]
        .endswith(mine.notations[0].partition(" ")[2])
    )  # and, from the sealed moves, its author still does
    assert leaks(redis_url, reds) == [], "the pending array sits in Redis in the clear"
    if mode == "sealed":
        submit_text(black, game.id, f"seal {blacks}")
    else:
        submit_text(black, game.id, f"reveal {blacks} salt {'22' * 32}")
    done = red.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert done.state.napoleonic.phase == nap.NAPOLEONIC_PHASE_MOVEMENT
    assert any(reds.split()[0] in move for move in done.moves)  # laid out: open to all
    record = black.GetRecord(mm.GetRecordRequest(game_id=game.id)).record
    replayed = engine_stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record))
    assert replayed.final_state == done.state
    assert leaks(redis_url, reds) != []  # the layout is open information: stored as such


def test_a_reveal_naming_a_non_ascii_cell_is_refused_with_its_reason(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """A structured reveal whose cell is no square (here not even ASCII) is
    refused as INVALID_ARGUMENT UNKNOWN_CELL, never INTERNAL, and the game loses nothing."""
    players = players_of(matchmaker.address, clients, "red", "black")
    red, black = players["red"], players["black"]
    game = start_game(players, "napoleonic", options=DAWN)
    submit_text(red, game.id, f"commit {sealed_array('red')} salt {'11' * 32}")
    submit_text(black, game.id, f"commit {sealed_array('black')} salt {'22' * 32}")
    before = red.GetGame(mm.GetGameRequest(game_id=game.id)).game
    kinds = {"I": "infantry", "C": "cavalry", "A": "artillery", "G": "guards"}
    placements = [
        nap.NapoleonicPlacement(unit_type=kinds[letter], cell="é2" if square == "a2" else square)
        for square, letter in (item.split("=") for item in sealed_array("red").split())
    ]
    reveal = nap.NapoleonicAction(
        reveal=nap.NapoleonicReveal(placements=placements, salt=bytes.fromhex("11" * 32))
    )
    details = expect_error(
        lambda: red.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game.id,
                expected_version=before.version,
                idempotency_key=uuid.uuid4().hex,
                actions=[game_pb2.Action(side="red", napoleonic=reveal)],
            )
        ),
        Code.INVALID_ARGUMENT,
        "UNKNOWN_CELL",
    )
    assert "é2" not in details.message  # the array is secret: nothing of it is quoted
    after = red.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert (after.version, after.state) == (before.version, before.state)
    assert after.state.napoleonic.phase == nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL


# -- 15.14 one request id for both services; relayed failures logged at error -------------


@pytest.mark.system
def test_the_engine_logs_the_callers_request_id_and_relayed_failures_are_errors(
    tmp_path: Path, seal_key_file: Path, redis_url: str
) -> None:
    engine = start_engine_process(tmp_path, seal_key_file)
    engine.stop()  # started again at debug level on the same port
    engine = start_engine(tmp_path, "--log-level", "debug", name="engine-debug")
    process = start_matchmaker_process(tmp_path, redis_url, engine.address, name="ids")
    try:
        ada, bob = Client(process.address, "Ada"), Client(process.address, "Bob")
        created = ada.stub.CreateGame(
            mm.CreateGameRequest(game="war", side="south"),
            metadata=(*ada.metadata, ("x-request-id", "create-4711")),
            timeout=10,
        )
        game = bob.JoinGame(mm.JoinGameRequest(game_id=created.game.id)).game
        # A stored state the engine refuses (a format it does not know): a failure.
        spoiled = game_pb2.GameState()
        spoiled.CopyFrom(game.state)
        spoiled.format_version = 999
        client = sync_client(redis_url)
        client.hset(keys.game(game.id), "state", spoiled.SerializeToString())
        client.close()
        with pytest.raises(grpc.RpcError) as caught:
            ada.stub.SubmitActions(
                mm.SubmitActionsRequest(
                    game_id=game.id,
                    expected_version=game.version,
                    idempotency_key="k",
                    actions=[game_pb2.Action(notation="e3-e4")],
                ),
                metadata=(*ada.metadata, ("x-request-id", "submit-4712")),
                timeout=10,
            )
        assert error_details(caught.value).code == Code.INTERNAL
    finally:
        process.stop()
        engine.stop()
    engine_lines = [json.loads(line) for line in engine.log().splitlines() if line.startswith("{")]
    mm_lines = [json.loads(line) for line in process.log().splitlines() if line.startswith("{")]
    assert any(line.get("request_id") == "create-4711" for line in engine_lines)
    refused = [line for line in engine_lines if line.get("request_id") == "submit-4712"]
    assert refused and refused[0]["event"] == "rpc refused"
    (failure,) = [line for line in mm_lines if line.get("request_id") == "submit-4712"]
    assert failure["level"] == "error" and "format" in failure["engine"].lower() + failure.get(
        "message", ""
    )


# -- 15.10 the states handed out are states the engine accepts -------------------------------


def test_the_redacted_views_of_a_deployment_are_states_the_engine_accepts(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> None:
    players = players_of(matchmaker.address, clients, "red", "black")
    game = start_game(players, "napoleonic", options={**DAWN, "attack_at_dawn_mode": "sealed"})
    submit_text(players["red"], game.id, f"seal {sealed_array('red')}")
    for viewer in (players["black"], clients(matchmaker.address)):
        state = viewer.GetGame(mm.GetGameRequest(game_id=game.id)).game.state
        assert state.napoleonic.deployment.sealed[0].ciphertext == b""
        engine_stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state), timeout=10)


# -- 15.15 the matchmaker's memories of engine answers are bounded ---------------------------


def test_the_matchmakers_memories_of_engine_answers_stay_within_their_bounds(
    engine_address: str, engine_stub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Games described under options are kept by the options players send (a War back rank
    # is free text: hundreds of valid ones), views for drawing by position. Asked for more
    # distinct keys than each keeps, each keeps its bound and answers the newest from memory.
    monkeypatch.setattr(matchmaker.engine, "VIEWS_KEPT", 8)
    ranks = [
        "".join(left) + "GK" + "".join(right)
        for left, right in itertools.product(
            itertools.permutations("MHC."), itertools.permutations(".CHM")
        )
    ][: matchmaker.engine.DESCRIPTIONS_KEPT + 10]
    positions: list[game_pb2.GameState] = []
    state = engine_stub.NewGame(engine_pb2.NewGameRequest(game="war"), timeout=30).state
    while len(positions) < 12:
        action = legal_actions(engine_stub, state)[0].action
        request = engine_pb2.ApplyActionsRequest(
            state=state, actions=[action], view=engine_pb2.STATE_VIEW_POSITION
        )
        state = engine_stub.ApplyActions(request, timeout=30).state
        positions.append(game_pb2.GameState(game=state.game, position=state.position))

    async def scenario() -> tuple[int, int, list[int]]:
        engine = Engine(engine_address, Settings())
        try:
            for rank in ranks:
                described = await engine.describe("war", {"back_rank": rank})
                assert described.info.sides
            drawn = [len((await engine.drawn(position)).pieces) for position in positions]
            return len(engine._described), len(engine._views), drawn
        finally:
            await engine.close()

    described, views, drawn = asyncio.run(scenario())
    assert described == matchmaker.engine.DESCRIPTIONS_KEPT
    assert views == 8
    assert all(drawn)  # every position got its view, the oldest forgotten since

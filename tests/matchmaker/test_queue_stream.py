"""What a waiting JoinQueue stream tells its player, and when: a match at once (not at the
next status poll), with the ticket it waited under; a change of the queue at once (not at
the next heartbeat)."""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable, Iterator

import pytest

import matchmaker.service
from matchmaker import keys
from matchmaker.queue import Ticket
from tests.matchmaker.conftest import Client, InProcessMatchmaker
from tests.matchmaker.helpers import sync_client
from tests.matchmaker.test_live import QueueStream
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration


def set_war_rating(redis_url: str, player_id: str, rating: float) -> None:
    """Give a registered player a War rating (rating, deviation, volatility, games)."""
    client = sync_client(redis_url)
    try:
        client.hset(keys.player(player_id), "rating:war", f"{rating},80.0,0.06,5")
    finally:
        client.close()


def far_apart(
    server: InProcessMatchmaker, clients: Callable[..., Client], redis_url: str
) -> tuple[Client, Client]:
    """Ada (War rating 1000) and Bob (2000), players of `server`: too far apart to be paired
    until their rating windows have grown."""
    ada, bob = clients(server.address, "Ada"), clients(server.address, "Bob")
    set_war_rating(redis_url, ada.player_id, 1000.0)
    set_war_rating(redis_url, bob.player_id, 2000.0)
    return ada, bob


@contextlib.contextmanager
def war_queue() -> Iterator[Callable[[Client], QueueStream]]:
    """`join(player)` opens the player's JoinQueue stream for War; every stream opened is
    cancelled on the way out."""
    opened: list[QueueStream] = []

    def join(player: Client) -> QueueStream:
        stream = QueueStream(player, mm.JoinQueueRequest(game="war"))
        opened.append(stream)
        return stream

    try:
        yield join
    finally:
        for stream in opened:
            stream.call.cancel()


def next_message(stream: QueueStream, timeout: float) -> mm.JoinQueueResponse:
    try:
        message: mm.JoinQueueResponse = stream.messages.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(
            f"no JoinQueue message within {timeout} s (ended: {stream.ended.is_set()}, "
            f"error: {stream.error})"
        ) from None
    return message


def message_with_game(stream: QueueStream, timeout: float) -> mm.JoinQueueResponse:
    """The stream's first message that carries a game, within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        message = next_message(stream, max(0.01, deadline - time.monotonic()))
        if message.HasField("game"):
            return message


def test_a_waiting_player_learns_of_its_match_at_once_with_its_ticket(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    # A waiting stream looks at its ticket only every 30 s here: the match must wake it
    # (the pairer's signal), not the next look.
    server = replica(queue_status_interval=30.0)
    ada, bob = clients(server.address, "Ada"), clients(server.address, "Bob")
    with war_queue() as join:
        first = join(ada)
        waiting = next_message(first, 10)
        assert waiting.ticket and not waiting.HasField("game") and waiting.waiting == 1
        second = join(bob)
        ada_matched = message_with_game(first, 15)
        # The message with the game still names the ticket the player waited under.
        assert ada_matched.ticket == waiting.ticket
        # Bob may have been paired before his stream first looked, or between its look and
        # its wait (the signal it waits on was set meanwhile: it looks again at once); his
        # game message names his own ticket all the same.
        bob_matched = message_with_game(second, 15)
        assert bob_matched.ticket and bob_matched.ticket != ada_matched.ticket
        assert bob_matched.game.id == ada_matched.game.id


def test_a_change_in_the_queue_is_reported_at_once_not_at_the_heartbeat(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With an unchanged queue a stream reports only every HEARTBEAT; made a minute here, so
    # a report within 20 s can only be the one a change sends at once.
    monkeypatch.setattr(matchmaker.service, "HEARTBEAT", 60.0)
    server = replica(window_growth=0.0)  # the rating window stays 100: nobody is paired
    ada, bob = far_apart(server, clients, redis_url)
    with war_queue() as join:
        first = join(ada)
        waiting = next_message(first, 10)
        assert (waiting.position, waiting.waiting) == (1, 1)
        join(bob)
        changed = next_message(first, 20)
        assert (changed.position, changed.waiting) == (1, 2)
        assert changed.ticket == waiting.ticket and not changed.HasField("game")


def test_a_ticket_that_joined_ahead_of_the_redis_clock_has_waited_no_time(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
    redis_url: str,
) -> None:
    """Join times are the Redis primary's clock: after a failover to a primary whose clock
    is behind (or a clock stepped back), a ticket may seem to have joined in the future.
    Its stream then says it has waited no time at all, and offers the base rating window
    (not a negative wait, nor a window narrower than the base)."""
    server = replica(window_growth=10.0)  # 90 s before 1000 and 2000 could be paired
    ada, bob = far_apart(server, clients, redis_url)
    with war_queue() as join:
        first = join(ada)
        waiting = next_message(first, 10)
        ticket = Ticket.parse(waiting.ticket)
        client = sync_client(redis_url)
        try:  # a minute ahead of the Redis clock
            client.zincrby(keys.queue_joined(ticket.queue_id), 60_000, ticket.ticket)
        finally:
            client.close()
        # Bob joins after that: Ada's first report that counts him is one of the shift.
        join(bob)
        deadline = time.monotonic() + 20
        report = next_message(first, 20)
        while report.waiting != 2:
            report = next_message(first, max(0.01, deadline - time.monotonic()))
        assert (report.position, report.ticket) == (1, waiting.ticket)
        assert (report.waited.seconds, report.waited.nanos) == (0, 0)
        assert report.rating_window == 100.0

"""The matchmaker's tunables: timeouts, TTLs, limits, worker intervals.

One frozen value built from the command line (`main.py`) or by tests, passed to every
part. Durations are seconds unless the name says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wargame.runtime.tls import ClientTLS

DAY = 24 * 3600
HOUR = 3600


@dataclass(frozen=True)
class Settings:
    """Everything configurable about one matchmaker replica."""

    redis_url: str = "redis://127.0.0.1:6399/0"
    engine: str = "127.0.0.1:50051"
    # TLS to the engine (None: plaintext, on loopback or with --insecure; wargame/runtime/tls.py)
    engine_tls: ClientTLS | None = None
    # The installation's secret (vault.py): read from --secret-key-file, never shown.
    secret_key: bytes = field(default=b"", repr=False, compare=False)
    # Sent with every engine call: the engine's proof that the call is a matchmaker's, whose
    # searches it admits to its reserved processes (`--engine-caller-key-file`).
    engine_caller_key: str = field(default="", repr=False, compare=False)
    # -- Redis and engine calls
    redis_timeout: float = 2.0  # socket timeout of ordinary commands
    redis_connections: int = 64  # Redis connections for commands, per node; more calls wait
    # A commit is answered once one replica of its primary holds it (when it has replicas):
    # the longest wait, in seconds (0: answer at once, as Redis's own replication does).
    replica_wait: float = 1.0
    # Indexes written on every commit or join (due work, browse lists, active queues) are
    # split over this many keys, each its own hash tag (the same on every replica).
    index_shards: int = 16
    engine_timeout: float = 5.0  # deadline of one engine call (SuggestAction: bot time + this)
    engine_retries: int = 3  # attempts of an engine call that found it UNAVAILABLE
    # Connections to the engine, used in turn: an engine's worker processes share one port
    # by SO_REUSEPORT, which spreads connections, not the calls of one connection.
    engine_connections: int = 4
    retry_hint: float = 1.0  # the "retry after" offered with UNAVAILABLE
    # -- expiry (nothing lives forever)
    player_ttl: float = 30 * DAY  # an idle player's keys (renewed by every call)
    guest_ttl: float = 6 * HOUR  # the same for a player who has never played a game
    open_game_ttl: float = 3600.0  # an open game nobody joined is closed after this
    running_game_ttl: float = 30 * DAY  # a running game's keys (renewed by every commit)
    finished_game_ttl: float = 7 * DAY  # a finished game's keys, record included
    invite_ttl: float = 7 * DAY
    idempotency_ttl: float = 3600.0  # how long a submission's key is remembered
    stream_maxlen: int = 2000  # updates kept per game (older ones: the watcher resyncs)
    # Versions a finished game keeps for watchers who resume (0: all, for as long as its
    # stream lives, `idempotency_ttl`: a watcher cut off as the game ended misses nothing).
    finished_stream_keep: int = 0
    rated_memory: int = 1000  # finished games remembered per player (exactly-once ratings)
    leaderboard_size: int = 10_000  # players kept per leaderboard
    browse_size: int = 10_000  # games kept per browse list
    # -- play
    abandon_after: float = 600.0  # a side to act that has left loses this long after the warning
    presence_interval: float = 5.0  # how often a replica renews the presence of its watchers
    presence_ttl: float = 20.0  # a presence not renewed this long has lapsed (the player left)
    presence_check: float = 30.0  # how often the sweeper looks at who is present in a game
    max_open_games: int = 20  # unfinished games one player may sit in at once
    max_actions_per_submit: int = 64
    submit_retries: int = 5  # optimistic retries of server-made commits (resign, timeouts)
    # -- per-player rate limit (token bucket); 0 disables it
    rate_limit: float = 20.0  # requests per second, sustained
    rate_burst: float = 40.0
    # -- RegisterPlayer: per caller address and for the whole installation (token buckets)
    register_peer_rate: float = 0.05  # new players per second from one address (3 a minute)
    register_peer_burst: float = 10.0
    register_rate: float = 20.0  # new players per second, every address together
    register_burst: float = 200.0
    # -- wrong invite codes: per player, per address and in all (token buckets)
    guess_player_rate: float = 0.05
    guess_player_burst: float = 10.0
    guess_peer_rate: float = 0.1
    guess_peer_burst: float = 20.0
    guess_rate: float = 20.0
    guess_burst: float = 500.0
    # Chat (chat.py): lines a player may say per second, sustained, and in a burst; the
    # longest line (characters); the lines a game keeps.
    chat_rate: float = 0.5
    chat_burst: float = 5.0
    chat_max_chars: int = 300
    chat_keep: int = 500
    # Proxies whose x-forwarded-for is believed (CIDRs, comma-separated; "" trusts none).
    trusted_proxies: str = ""
    # -- quick match
    window_base: float = 100.0  # rating difference accepted at once
    window_growth: float = 25.0  # added per second waited
    window_max: float = 1000.0
    ticket_liveness: float = 15.0  # a ticket whose stream stops renewing it is dropped
    queue_status_interval: float = 1.0  # how often a waiting stream reports
    pair_interval: float = 0.5  # how often each replica pairs every queue
    match_create_grace: float = 3.0  # a matched stream creates the game itself after this
    match_ttl: float = 120.0  # an unclaimed match is dropped after this
    queue_ttl: float = DAY  # an idle queue's keys
    # -- background work (every replica)
    sweep_interval: float = 0.25  # how often the sweeper looks for due games
    # A claimed game is left to its claimer this long, renewed every third of it while the
    # work runs: a replica that dies leaves its games to the others within one lease.
    sweep_lease: float = 2.0
    sweep_batch: int = 64  # games claimed per look
    sweep_concurrency: int = 32  # games worked on at once per replica
    bot_time: float = 1.0  # default bot thinking time per action
    bot_max_time: float = 10.0
    bot_level: int = 5  # the bot's strength when a game asks for none (1 weakest .. 5)
    draw_answer_time: float = 1.0  # longest time the bot looks at a draw offer
    rematch_follow: float = 300.0  # how long a finished game's watcher may wait for a rematch
    # -- serving
    grace: float = 10.0  # seconds in-flight calls get on SIGTERM
    # A live-update listener that hears nothing from Redis for this long checks its
    # connection (PING), and replaces it after two such silences.
    watch_block: float = 5.0
    max_watchers: int = 10_000  # open WatchGame streams per replica; more are refused
    # Of `max_watchers`, the streams only seated players of unfinished games may open: a
    # player gets its own game's stream however many spectators watch.
    watch_seat_reserve: int = 1_000
    max_watchers_per_address: int = 200  # spectator streams per caller address, per replica
    max_watchers_per_player: int = 8  # streams per player (whatever its token), per replica
    # Redis connections for watchers' reads, per node, apart from `redis_connections` (so
    # spectators never take those of moves, clocks, bots and pairing).
    watch_connections: int = 16
    # Stream openings (and watchers catching up) doing their reads and building their first
    # messages at once (one while other calls are being handled); the others wait. Few, so
    # that a burst of them leaves the event loop free for other calls (moves among them).
    watch_openings: int = 4
    # Stream openings without a token waiting at once (see `watch_openings`); more are
    # refused (RESOURCE_EXHAUSTED, retry hint).
    watch_queue: int = 2_000
    default_page_size: int = 20
    max_page_size: int = 100

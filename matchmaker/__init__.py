"""The wargame matchmaker: players, games, quick match, live play, clocks, ratings.

Stateless replicas serving `wargame.v1.Matchmaker` over grpc.aio; every session lives in
Redis and every rule question goes to the engine over gRPC.

Where things are:

- `main.py`      the `wargame-matchmaker serve` command and its flags (`settings.py`)
- `server.py`    one replica: its Redis client, engine client, parts, background workers
- `redis_client.py` one URL for a standalone Redis, a Redis Cluster or a managed Redis
                 (found out at start), bounded connections, replica-confirmed writes
- `service.py`   the servicer (one method per RPC); `handling.py` wraps each with request
                 ids, logs, metrics and the error model (the shared `Refusal`; the
                 matchmaker's own refusals in `errors.py`)
- `keys.py`      every Redis key, one hash tag per game / player / queue / index shard
- `schema.py`    the key layout recorded in Redis, and `migrate` to a newer one
- `scripts/`     one Lua script per atomic operation (KEYS/ARGV in each header):
                 `commit.lua` commits any change of a game if its version is unchanged
- `record.py`    the session record: `GameRecord`, its one table of attribute <-> hash
                 field, statuses, seats and moves
- `store.py`     loading records, committing their changes, the sharded due index and
                 browse lists
- `schedule.py`  when the sweeper must next look at a game, how long its keys live
- `seating.py`   seating: create, join, withdraw, play again, close games nobody joined
- `play.py`      the play path: submit, server-made actions, flags and forfeits, the
                 commit of every action, ratings settled as a rated game ends
- `abort.py`     abort before any side's second turn: no result, no rating
- `chat.py`      a game's chat: who may say what, how often; kept with the game
- `takeback.py`  takeback against the bot: the last own action and the bot's answers
                 undone, never into a secret deployment
- `sweeper.py`   the worker for due games: clock flags, abandonment, bot moves and draw
                 answers, pending ratings, open games nobody joined, under short renewed
                 leases (`workers.py`: every worker's loop)
- `bot.py`       the bot seat: its level, its secret Attack-at-Dawn array, its draw answers
- `presence.py`  who watches: present players, "left"/"back" notices, abandonment warnings
- `states.py`    game states as the matchmaker keeps them: the engine's compact form, read
                 as little as it can
- `views.py`     what each viewer may see (hidden "Attack at Dawn" deployments, records)
- `vault.py`     the installation's secret key: bot secrets, hidden data sealed at rest
- `tokens.py`    secret tokens (stored as hashes) and the per-player rate limit
- `limits.py`    limits by caller address and for everyone (token buckets in Redis)
- `invites.py`   invite codes: 80 bits, typeable
- `players.py`   profiles, ratings applied once per game (`ratings.py`: Glicko-2 for two
                 players, openskill's team model for games of more)
- `clocks.py`    base + increment clocks for every side in `GameState.to_act`
- `queue.py`     quick-match queues and the pairing worker
- `watch.py`     live updates: one subscriber connection per Redis primary per replica,
                 shared by all its watchers
- `engine.py`    the engine client (deadlines, retries of UNAVAILABLE)
- `metrics.py`   the objectives' own measures: watcher delivery, bot reply, commits no
                 replica confirmed
"""

# Before any module of this package: structlog loads without rich (see wargame.runtime.logs).
import wargame.runtime.logs  # noqa: F401

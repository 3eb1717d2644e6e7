"""The wargame matchmaker: players, games, quick match, live play, clocks, ratings.

Stateless replicas serving `wargame.v1.Matchmaker` over grpc.aio; every session lives in
Redis and every rule question goes to the engine over gRPC.

Where things are:

- `main.py`      the `wargame-matchmaker serve` command and its flags (`settings.py`)
- `server.py`    one replica: Redis clients, engine client, parts, background workers
- `service.py`   the servicer (one method per RPC); `handling.py` wraps each with request
                 ids, logs, metrics and the error model (`errors.py`)
- `keys.py`      every Redis key, one hash tag per game / player / queue
- `scripts/`     one Lua script per atomic operation (KEYS/ARGV in each header):
                 `commit.lua` commits any change of a game if its version is unchanged
- `store.py`     game records, commits, the due index, browse lists
- `sessions.py`  create, join, submit, endings, timeouts, bot moves, records, ratings
- `views.py`     what each viewer may see (hidden "Attack at Dawn" deployments)
- `tokens.py`    secret tokens (stored as hashes) and the per-player rate limit
- `players.py`   profiles, Glicko-2 ratings applied once per game (`ratings.py`)
- `clocks.py`    base + increment clocks for every side in `GameState.to_act`
- `queue.py`     quick-match queues and the pairing worker
- `sweeper.py`   the worker for due games: clock flags, abandonment, bot turns, ratings
- `watch.py`     live updates: one stream reader per watched game per replica
- `engine.py`    the engine client (deadlines, retries of UNAVAILABLE)
"""

"""The measures of the service level objectives (docs/operations.md) that no RPC's own
metrics give: how long a committed move takes to reach a watcher, how long the bot takes to
answer, and the commits no Redis replica confirmed.

Where things are:
- `WATCH_DELIVERY`: from a commit (Redis's clock, the game's `updated_ms`) to its update
  written to a watcher's stream (`service.py` `_watch`, the live updates);
- `BOT_REPLY`: from the commit that made it the bot's turn to the bot's move committed
  (`sweeper.py` `_bot_move`);
- `UNCONFIRMED`: commits no replica confirmed in time (`store.py` `_unconfirmed`), by what
  became of them: `refused` (answered UNAVAILABLE with a retry hint: the client sends it
  again) or `unreplicated` (the primary has no replica left: it stands as Redis keeps it).
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

SECONDS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

WATCH_DELIVERY = Histogram(
    "wargame_matchmaker_watch_delivery_seconds",
    "From a move's commit to its update written to a watcher's stream",
    buckets=SECONDS,
)
BOT_REPLY = Histogram(
    "wargame_matchmaker_bot_reply_seconds",
    "From the commit that made it the bot's turn to the bot's move committed",
    buckets=SECONDS,
)
UNCONFIRMED = Counter(
    "wargame_matchmaker_unconfirmed_commits_total",
    "Commits no Redis replica confirmed in time, by what became of them",
    ["outcome"],
)

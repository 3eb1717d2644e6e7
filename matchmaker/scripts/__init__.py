"""The matchmaker's Lua scripts, one file per atomic operation, loaded once per client.

Each script documents its KEYS and ARGV in its header comment and touches only the keys
it is given, all of one hash slot (see `matchmaker.keys`), so it runs unchanged on a Redis
Cluster. `Scripts(redis)` registers every file; a call is an EVALSHA that, on NOSCRIPT (a
restarted Redis, a replica promoted since the scripts were loaded), loads the scripts on
every primary and is sent again. Scripts never travel in a pipeline with commands of
other slots: on a cluster such a pipeline would be split over nodes. The scripts:

- games: `load.lua` (a game, its idempotency record, the time), `commit.lua` (any change
  of a game at the expected version), `notice.lua` (a notice that changes no version),
  `chat.lua` (a line of a game's chat, kept with the game and sent to its watchers),
  `open_game.lua` (a player's count of unfinished games), `claim_rematch.lua`
- the sweeper's due index: `claim_due.lua`, `renew_due.lua` (a claim's heartbeat),
  `reschedule_due.lua`
- players: `authenticate.lua` (a token, its rate limit, its keys kept alive),
  `presence.lua` (who is there), `apply_rating.lua` (a rating applied once per game)
- quick match: `queue_join.lua`, `queue_leave.lua`, `queue_pair.lua`, `queue_status.lua`
- `limit.lua`: one token bucket (every rate limit but the per-call one)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from matchmaker.redis_client import Client, Sent, run_and_wait

NAMES = (
    "load",
    "commit",
    "claim_due",
    "renew_due",
    "reschedule_due",
    "authenticate",
    "limit",
    "open_game",
    "presence",
    "notice",
    "chat",
    "claim_rematch",
    "apply_rating",
    "queue_join",
    "queue_status",
    "queue_leave",
    "queue_pair",
)


@dataclass(frozen=True)
class ScriptCall:
    """One call of a script, for `Scripts.run_in_order`."""

    name: str
    keys: Sequence[str]
    args: Sequence[Any]


Command = ScriptCall | Sequence[Any]  # a script call, or a plain command ("ZADD", key, ...)


@cache
def source(name: str) -> str:
    """The text of `scripts/<name>.lua`."""
    return resources.files(__name__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


class Scripts:
    """Every script registered on one Redis client, as awaitable callables."""

    def __init__(self, redis: Client) -> None:
        self.redis = redis
        self._scripts: dict[str, AsyncScript] = {
            name: redis.register_script(source(name)) for name in NAMES
        }

    async def run(self, name: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run script `name` with KEYS `keys` and ARGV `args` (reloaded on NOSCRIPT)."""
        return await self._scripts[name](keys=list(keys), args=list(args))

    async def run_and_wait(
        self, name: str, keys: Sequence[str], args: Sequence[Any], replicas: int, timeout_ms: int
    ) -> Sent:
        """Run script `name`, then wait up to `timeout_ms` for one replica of its primary to
        hold what it wrote (with `replicas` 0, ask the primary for its replicas instead:
        `redis_client.run_and_wait`)."""
        script = self._scripts[name]

        async def send() -> Sent:
            command = ("EVALSHA", script.sha, len(keys), *keys, *args)
            return await run_and_wait(self.redis, keys[0], command, min(1, replicas), timeout_ms)

        sent = await send()
        if isinstance(sent.reply, NoScriptError):  # the script did not run: load it, again
            await self.load()
            sent = await send()
        if isinstance(sent.reply, Exception):
            raise sent.reply
        return sent

    async def run_in_order(self, commands: Sequence[Command]) -> list[Any]:
        """Send commands and script calls in one round trip on one connection, run in this
        order (not atomically: other clients' commands may run between them): their replies.

        Only for keys of one node (a standalone Redis). A script Redis does not know
        (NOSCRIPT) is loaded and that call sent again, with every command after it.
        """
        pipe = self.redis.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*self._wire(command))
        replies: list[Any] = await pipe.execute(raise_on_error=False)
        for index, reply in enumerate(replies):
            if isinstance(reply, NoScriptError):
                await self.load()
                for later in range(index, len(commands)):
                    replies[later] = await self.redis.execute_command(*self._wire(commands[later]))
                break
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

    def _wire(self, command: Command) -> tuple[Any, ...]:
        if isinstance(command, ScriptCall):
            return (
                "EVALSHA",
                self.sha(command.name),
                len(command.keys),
                *command.keys,
                *command.args,
            )
        return tuple(command)

    def sha(self, name: str) -> str:
        """The SHA1 a script is called by."""
        return self._scripts[name].sha

    async def load(self) -> None:
        """Load every script into Redis, on every primary (at start-up, after NOSCRIPT)."""
        for script in self._scripts.values():
            script.sha = await self.redis.script_load(script.script)

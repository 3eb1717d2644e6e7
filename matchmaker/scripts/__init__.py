"""The matchmaker's Lua scripts, one file per atomic operation, loaded once per client.

Each script documents its KEYS and ARGV in its header comment and touches only the keys
it is given, all of one hash slot (see `matchmaker.keys`). `Scripts(redis)` registers
every file; calls go through EVALSHA and fall back to EVAL after a script flush.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

NAMES = (
    "commit",
    "claim_due",
    "reschedule_due",
    "authenticate",
    "limit",
    "open_game",
    "presence",
    "claim_rematch",
    "apply_rating",
    "queue_join",
    "queue_status",
    "queue_leave",
    "queue_pair",
)


@cache
def source(name: str) -> str:
    """The text of `scripts/<name>.lua`."""
    return resources.files(__name__).joinpath(f"{name}.lua").read_text(encoding="utf-8")


class Scripts:
    """Every script registered on one Redis client, as awaitable callables."""

    def __init__(self, redis: Redis) -> None:
        self._scripts: dict[str, AsyncScript] = {
            name: redis.register_script(source(name)) for name in NAMES
        }

    async def run(self, name: str, keys: list[str] | tuple[str, ...], args: list[Any]) -> Any:
        """Run script `name` with KEYS `keys` and ARGV `args`."""
        return await self._scripts[name](keys=list(keys), args=args)

    def queue(
        self, pipe: Pipeline, name: str, keys: list[str] | tuple[str, ...], args: list[Any]
    ) -> None:
        """Queue script `name` in a pipeline as EVALSHA.

        Unlike redis-py's own pipeline scripts this costs no SCRIPT EXISTS round trip; the
        scripts are loaded at start-up (`load`), and a pipeline that meets NOSCRIPT (Redis
        restarted) is run again by `execute` after reloading them.
        """
        pipe.evalsha(self._scripts[name].sha, len(keys), *keys, *args)

    async def load(self, redis: Redis) -> None:
        """Load every script into Redis (at start-up, and after a NOSCRIPT error)."""
        for script in self._scripts.values():
            script.sha = await redis.script_load(script.script)

    async def execute(self, redis: Redis, pipe: Pipeline) -> list[Any]:
        """Execute a pipeline holding queued scripts, reloading them once on NOSCRIPT.

        Every queued command must be safe to run twice (a NOSCRIPT reply means the script
        did not run at all).
        """
        stack = list(pipe.command_stack)
        try:
            return await pipe.execute()
        except NoScriptError:
            await self.load(redis)
            retry = redis.pipeline(transaction=False)
            retry.command_stack = stack
            return await retry.execute()

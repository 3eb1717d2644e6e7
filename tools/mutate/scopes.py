"""What a mutation run mutates and which tests it runs, by folder.

The tests of a scope are its mirror under `tests/` (the nearest existing folder: tests
mirror the code), plus the suites in `ALSO` that exercise a scope from outside.
"""

from __future__ import annotations

from pathlib import Path

# The packages a scope may lie in.
PACKAGES = ("engine_service", "matchmaker", "cli_client")
# The packages `make mutate` covers when no scope is given, each run on its own.
DEFAULT_SCOPES = ("engine_service/rules", "engine_service/convert", "matchmaker")

# Suites outside a scope's mirror folder that test it: the conversion and validation of
# states is the service's edge, so the service's own tests check it too.
ALSO: dict[str, tuple[str, ...]] = {
    "engine_service/convert": (
        "tests/engine_service/test_service.py",
        "tests/engine_service/test_service_reasons.py",
        "tests/engine_service/test_service_properties.py",
        "tests/engine_service/test_position_tags.py",
    ),
}


def normalise(scope: str, root: Path) -> str:
    """The scope as a path relative to `root`, without a trailing slash; ValueError if absent."""
    path = Path(scope.rstrip("/"))
    if path.is_absolute():
        path = path.relative_to(root)
    if not (root / path).exists() or path.parts[0] not in PACKAGES:
        raise ValueError(f"scope {scope!r} is no folder or file of {', '.join(PACKAGES)}")
    return path.as_posix()


def tests_for(scope: str, root: Path) -> list[str]:
    """The test paths that cover `scope`: its mirror folder, then the suites in `ALSO`."""
    mirror = Path("tests") / Path(scope).with_suffix("")
    while not (root / mirror).is_dir():
        mirror = mirror.parent
    found = [mirror.as_posix()]
    for prefix, suites in ALSO.items():
        if scope == prefix or scope.startswith(prefix + "/"):
            found += [suite for suite in suites if (root / suite).exists()]
    return found


def slug(scope: str) -> str:
    """A folder name for a scope ("engine_service/rules/war" -> "engine_service.rules.war")."""
    return scope.removesuffix(".py").replace("/", ".")


def only_mutate(scope: str, root: Path) -> list[str]:
    """mutmut's `only_mutate` patterns for a scope (a folder's files, or the one file)."""
    return [scope] if (root / scope).is_file() else [f"{scope}/*"]


def within(path: str, scope: str) -> bool:
    """Whether a normalised path is the scope or lies inside it."""
    return path == scope or path.startswith(scope + "/")


# The tests that judge each of the matchmaker's Lua scripts (`python -m tools.mutate.lua`):
# those that run the script on a real redis-server, nearest first, and few (a mutant's
# tests run in a pytest of their own).
_QUEUE = ("tests/matchmaker/test_queue.py", "tests/matchmaker/test_queue_stream.py")
_DUE = (
    "tests/matchmaker/test_store.py",
    "tests/matchmaker/test_sweeper.py",
    "tests/matchmaker/test_schedule.py",
)
LUA_TESTS: dict[str, tuple[str, ...]] = {
    "apply_rating": ("tests/matchmaker/test_apply_rating.py", "tests/matchmaker/test_players.py"),
    "authenticate": ("tests/matchmaker/test_tokens.py",),
    "claim_due": _DUE,
    "chat": ("tests/matchmaker/test_chat.py",),
    "claim_rematch": ("tests/matchmaker/test_store.py", "tests/matchmaker/test_rematch.py"),
    "commit": ("tests/matchmaker/test_store.py", "tests/matchmaker/test_play.py"),
    "limit": ("tests/matchmaker/test_limits.py", "tests/matchmaker/test_invite_guesses.py"),
    "load": ("tests/matchmaker/test_store.py",),
    "notice": ("tests/matchmaker/test_store.py",),
    "open_game": ("tests/matchmaker/test_players.py", "tests/matchmaker/test_seating.py"),
    "presence": ("tests/matchmaker/test_presence.py",),
    "queue_join": _QUEUE,
    "queue_leave": _QUEUE,
    "queue_pair": _QUEUE,
    "queue_status": _QUEUE,
    "renew_due": _DUE,
    "reschedule_due": _DUE,
}

"""Game records: options, set-up and actions in one text file that replays to the same state.

Format (PGN-like tags, then one action per line with its acting side)::

    [Game "war"]
    [Option "compulsion=legality"]      one tag per option, every option (defaults change)
    [Setup "mhc1gk1chm/... S FF:ff"]
    [Result "south wins: ..."]          informative only; replay recomputes it

    1. south e3-e5
    2. north f8-f6
    3. north resign

Lines starting with `#` and blank lines are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine_service.rules.base import Ruleset
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game
from wargame.runtime.quoting import quoted

_TAG = re.compile(r'^\[(\w+)\s+"((?:[^"\\]|\\.)*)"\]$', re.ASCII)
_MOVE = re.compile(r"^([0-9]{1,9})\.\s+(\S+)\s+(.+)$")
MAX_RECORD_ACTIONS = 20_000


@dataclass
class Record:
    """A parsed record: the game id, options, set-up text and (side, notation) lines."""

    game: str
    options: dict[str, str] = field(default_factory=dict)
    setup: str | None = None
    result: str = ""
    tags: dict[str, str] = field(default_factory=dict)  # any other tags (players, dates)
    actions: list[tuple[str, str]] = field(default_factory=list)


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def write_record(
    game: str,
    options: Mapping[str, str],
    setup: str,
    actions: Iterable[tuple[str, str]],
    *,
    result: str = "",
    tags: Mapping[str, str] | None = None,
) -> str:
    """The record text for a game's options, set-up and (side, notation) actions."""
    lines = [f'[Game "{_quote(game)}"]']
    lines += [f'[{key} "{_quote(value)}"]' for key, value in (tags or {}).items()]
    lines += [f'[Option "{_quote(name)}={_quote(value)}"]' for name, value in options.items()]
    lines.append(f'[Setup "{_quote(setup)}"]')
    if result:
        lines.append(f'[Result "{_quote(result)}"]')
    lines.append("")
    lines += [f"{ply}. {side} {text}" for ply, (side, text) in enumerate(actions, start=1)]
    return "\n".join(lines) + "\n"


def parse_record(text: str) -> Record:
    """Read a record's tags and action lines; INVALID_RECORD names the bad line."""
    record: Record | None = None
    pending: dict[str, Any] = {"options": {}, "tags": {}, "setup": None, "result": ""}
    actions: list[tuple[str, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        tag = _TAG.match(line)
        if tag:
            key, value = tag.group(1), _unquote(tag.group(2))
            if key == "Game":
                record = Record(game=value)
            elif key == "Option":
                name, sep, option_value = value.partition("=")
                if not sep:
                    raise RuleError(
                        Reason.INVALID_RECORD, f"line {number}: Option needs name=value"
                    )
                pending["options"][name.strip()] = option_value.strip()
            elif key == "Setup":
                pending["setup"] = value
            elif key == "Result":
                pending["result"] = value
            else:
                pending["tags"][key] = value
            continue
        move = _MOVE.match(line)
        if not move:
            raise RuleError(
                Reason.INVALID_RECORD,
                f"line {number}: expected a tag [Key \"value\"] or '<n>. <side> <action>', "
                f"got {quoted(line)}",
            )
        if int(move.group(1)) != len(actions) + 1:
            raise RuleError(
                Reason.INVALID_RECORD,
                f"line {number}: action number {move.group(1)}, expected {len(actions) + 1}",
            )
        actions.append((move.group(2), move.group(3).strip()))
        if len(actions) > MAX_RECORD_ACTIONS:
            raise RuleError(
                Reason.INVALID_RECORD, f"a record holds at most {MAX_RECORD_ACTIONS} actions"
            )
    if record is None:
        raise RuleError(Reason.INVALID_RECORD, 'the record has no [Game "..."] tag')
    record.options = pending["options"]
    record.tags = pending["tags"]
    record.setup = pending["setup"]
    record.result = pending["result"]
    record.actions = actions
    return record


def replay_steps(ruleset: Ruleset[Any, Any], record: Record) -> Iterator[Game[Any]]:
    """Replay a record step by step: the initial game, then the game after each action.

    A caller that stops iterating stops the replay (the engine does when an answer would
    grow too large).
    """
    if record.game != ruleset.id:
        raise RuleError(
            Reason.INVALID_RECORD, f"record is for {quoted(record.game)}, not {quoted(ruleset.id)}"
        )
    options = ruleset.resolve_options(record.options)
    game: Game[Any] = Game(ruleset, ruleset.new_game(options, record.setup))
    yield game
    for ply, (side, text) in enumerate(record.actions, start=1):
        try:
            action = game.parse(text, side)
            game, _ = game.apply(side, action)
        except RuleError as error:
            raise RuleError(
                error.reason, f"action {ply} ({side} {text}): {error.message}", index=ply - 1
            ) from None
        yield game


def replay(ruleset: Ruleset[Any, Any], record: Record) -> tuple[Game[Any], list[Game[Any]]]:
    """Replay a record: the final game and the game after every action (first = initial)."""
    history = list(replay_steps(ruleset, record))
    return history[-1], history


def record_of(
    initial: Game[Any], actions: Iterable[tuple[str, Any]], *, tags: Mapping[str, str] | None = None
) -> str:
    """The record of a game played from `initial` by (side, action) pairs."""
    ruleset = initial.ruleset
    game = initial
    lines = []
    for side, action in actions:
        lines.append((side, game.format(action)))
        game, _ = game.apply(side, action)
    outcome = game.outcome
    return write_record(
        ruleset.id,
        ruleset.options_of(initial.state).as_text(),
        ruleset.setup_text(initial.state),
        lines,
        result=outcome.message if outcome else "",
        tags=tags,
    )

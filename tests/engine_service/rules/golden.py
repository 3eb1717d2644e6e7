"""Golden transcripts: scripted games whose full event log is kept as text, for every game.

Each registered game has a module `tests/engine_service/rules/<game>/golden.py` holding
its `SCRIPTS` (and the `RULESET` they run on), and its stored transcripts in
`tests/engine_service/rules/<game>/golden/<script>.txt`. The conformance suite compares
each script's transcript with its stored file and never writes. After an intended change
of behaviour, regenerate on purpose and review the diff:

    .venv/bin/python -m tests.engine_service.rules.golden --regenerate [GAME ...]

A script line is `<side> <notation>`; a line starting with `!` must be refused, and the
transcript records the refusal's reason, rule section, message and alternatives.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from engine_service.rules import games
from engine_service.rules.base import AnyRuleset, Event
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Script:
    """A scripted game: options, an optional set-up text and the lines played."""

    options: dict[str, str]
    lines: tuple[str, ...]
    setup: str | None = None
    notes: tuple[str, ...] = field(default=())


def scripts_of(game: str) -> ModuleType:
    """The golden module of a game: `SCRIPTS`, `RULESET` and optionally `status`."""
    return importlib.import_module(f"tests.engine_service.rules.{game}.golden")


def _events(events: list[Event]) -> list[str]:
    out: list[str] = []
    for event in events:
        out.append(f"   {event.kind}: {event.text}")
        tally = event.combat
        if tally is not None:
            attackers = ", ".join(f"{c.unit} {c.value}" for c in tally.attackers)
            supports = ", ".join(f"{c.unit} {c.value}" for c in tally.supports) or "-"
            bonuses = ", ".join(f"{s} {v}" for s, v in tally.bonuses) or "-"
            verdict = "eliminated" if tally.eliminated else "holds"
            out.append(
                f"     tally {tally.target}: attack [{attackers}] = {tally.attack_total}; "
                f"defence {tally.defence} + bonuses [{bonuses}] + supports [{supports}] = "
                f"{tally.defence_total}; {verdict}"
            )
    return out


def transcript(
    ruleset: AnyRuleset,
    name: str,
    script: Script,
    status: Callable[[Any], str] | None = None,
) -> str:
    """The transcript of a script: each action, its events, refusals and the end.

    `status` adds what a game's state has besides the side to act (a phase) to the last
    lines.
    """
    options = ruleset.resolve_options(script.options)
    game: Game[Any] = Game(ruleset, ruleset.new_game(options, script.setup))
    lines = [f"# {ruleset.title} golden transcript: {name}"]
    lines += [f"# {note}" for note in script.notes]
    lines.append(f"# options: {options.non_default()}")
    lines.append(f"# setup: {ruleset.setup_text(game.state)}")
    number = 0
    for raw in script.lines:
        refused = raw.startswith("! ")
        side, _sep, text = raw.removeprefix("! ").partition(" ")
        try:
            action = game.parse(text, side)
            after, events = game.apply(side, action)
        except RuleError as error:
            if not refused:
                raise AssertionError(f"{raw!r} was refused: {error!r}") from None
            lines.append(f"!  {side} {text}")
            rule = f" (rule {error.rule})" if error.rule else ""
            lines.append(f"   refused {error.reason}{rule}: {error.message}")
            if error.alternatives:
                lines.append(f"     alternatives: {', '.join(error.alternatives)}")
            continue
        if refused:
            raise AssertionError(f"{raw!r} should have been refused")
        number += 1
        lines.append(f"{number}. {side} {game.format(action)}")
        lines += _events(events)
        game = after
    outcome = game.outcome
    extra = f"; {status(game.state)}" if status is not None else ""
    lines.append(f"== to act: {', '.join(game.to_act()) or 'nobody'}{extra}")
    lines.append(f"== outcome: {outcome.message if outcome else 'none'}")
    lines.append(f"== position: {ruleset.setup_text(game.state)}")
    return "\n".join(lines) + "\n"


def transcripts(game: str) -> Mapping[str, str]:
    """Every script of a game with its fresh transcript."""
    module = scripts_of(game)
    status = getattr(module, "status", None)
    return {
        name: transcript(module.RULESET, name, script, status)
        for name, script in module.SCRIPTS.items()
    }


def path_of(game: str, name: str) -> Path:
    """The stored transcript file of a game's script."""
    return HERE / game / "golden" / f"{name}.txt"


def main() -> None:
    """Rewrite the stored transcripts (only when asked to, with --regenerate)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--regenerate", action="store_true", help="rewrite <game>/golden/*.txt")
    parser.add_argument("games", nargs="*", help="the games to regenerate (default: all)")
    args = parser.parse_args()
    if not args.regenerate:
        parser.error("pass --regenerate to rewrite the golden transcripts on purpose")
    for game in args.games or [entry.id for entry in games()]:
        for name, text in transcripts(game).items():
            path = path_of(game, name)
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")


if __name__ == "__main__":
    main()

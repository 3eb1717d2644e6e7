"""Engine options: every ruling of a specification is one, with its documented default.

A game declares its options as `OptionSpec`s; `resolve_options` turns the text values a
caller gives (plus an optional preset) into a checked, typed `Options` value, refusing an
unknown name or a bad value with a message that names the option and what it allows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engine_service.rules.errors import Reason, RuleError
from wargame.runtime.quoting import quoted

OFF = "off"


class OptionKind(StrEnum):
    """How an option's text value is read."""

    BOOL = "bool"  # "true" / "false"
    ENUM = "enum"  # one of `allowed`
    INT = "int"  # an integer in [minimum, maximum]; "off" means 0 when `zero_is_off`
    LIST = "list"  # comma-separated items, each one of `allowed`
    TEXT = "text"  # free text checked by `check`


@dataclass(frozen=True)
class OptionSpec:
    """One engine option: its name, the values it allows, its default and its ruling."""

    name: str
    kind: OptionKind
    default: str
    description: str
    ruling: str = ""  # where the specification rules it ("A24", "ruling 3", "10.4")
    allowed: tuple[str, ...] = ()  # ENUM and LIST values
    minimum: int | None = None  # INT bounds
    maximum: int | None = None
    zero_is_off: bool = False  # INT: "off" is accepted and means 0
    allowed_text: str = ""  # how to describe the allowed values when `allowed` can't
    check: Callable[[str], str | None] | None = field(default=None, compare=False)

    def describe_allowed(self) -> str:
        """The allowed values as a user reads them in an error message or in ListGames."""
        if self.allowed_text:
            return self.allowed_text
        if self.kind is OptionKind.BOOL:
            return "true, false"
        if self.kind is OptionKind.ENUM:
            return ", ".join(self.allowed)
        if self.kind is OptionKind.LIST:
            return "a comma-separated list of " + ", ".join(self.allowed)
        if self.kind is OptionKind.INT:
            low = "" if self.minimum is None else str(self.minimum)
            high = "" if self.maximum is None else str(self.maximum)
            span = f"an integer {low}..{high}" if low or high else "an integer"
            return f"{OFF} (0) or {span}" if self.zero_is_off else span
        return "text"

    def parse(self, text: str) -> Any:
        """The typed value of `text`, or a RuleError naming this option and its values."""
        value = text.strip()
        problem: str | None = None
        result: Any = value
        if self.kind is OptionKind.BOOL:
            lowered = value.lower()
            if lowered in ("true", "yes", "on", "1"):
                result = True
            elif lowered in ("false", "no", "off", "0"):
                result = False
            else:
                problem = "not a boolean"
        elif self.kind is OptionKind.ENUM:
            if value not in self.allowed:
                problem = "not one of the allowed values"
        elif self.kind is OptionKind.INT:
            if self.zero_is_off and value.lower() == OFF:
                result = 0
            else:
                try:
                    result = int(value)
                except ValueError:
                    problem = "not an integer"
                else:
                    if self.zero_is_off and result == 0:
                        pass
                    elif self.minimum is not None and result < self.minimum:
                        problem = f"below the minimum {self.minimum}"
                    elif self.maximum is not None and result > self.maximum:
                        problem = f"above the maximum {self.maximum}"
        elif self.kind is OptionKind.LIST:
            items = tuple(item.strip() for item in value.split(",") if item.strip())
            bad = [item for item in items if item not in self.allowed]
            if bad or not items:
                problem = f"unknown item {quoted(bad[0])}" if bad else "empty list"
            result = items
        if problem is None and self.check is not None:
            problem = self.check(value)
        if problem is not None:
            raise RuleError(
                Reason.INVALID_OPTION_VALUE,
                f"option {self.name}: {quoted(value)} is {problem}; "
                f"allowed: {self.describe_allowed()}",
                field=f"options.{self.name}",
            )
        return result

    def format(self, value: Any) -> str:
        """The canonical text of a typed value (what `parse` reads back to the same value)."""
        if self.kind is OptionKind.BOOL:
            return "true" if value else "false"
        if self.kind is OptionKind.LIST:
            return ",".join(value)
        if self.kind is OptionKind.INT and self.zero_is_off and value == 0:
            return OFF
        return str(value)


class Options(Mapping[str, Any]):
    """The effective, typed value of every option of one game (immutable, hashable)."""

    __slots__ = ("_hash", "_specs", "_text", "_values")

    def __init__(self, specs: Mapping[str, OptionSpec], values: Mapping[str, Any]) -> None:
        self._specs = specs
        self._values = dict(values)
        self._hash: int | None = None  # states hash their options in every table lookup
        self._text: dict[str, str] | None = None  # every response carries them

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(sorted(self.as_text().items())))
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Options) and self._values == other._values

    def __repr__(self) -> str:
        return f"Options({self.as_text()!r})"

    def as_text(self) -> dict[str, str]:
        """Every option as canonical text, in declaration order (a fresh dict)."""
        if self._text is None:
            self._text = {name: self._specs[name].format(v) for name, v in self._values.items()}
        return dict(self._text)

    def non_default(self) -> dict[str, str]:
        """Only the options that differ from their default, as canonical text."""
        return {
            name: text
            for name, text in self.as_text().items()
            if self._specs[name].parse(self._specs[name].default) != self._values[name]
        }

    def replace(self, **changes: Any) -> Options:
        """A copy with some typed values changed (for tests and presets)."""
        return Options(self._specs, {**self._values, **changes})


def resolve_options(
    specs: tuple[OptionSpec, ...],
    given: Mapping[str, str],
    *,
    presets: Mapping[str, Mapping[str, str]] | None = None,
    preset: str | None = None,
) -> Options:
    """Defaults, overlaid by the preset, overlaid by `given`; every value checked."""
    by_name = {spec.name: spec for spec in specs}
    texts = {spec.name: spec.default for spec in specs}
    if preset:
        if not presets or preset not in presets:
            names = ", ".join(sorted(presets or {})) or "none"
            raise RuleError(
                Reason.UNKNOWN_PRESET,
                f"unknown preset {quoted(preset)}; presets: {names}",
                field="preset",
            )
        texts.update(presets[preset])
    for name, text in given.items():
        if name not in by_name:
            raise RuleError(
                Reason.UNKNOWN_OPTION,
                f"unknown option {quoted(name)}; options: {', '.join(by_name)}",
                field=f"options.{name}",
            )
        texts[name] = text
    return Options(by_name, {name: by_name[name].parse(text) for name, text in texts.items()})

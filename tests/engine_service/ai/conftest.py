"""The AI suites' report: the strength and level tallies, printed at the end of the run."""

from __future__ import annotations

import pytest

TITLES = {
    "strength": "AI strength against a random player",
    "levels": "Each level against the one below",
}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print every tally property the tests recorded (also from xdist workers)."""
    for prop, title in TITLES.items():
        lines = []
        for outcome in ("passed", "failed"):
            for report in terminalreporter.stats.get(outcome, []):
                for name, value in getattr(report, "user_properties", ()):
                    if name == prop and getattr(report, "when", "call") == "call":
                        lines.append(f"{value} [{outcome}]")
        if lines:
            terminalreporter.write_sep("=", title)
            for line in sorted(lines):
                terminalreporter.write_line(line)

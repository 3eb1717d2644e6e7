"""The AI suites' report: the strength tallies, printed at the end of the run."""

from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print every `strength` property the tests recorded (also from xdist workers)."""
    lines = []
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            for name, value in getattr(report, "user_properties", ()):
                if name == "strength" and getattr(report, "when", "call") == "call":
                    lines.append(f"{value} [{outcome}]")
    if lines:
        terminalreporter.write_sep("=", "AI strength against a random player")
        for line in sorted(lines):
            terminalreporter.write_line(line)

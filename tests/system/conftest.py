"""The terminal-client fixtures of every system test, from `cli_support`: `stack` (the
module's own engine and matchmaker), `clients` (clients started by the test, killed after
it and checked for tracebacks) and `launch` (a client started on the stack)."""

from __future__ import annotations

from tests.system.cli_support import clients, launch, stack

__all__ = ["clients", "launch", "stack"]

"""`wargame`: play the three war games from a terminal.

    wargame games [GAME]                 the rulesets and their options
    wargame rules GAME                   the board and a rules summary
    wargame play GAME [--vs bot|human | --queue | --invite | --join CODE] [--level 1-5] [...]
    wargame watch GAME_ID                follow a game live
    wargame resume [GAME_ID]             come back to a game (the last one by default)
    wargame record GAME_ID [-o FILE]     the replayable record
    wargame replay FILE                  step through a record
    wargame leaderboard GAME             the best-rated players

During a game a terminal shows a full-screen view; `--plain` keeps the scrolling log.
Servers: `--engine` / $WARGAME_ENGINE and `--matchmaker` / $WARGAME_MATCHMAKER, by default
the local stack that `make run` starts; `--tls` / $WARGAME_TLS (or a `grpcs://` address)
reaches them over TLS. The player's identity (a guest registered on first
use) is kept in $WARGAME_HOME or $XDG_CONFIG_HOME/wargame. Every error is one line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

# Only the command line here: `--help`, `--version` and argument errors load no gRPC,
# protobuf or rich. What a command needs is imported once it is known (`subcommands`).
from cli_client.arguments import build_parser
from wargame.runtime.config import no_grpc_fork_handlers, quiet_grpc_core

# Before gRPC loads: its own logging quiet (errors reach the user as one line from here),
# and its fork handlers off.
quiet_grpc_core()
no_grpc_fork_handlers()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `wargame` command; never shows a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    from cli_client import subcommands
    from cli_client.errors import ClientError

    try:
        return subcommands.run(args, parser)
    except ClientError as error:
        subcommands.fail(error.message)
        return 1
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as error:  # a bug: still one line, never a traceback
        if os.environ.get("WARGAME_DEBUG"):
            raise
        subcommands.fail(
            f"unexpected {type(error).__name__}: {error} (set WARGAME_DEBUG=1 for details)"
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())

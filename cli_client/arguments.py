"""The `wargame` command line: its subcommands, their arguments and flags, with `--help`.

`COMMANDS` lists the subcommands (their help and positional argument), `build_parser` adds
each one's own options and the shared ones (`_common`); `main.py` carries out what was asked.
Flags that also come from the environment (`WARGAME_ENGINE`, `WARGAME_TLS`, ...) are declared
with `Parser.flag`.
"""

from __future__ import annotations

import argparse
import difflib
import re
from dataclasses import dataclass
from typing import NamedTuple, NoReturn

from cli_client.defaults import (
    BOT_LEVELS,
    DEFAULT_ENGINE,
    DEFAULT_MATCHMAKER,
    SERVER_PORT,
    server_address,
    split_target,
)
from wargame.runtime.config import Parser, host_port

PROG = "wargame"
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


def level_number(text: str) -> int:
    """A playing strength, 1 to 5 (0: chosen for you)."""
    number = int(text)
    if not 0 <= number <= BOT_LEVELS:
        raise argparse.ArgumentTypeError(f"a level is 1 to {BOT_LEVELS}, not {text}")
    return number


class CommandParser(Parser):
    """A `Parser` that says which word was meant when a choice is mistyped ("did you mean
    `play`?" for `wargame plya`)."""

    def error(self, message: str) -> NoReturn:
        """The one-line error, with the nearest choice when one is close."""
        found = _INVALID_CHOICE.search(message)
        if found:
            choices = re.findall(r"'([^']*)'", found.group(2))
            close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.6)
            if close:
                message = f"no such choice {found.group(1)!r}: did you mean `{close[0]}`?"
        super().error(message)


def version() -> str:
    """The installed client's version."""
    import importlib.metadata  # only for --version: it costs more than the whole parser

    try:
        return importlib.metadata.version("wargame")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """`--version`: the version looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(
            option_strings, dest, default=argparse.SUPPRESS, nargs=0,
            help="show program's version number and exit",
        )  # fmt: skip

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def address(text: str) -> str:
    """A HOST:PORT argument (grpcs://HOST:PORT for TLS, grpc://HOST:PORT for plaintext)."""
    try:
        host_port(split_target(text)[0])
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def server(text: str) -> str:
    """--server's HOST[:PORT]: both services there (port 443 when not given); "" for none."""
    return address(server_address(text)) if text else ""


def _game_options(parser: Parser, what: str) -> None:
    """`--option NAME=VALUE` (repeatable; `what` says what it changes) and `--preset`."""
    parser.add_argument(
        "--option", "-o", action="append", default=[], metavar="NAME=VALUE", help=what
    )
    parser.add_argument("--preset", default="", help="a preset of options")


def _common(
    parser: Parser, *, engine: bool = True, matchmaker: bool = True, game: bool = False
) -> None:
    group = parser.add_argument_group("connection and display")
    parser.flag(
        "--server",
        env="SERVER",
        default="",
        type=server,
        metavar="HOST[:PORT]",
        help=f"a server reached at one address for both services (port {SERVER_PORT} unless "
        "given), over TLS beyond this machine; instead of --engine and --matchmaker",
    )
    if engine:
        parser.flag(
            "--engine",
            env="ENGINE",
            default=DEFAULT_ENGINE,
            type=address,
            metavar="HOST:PORT",
            help="the rules engine's address (grpcs://HOST:PORT: over TLS)",
        )
    if matchmaker:
        parser.flag(
            "--matchmaker",
            env="MATCHMAKER",
            default=DEFAULT_MATCHMAKER,
            type=address,
            metavar="HOST:PORT",
            help="the matchmaker's address (grpcs://HOST:PORT: over TLS)",
        )
        parser.flag(
            "--home",
            env="HOME",
            default="",
            metavar="DIR",
            help="folder of the identity file (default: $XDG_CONFIG_HOME/wargame)",
        )
        parser.flag(
            "--name", env="NAME", default="", help="display name when registering as a guest"
        )
    parser.flag(
        "--tls",
        env="TLS",
        action="store_true",
        help="reach the servers over TLS, trusting the system's CA certificates (the "
        "default for any server beyond this machine)",
    )
    parser.flag(
        "--plaintext",
        env="PLAINTEXT",
        action="store_true",
        help="reach the servers in plaintext, even beyond this machine (a private network, a "
        "tunnel); a grpcs:// address still asks for TLS",
    )
    parser.flag(
        "--tls-ca-file",
        env="TLS_CA_FILE",
        default="",
        metavar="FILE",
        help="PEM CA certificates to trust instead, for a server with a private CA (implies --tls)",
    )
    parser.flag(
        "--tls-server-name",
        env="TLS_SERVER_NAME",
        default="",
        metavar="NAME",
        help="the name the servers' certificates carry, when not the host connected to "
        "(implies --tls)",
    )
    group.add_argument(
        "--ascii", action="store_true", help="plain ASCII, no colours (also when not a terminal)"
    )
    group.add_argument(
        "--no-color", "--no-colour", dest="no_colour", action="store_true", help="no colours"
    )
    if game:
        parser.flag(
            "--hint-level",
            env="HINT_LEVEL",
            type=level_number,
            default=0,
            metavar="1-5",
            help="the strength `hint` plays at (default: one level above the bot you face, "
            "else the strongest)",
        )
        group.add_argument(
            "--no-bell",
            dest="no_bell",
            action="store_true",
            help="never ring the terminal bell (it rings once when your time runs low)",
        )
        group.add_argument(
            "--plain",
            "--line",
            dest="plain",
            action="store_true",
            help="during a game, print each change below the last instead of the full-screen "
            "view (for screen readers and scripts; also with --ascii or when not a terminal)",
        )


class Subject(NamedTuple):
    """A subcommand's positional argument: its name, its help, whether it may be left out."""

    name: str
    help: str
    optional: bool = False


@dataclass(frozen=True)
class Command:
    """A subcommand as `wargame --help` lists it: its word, a line of help, its description,
    its positional argument and what `_common` gives it (the services it reaches; `game`:
    the flags of a game on screen)."""

    name: str
    help: str
    description: str
    subject: Subject
    engine: bool = True
    matchmaker: bool = True
    game: bool = False


_GAME = Subject("game", "war, battle or napoleonic")
_ONE_GAME = Subject("game", "only this game", optional=True)
_GAME_ID = Subject("game_id", "the game's id")

# In the order `wargame --help` lists them.
COMMANDS = (
    Command(
        "games",
        "the rulesets and their options",
        "List the rulesets the engine serves, with their options.",
        _ONE_GAME,
        matchmaker=False,
    ),
    Command(
        "rules",
        "the board and a rules summary of a game",
        "Draw a game's board and print its pieces, rules and notation.",
        _GAME,
        matchmaker=False,
    ),
    Command(
        "play",
        "play a game (against the bot by default)",
        "Start a game and play it: against the bot, an open game for anyone, a private game by "
        "invite code, a game joined by its code, or a quick match from the queue.",
        Subject("game", "war, battle or napoleonic (not needed with --join)", optional=True),
        game=True,
    ),
    Command(
        "watch", "follow a game live", "Follow a game live as a spectator.", _GAME_ID, game=True
    ),
    Command(
        "resume",
        "come back to a game",
        "Come back to a game you play in (by default the last one).",
        Subject("game_id", "the game's id (default: your last game)", optional=True),
        game=True,
    ),
    Command(
        "position",
        "print a game's position text",
        "Print the current position of a game as its position text (the whole state in one "
        "line; docs/positions.md). `wargame rules GAME --position TEXT` draws it and "
        "`wargame play GAME --position TEXT` starts a game from it.",
        _GAME_ID,
    ),
    Command(
        "record",
        "print a game's replayable record",
        "Print the record of a game (replay it with `wargame replay FILE`).",
        _GAME_ID,
        engine=False,
    ),
    Command(
        "replay",
        "step through a game record",
        "Step through a record position by position.",
        Subject("file", "a record file (from `wargame record ID -o FILE`)"),
        matchmaker=False,
    ),
    Command(
        "lobby",
        "public games waiting for players, with their free seats",
        "List the public games waiting for players: each seat, who holds it, and how to take "
        "a free one.",
        _ONE_GAME,
    ),
    Command(
        "leaderboard",
        "the best-rated players of a game",
        "The best-rated players of a game.",
        _GAME,
        engine=False,
    ),
)


def build_parser() -> Parser:
    """The command-line parser."""
    parser = CommandParser(
        prog=PROG,
        description="Play The Game of War (1910), the Game of Battle (1866) and Napoleonic "
        "Chess (2016) against people or the bot.",
        epilog="Start the local servers with `make run`; `make play` also starts a game.",
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    parsers = {
        command.name: commands.add_parser(
            command.name, help=command.help, description=command.description
        )
        for command in COMMANDS
    }
    for command in COMMANDS:
        subject = command.subject
        if subject.optional:
            parsers[command.name].add_argument(
                subject.name, nargs="?", default="", help=subject.help
            )
        else:
            parsers[command.name].add_argument(subject.name, help=subject.help)

    rules = parsers["rules"]
    _game_options(rules, "an option that changes the board (Napoleonic scenario, size)")
    rules.add_argument(
        "--position",
        default="",
        metavar="TEXT",
        help="draw this position (a position text, as `wargame position` prints) instead of "
        "the initial one",
    )

    play = parsers["play"]
    how = play.add_mutually_exclusive_group()
    how.add_argument(
        "--vs",
        choices=("bot", "human"),
        default=None,
        help="the opponent: the bot, or any human (an open public game)",
    )
    how.add_argument(
        "--queue", action="store_true", help="quick match: wait for an opponent of similar rating"
    )
    how.add_argument(
        "--invite", action="store_true", help="a private game: print a code for a friend to join"
    )
    how.add_argument(
        "--join",
        metavar="CODE",
        default="",
        help="join a game by its invite code, or a public open game by its id (`wargame lobby`)",
    )
    _game_options(play, "a game option (repeatable; see `wargame games`)")
    play.add_argument(
        "--side", "--seat", dest="side", default="", help="the side to play (default: any free one)"
    )
    play.add_argument(
        "--scenario",
        default="",
        metavar="NAME",
        help="a Napoleonic Chess scenario, some for 3 or more players (`wargame games napoleonic`)",
    )
    play.add_argument(
        "--bot-seats",
        default="",
        metavar="SIDES",
        help="with --invite or --vs human: the sides the bot plays, comma-separated, each "
        "with its own level if you like (blue:3,green:5; a side without one plays at "
        "--level); the other seats are for people",
    )
    play.add_argument(
        "--clock",
        default="",
        metavar="MIN+SEC",
        help="time control, e.g. 10+5 (10 minutes, 5 seconds a move); untimed by default",
    )
    start = play.add_mutually_exclusive_group()
    start.add_argument(
        "--setup",
        default="",
        metavar="TEXT",
        help="start from this position (the game's set-up text)",
    )
    start.add_argument(
        "--position",
        default="",
        metavar="TEXT",
        help="start from this position text (as `wargame position` prints it), with its options",
    )
    play.add_argument(
        "--rated",
        action="store_true",
        help="a rated game against a person (games against the bot are never rated)",
    )
    play.add_argument(
        "--level",
        type=int,
        choices=range(1, BOT_LEVELS + 1),
        default=0,
        metavar="1-5",
        help="the bot's strength, from 1 (a beginner can beat it) to 5 (the strongest); "
        "default: the level you last asked for, else 1",
    )
    play.add_argument(
        "--bot-time",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the bot's thinking time per action (default: the matchmaker's, 1 s)",
    )

    parsers["record"].add_argument(
        "--output", "-o", default="", metavar="FILE", help="write it to FILE"
    )
    shown = parsers["replay"].add_mutually_exclusive_group()
    shown.add_argument(
        "--all", dest="everything", action="store_true", help="print every position, no stepping"
    )
    shown.add_argument("--final", action="store_true", help="print only the final position")
    parsers["leaderboard"].add_argument("--limit", type=int, default=20, help="how many players")

    for command in COMMANDS:
        _common(
            parsers[command.name],
            engine=command.engine,
            matchmaker=command.matchmaker,
            game=command.game,
        )
    return parser

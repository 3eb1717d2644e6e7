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

# Quiet gRPC's own logging before it loads: errors reach the user as one line from here.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

import argparse
import sys
from collections.abc import Sequence

from cli_client import info, lobby
from cli_client.connection import (
    DEFAULT_ENGINE,
    DEFAULT_MATCHMAKER,
    Addresses,
    Connection,
    split_target,
)
from cli_client.errors import ClientError
from cli_client.identity import Store, ensure_identity, home_directory
from cli_client.render import Theme
from cli_client.replay import replay
from cli_client.session import BOT_LEVELS
from cli_client.terminal import ASCII_FALLBACK, Terminal
from wargame.runtime.config import Parser, host_port

PROG = "wargame"


def address(text: str) -> str:
    """A HOST:PORT argument (grpcs://HOST:PORT for TLS, grpc://HOST:PORT for plaintext)."""
    try:
        host_port(split_target(text)[0])
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _common(
    parser: Parser, *, engine: bool = True, matchmaker: bool = True, game: bool = False
) -> None:
    group = parser.add_argument_group("connection and display")
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
        help="reach the servers over TLS, trusting the system's CA certificates (use it for "
        "any server beyond this machine)",
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
        group.add_argument(
            "--plain",
            "--line",
            dest="plain",
            action="store_true",
            help="during a game, print each change below the last instead of the full-screen "
            "view (for screen readers and scripts; also with --ascii or when not a terminal)",
        )


def build_parser() -> Parser:
    """The command-line parser."""
    parser = Parser(
        prog=PROG,
        description="Play The Game of War (1910), the Game of Battle (1866) and Napoleonic "
        "Chess (2016) against people or the bot.",
        epilog="Start the local servers with `make run`; `make play` also starts a game.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    games = commands.add_parser(
        "games",
        help="the rulesets and their options",
        description="List the rulesets the engine serves, with their options.",
    )
    games.add_argument("game", nargs="?", default="", help="only this game")
    _common(games, matchmaker=False)

    rules = commands.add_parser(
        "rules",
        help="the board and a rules summary of a game",
        description="Draw a game's board and print its pieces, rules and notation.",
    )
    rules.add_argument("game", help="war, battle or napoleonic")
    rules.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an option that changes the board (Napoleonic scenario, size)",
    )
    rules.add_argument("--preset", default="", help="a preset of options")
    rules.add_argument(
        "--position",
        default="",
        metavar="TEXT",
        help="draw this position (a position text, as `wargame position` prints) instead of "
        "the initial one",
    )
    _common(rules, matchmaker=False)

    play = commands.add_parser(
        "play",
        help="play a game (against the bot by default)",
        description="Start a game and play it: against the bot, an open game for anyone, a private "
        "game by invite code, a game joined by its code, or a quick match from the queue.",
    )
    play.add_argument(
        "game", nargs="?", default="", help="war, battle or napoleonic (not needed with --join)"
    )
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
    play.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a game option (repeatable; see `wargame games`)",
    )
    play.add_argument("--preset", default="", help="a preset of options")
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
        help="with --invite or --vs human: the sides the bot plays (comma-separated); the "
        "other seats are for people",
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
        "default: the matchmaker's (5 unless its operator chose another)",
    )
    play.add_argument(
        "--bot-time",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the bot's thinking time per action (default: the matchmaker's, 1 s)",
    )
    _common(play, game=True)

    watch = commands.add_parser(
        "watch", help="follow a game live", description="Follow a game live as a spectator."
    )
    watch.add_argument("game_id", help="the game's id")
    _common(watch, game=True)

    resume = commands.add_parser(
        "resume",
        help="come back to a game",
        description="Come back to a game you play in (by default the last one).",
    )
    resume.add_argument(
        "game_id", nargs="?", default="", help="the game's id (default: your last game)"
    )
    _common(resume, game=True)

    position = commands.add_parser(
        "position",
        help="print a game's position text",
        description="Print the current position of a game as its position text (the whole "
        "state in one line; docs/positions.md). `wargame rules GAME --position TEXT` draws it "
        "and `wargame play GAME --position TEXT` starts a game from it.",
    )
    position.add_argument("game_id", help="the game's id")
    _common(position)

    record = commands.add_parser(
        "record",
        help="print a game's replayable record",
        description="Print the record of a game (replay it with `wargame replay FILE`).",
    )
    record.add_argument("game_id", help="the game's id")
    record.add_argument("--output", "-o", default="", metavar="FILE", help="write it to FILE")
    _common(record, engine=False)

    replay_parser = commands.add_parser(
        "replay",
        help="step through a game record",
        description="Step through a record position by position.",
    )
    replay_parser.add_argument("file", help="a record file (from `wargame record ID -o FILE`)")
    shown = replay_parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--all", dest="everything", action="store_true", help="print every position, no stepping"
    )
    shown.add_argument("--final", action="store_true", help="print only the final position")
    _common(replay_parser, matchmaker=False)

    lobby_parser = commands.add_parser(
        "lobby",
        help="public games waiting for players, with their free seats",
        description="List the public games waiting for players: each seat, who holds it, and "
        "how to take a free one.",
    )
    lobby_parser.add_argument("game", nargs="?", default="", help="only this game")
    _common(lobby_parser)

    leaders = commands.add_parser(
        "leaderboard",
        help="the best-rated players of a game",
        description="The best-rated players of a game.",
    )
    leaders.add_argument("game", help="war, battle or napoleonic")
    leaders.add_argument("--limit", type=int, default=20, help="how many players")
    _common(leaders, engine=False)
    return parser


def _theme(args: argparse.Namespace) -> Theme:
    return Theme.detect(sys.stdout, ascii_only=args.ascii, colour=False if args.no_colour else None)


def _connection(args: argparse.Namespace) -> Connection:
    return Connection(
        Addresses.of(
            getattr(args, "engine", DEFAULT_ENGINE),
            getattr(args, "matchmaker", DEFAULT_MATCHMAKER),
            tls=args.tls,
            ca_file=args.tls_ca_file,
            server_name=args.tls_server_name,
        )
    )


def _identity(args: argparse.Namespace, connection: Connection, terminal: Terminal) -> Store:
    store = Store(home_directory(args.home))
    identity, new = ensure_identity(store, connection, args.name)
    if new:
        terminal.console.print(
            f"Registered as {identity.display_name} (a guest); your token is kept in {store.path}."
        )
    return store


def run(args: argparse.Namespace, parser: Parser) -> int:
    """Carry out a parsed command."""
    for name in ("game", "side"):  # game and side ids are lower case; people may not type them so
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, getattr(args, name).lower())
    theme = _theme(args)
    terminal = Terminal(theme)
    console = terminal.console
    with _connection(args) as connection:
        command = args.command
        if command == "games":
            return info.games(connection, console, theme, args.game)
        if command == "rules":
            options = _options(args, parser)
            if args.position and (options or args.preset):
                parser.error("a --position carries its options: give no --option or --preset")
            return info.rules(
                connection, console, theme, args.game, options=options, preset=args.preset,
                position=args.position,
            )  # fmt: skip
        if command == "replay":
            return replay(
                connection, terminal, args.file, everything=args.everything, final=args.final
            )
        if command == "leaderboard":
            return info.leaderboard(connection, console, theme, args.game, args.limit)
        if command == "lobby":
            return info.lobby(connection, console, theme, args.game)
        request = _game_request(args, parser) if command == "play" else None
        if request is not None and args.position:
            if args.option or args.preset:
                parser.error("a --position carries its options: give no --option or --preset")
            request = lobby.from_position(connection, request, args.position)
        store = _identity(args, connection, terminal)
        if command == "record":
            return info.record(connection, console, args.game_id, args.output)
        if command == "position":
            return info.position(connection, console, args.game_id)
        if command == "watch":
            return lobby.watch(connection, store, terminal, args.game_id, plain=args.plain)
        if command == "resume":
            game_id = args.game_id or store.last_game(connection.addresses.matchmaker)
            if not game_id:
                raise ClientError("no game to resume: give its id (`wargame resume GAME_ID`)")
            return lobby.resume(connection, store, terminal, game_id, plain=args.plain)
        if request is not None:
            mode = _mode(args)
            return lobby.start(
                connection, store, terminal, request, mode=mode, join_code=args.join,
                plain=args.plain,
            )  # fmt: skip
    parser.print_help()
    return 2


def _options(args: argparse.Namespace, parser: Parser) -> dict[str, str]:
    try:
        options = lobby.parse_options(args.option)
    except ValueError as error:
        parser.error(str(error))
    scenario = getattr(args, "scenario", "")
    if scenario:
        if options.get("scenario", scenario) != scenario:
            parser.error("--scenario and --option scenario=... disagree: give one")
        options["scenario"] = scenario.lower()
    return options


def _game_request(args: argparse.Namespace, parser: Parser) -> lobby.GameRequest:
    if not args.game and not args.join:
        parser.error("play needs a GAME (war, battle or napoleonic), or --join CODE")
    against_bot = _mode(args) == "bot"
    if args.rated and against_bot:
        parser.error(
            "games against the bot are never rated: leave out --rated, or play a person "
            "(--vs human, --invite or --queue)"
        )
    if not against_bot and not args.bot_seats and (args.level or args.bot_time):
        flag = "--level" if args.level else "--bot-time"
        parser.error(f"{flag} is for games against the bot (--vs bot, the default)")
    if args.bot_time < 0:
        parser.error("--bot-time must not be negative")
    bot_sides = tuple(side.strip().lower() for side in args.bot_seats.split(",") if side.strip())
    if bot_sides and _mode(args) not in ("invite", "human"):
        parser.error("--bot-seats is for games with people: add --invite or --vs human")
    if bot_sides and args.rated:
        parser.error("games with a bot seat are never rated: leave out --rated")
    clock = None
    if args.clock:
        try:
            clock = lobby.parse_clock(args.clock)
        except ValueError as error:
            parser.error(str(error))
    return lobby.GameRequest(
        game=args.game, options=_options(args, parser), preset=args.preset, side=args.side,
        clock=clock, setup=args.setup, rated=args.rated, bot_time=args.bot_time,
        level=args.level, bot_sides=bot_sides,
    )  # fmt: skip


def _mode(args: argparse.Namespace) -> str:
    if args.join:
        return "join"
    if args.queue:
        return "queue"
    if args.invite:
        return "invite"
    return str(args.vs or "bot")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `wargame` command; never shows a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return run(args, parser)
    except ClientError as error:
        _fail(error.message)
        return 1
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as error:  # a bug: still one line, never a traceback
        if os.environ.get("WARGAME_DEBUG"):
            raise
        _fail(f"unexpected {type(error).__name__}: {error} (set WARGAME_DEBUG=1 for details)")
        return 1


def _fail(message: str) -> None:
    sys.stdout.flush()
    line = f"{PROG}: error: {message}"
    try:
        line.encode(sys.stderr.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        line = line.translate(ASCII_FALLBACK).encode("ascii", "replace").decode("ascii")
    print(line, file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())

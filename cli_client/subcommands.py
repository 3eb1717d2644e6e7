"""What each `wargame` subcommand does, once the command line is read (`main.py`).

Loaded only when a command runs: it imports gRPC, protobuf and rich at module level, so
`wargame --help`, `--version` and argument errors (`main.py`) never do.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from cli_client import info, lobby
from cli_client.arguments import PROG
from cli_client.connection import Addresses, Connection
from cli_client.defaults import DEFAULT_ENGINE, DEFAULT_MATCHMAKER
from cli_client.errors import ClientError
from cli_client.identity import Store, ensure_identity, home_directory
from cli_client.render import Theme
from cli_client.replay import replay
from cli_client.terminal import ASCII_FALLBACK, Terminal
from wargame.runtime.config import Parser


def _theme(args: argparse.Namespace) -> Theme:
    return Theme.detect(sys.stdout, ascii_only=args.ascii, colour=False if args.no_colour else None)


def _connection(args: argparse.Namespace) -> Connection:
    engine = args.server or getattr(args, "engine", DEFAULT_ENGINE)
    matchmaker = args.server or getattr(args, "matchmaker", DEFAULT_MATCHMAKER)
    return Connection(
        Addresses.of(
            engine,
            matchmaker,
            tls=args.tls,
            ca_file=args.tls_ca_file,
            server_name=args.tls_server_name,
            plaintext=args.plaintext,
        )
    )


def _identity(args: argparse.Namespace, connection: Connection, terminal: Terminal) -> Store:
    store = Store(home_directory(args.home))
    ask = None
    if sys.stdin.isatty() and sys.stdout.isatty():

        def ask(default: str) -> str:
            return terminal.console.input(
                f"Your name for other players (Enter: {default}; `--name` sets it): "
            )

    identity, new = ensure_identity(store, connection, args.name, ask)
    if new:
        terminal.console.print(
            f"Registered as {identity.display_name} (a guest); your token is kept in {store.path}.",
            soft_wrap=False,  # by words
        )
    return store


def run(args: argparse.Namespace, parser: Parser) -> int:
    """Carry out a parsed command."""
    for name in ("game", "side"):  # game and side ids are lower case; people may not type them so
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, getattr(args, name).lower())
    theme = _theme(args)
    terminal = Terminal(theme)
    terminal.bell = not getattr(args, "no_bell", False)
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
        if request is not None and _mode(args) in ("bot", "invite", "human"):
            request = _bot_level(request, args.level, store)
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
            return lobby.resume(
                connection, store, terminal, game_id, plain=args.plain, hint_level=args.hint_level
            )
        if request is not None:
            mode = _mode(args)
            return lobby.start(
                connection, store, terminal, request, mode=mode, join_code=args.join,
                plain=args.plain, hint_level=args.hint_level,
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
    try:
        bot_sides, bot_levels = lobby.parse_bot_seats(args.bot_seats)
    except ValueError as error:
        parser.error(f"--bot-seats: {error}")
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
        level=args.level, bot_sides=bot_sides, bot_levels=bot_levels,
    )  # fmt: skip


def _bot_level(request: lobby.GameRequest, level: int, store: Store) -> lobby.GameRequest:
    """The bot's level: the one asked for (remembered for the next game), else the one last
    asked for, else the easiest."""
    if level:
        store.set_bot_level(level)
    else:
        level = store.bot_level() or 1
    return dataclasses.replace(request, level=level)


def _mode(args: argparse.Namespace) -> str:
    if args.join:
        return "join"
    if args.queue:
        return "queue"
    if args.invite:
        return "invite"
    return str(args.vs or "bot")


def fail(message: str) -> None:
    """The one line `wargame` ends with on an error, in what the terminal can show."""
    sys.stdout.flush()
    line = f"{PROG}: error: {message}"
    try:
        line.encode(sys.stderr.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        line = line.translate(ASCII_FALLBACK).encode("ascii", "replace").decode("ascii")
    print(line, file=sys.stderr, flush=True)

"""Commands that only show things: the games, a game's rules, a record, the leaderboard."""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.text import Text

from cli_client.connection import Connection
from cli_client.errors import ClientError
from cli_client.render import Theme, bottom_side, draw_board
from cli_client.render.board import Scene, Symbols
from cli_client.render.panel import legend
from cli_client.session import state_scene
from wargame.v1 import board_pb2, matchmaker_pb2

WRAP = 96


def _bold(text: str, theme: Theme) -> Text:
    return Text(text, style=theme.style("bold"))


def _dim(text: str, theme: Theme) -> Text:
    return Text(text, style=theme.style("dim"))


def _wrapped(text: str, indent: str = "", width: int = WRAP) -> list[str]:
    out: list[str] = []
    for paragraph in text.split("\n\n"):
        joined = " ".join(paragraph.split())
        if joined:
            out += textwrap.wrap(joined, width, initial_indent=indent, subsequent_indent=indent)
        out.append("")
    while out and not out[-1]:
        out.pop()
    return out


def games(connection: Connection, console: Console, theme: Theme, only: str = "") -> int:
    """Print the rulesets in short; with a game's id, that game with all its options."""
    every = list(connection.list_games().games)
    if not only:
        return overview(every, console, theme)
    listed = [game for game in every if game.id == only.lower()]
    if not listed:
        raise ClientError(
            f"no game {only!r}; the games are: {', '.join(game.id for game in every)}"
        )
    info = listed[0]
    console.print(_bold(f"{info.id}  {info.title}", theme))
    console.print(Text("  sides: " + ", ".join(f"{side.id} ({side.name})" for side in info.sides)))
    if info.presets:
        console.print(Text("  presets: " + ", ".join(preset.name for preset in info.presets)))
    console.print(Text(f"  play: wargame play {info.id} --vs bot   rules: wargame rules {info.id}"))
    if info.options:
        console.print(Text("  options (--option name=value):"))
        for option in info.options:
            default = option.default_value or '""'
            console.print(Text(f"    {option.name} = {default}"))
            allowed = option.allowed_text or ", ".join(option.allowed)
            if allowed:
                for row in textwrap.wrap(f"values: {allowed}", WRAP - 8):
                    console.print(_dim(f"        {row}", theme))
            for row in textwrap.wrap(option.description, WRAP - 8):
                console.print(_dim(f"        {row}", theme))
    if info.scenarios:
        console.print(Text("  scenarios (--scenario name), each with its players by alliance:"))
        for scenario in info.scenarios:
            console.print(Text(f"    {scenario.name}: {alliances(scenario.sides)}"))
            for row in textwrap.wrap(scenario.title, WRAP - 8):
                console.print(_dim(f"        {row}", theme))
    return 0


def alliances(sides: Sequence[board_pb2.SideInfo]) -> str:
    """Players grouped by alliance: "red, blue (south) against black, green (north)"."""
    groups: dict[str, list[str]] = {}
    for side in sides:
        groups.setdefault(side.alliance or side.id, []).append(side.id)
    return " against ".join(
        ", ".join(members) + ("" if members == [name] else f" ({name})")
        for name, members in groups.items()
    )


def overview(every: list[board_pb2.GameInfo], console: Console, theme: Theme) -> int:
    """One short paragraph per game: its title, sides and how to start."""
    width = max((len(info.id) for info in every), default=0)
    for info in every:
        console.print(_bold(f"{info.id.ljust(width)}  {info.title}", theme))
        sides = " against ".join(side.name.partition(" (")[0] for side in info.sides)
        options = f"{len(info.options)} options" if info.options else "no options"
        console.print(Text(f"{' ' * width}  {sides} · {options}: `wargame games {info.id}`"))
    console.print(Text(""))
    console.print(
        Text(
            "Play the bot: `wargame play GAME` (`--level 1` is its easiest); the board and "
            "rules: `wargame rules GAME`."
        )
    )
    return 0


def piece_lines(scene: Scene, theme: Theme) -> list[Text]:
    """One line per piece kind: its symbols for each side, letter, name, what it does."""
    symbols = Symbols(scene, theme)
    sides = [side.id for side in scene.board.sides]
    lines = []
    for kind in scene.board.piece_kinds:
        glyphs = "".join(symbols.glyph(kind.id, side) for side in sides)
        letter = symbols.letter(kind.id, symbols.upper)
        text = Text(f"  {glyphs} {letter} " if glyphs else f"  {letter} ")
        text.append(kind.name, style=theme.style("bold"))
        if kind.summary:
            text.append(f" — {kind.summary}" if theme.unicode else f" - {kind.summary}")
        lines.append(text)
    return lines


def rules(
    connection: Connection,
    console: Console,
    theme: Theme,
    game: str,
    *,
    options: Mapping[str, str],
    preset: str,
    position: str = "",
) -> int:
    """Print a game's board (its initial position, or the position text given), pieces,
    rules summary and notation."""
    if position:
        state = connection.new_game_from(game, position).state
        reply = connection.describe_game(game, state.options)
    else:
        reply = connection.describe_game(game, options, preset)
        state = reply.initial_state
    board = reply.board
    # A position text writes the first side in capitals (Game of War section 2), wherever
    # its men stand; a game's initial position, the side at the bottom.
    upper = board.sides[0].id if position and board.sides else bottom_side(board, state)
    scene = state_scene(board, state, upper_side=upper)
    console.print(_bold(board.title or reply.info.title, theme))
    console.print(Text(""))
    for line in draw_board(scene, theme):
        console.print(line)
    for line in legend(scene, theme):
        console.print(line)
    console.print(Text(""))
    console.print(_bold("Sides", theme))
    for side in board.sides:
        console.print(Text(f"  {side.id}: {side.name}"))
    console.print(_bold("Pieces", theme))
    for line in piece_lines(dataclasses.replace(scene, pieces=[]), theme):  # every kind
        console.print(line)
    console.print(Text(""))
    console.print(_bold("Rules", theme))
    for row in _wrapped(board.summary or reply.info.summary, "  "):
        console.print(Text(row))
    if board.notation:
        console.print(Text(""))
        console.print(_bold("Notation", theme))
        for row in _wrapped(board.notation, "  "):
            console.print(Text(row))
    return 0


def position(connection: Connection, console: Console, game_id: str) -> int:
    """Print a game's current position text, as this player may see it."""
    view = connection.get_game(game_id)
    if not view.HasField("state"):
        raise ClientError(f"game {game_id} has not started: it has no position yet")
    console.print(Text(connection.position_of(view.state)), soft_wrap=True)
    return 0


def record(connection: Connection, console: Console, game_id: str, output: str = "") -> int:
    """Print (or write to a file) a game's replayable record."""
    text = connection.get_record(game_id)
    if output:
        try:
            with open(output, "w") as out:
                out.write(text if text.endswith("\n") else text + "\n")
        except OSError as error:
            raise ClientError(f"cannot write {output}: {error.strerror or error}") from None
        console.print(Text(f"wrote the record of game {game_id} to {output}"))
        return 0
    console.print(Text(text.rstrip("\n")))
    return 0


PROVISIONAL_RD = 110.0  # a rating less sure than this is shown as provisional
LEADERBOARD_LEGEND = (
    ("rating", "Glicko-2 estimate of playing strength; everyone starts at 1500"),
    (
        "RD",
        "rating deviation, how sure the rating is: 350 at the start, less with each game; "
        "the true strength lies within 2 RD of the rating 19 times out of 20",
    ),
    ("games", "rated games finished"),
    ("?", f"provisional: RD above {PROVISIONAL_RD:.0f}, too few games yet to trust the rating"),
)


def leaderboard(
    connection: Connection, console: Console, theme: Theme, game: str, limit: int
) -> int:
    """Print the best-rated players of a game, with what the columns mean."""
    entries = connection.leaderboard(game, limit).entries
    if not entries:
        console.print(Text(f"No rated {game} games yet (only games against people are rated)."))
        return 0
    console.print(_bold(f"The best-rated players of {game}", theme))
    console.print(_bold(f"{'rank':>4}  {'player':<32} {'rating':>7} {'RD':>5} {'games':>6}", theme))
    provisional = False
    for entry in entries:
        name = entry.player.display_name or entry.player.id
        rating = entry.rating
        mark = "?" if rating.deviation > PROVISIONAL_RD else " "
        provisional |= mark == "?"
        numbers = f"{rating.rating:>6.0f}{mark} {rating.deviation:>5.0f} {rating.games:>6}"
        console.print(Text(f"{entry.rank:>4}  {name[:32]:<32} {numbers}"))
    console.print(Text(""))
    legend = LEADERBOARD_LEGEND if provisional else LEADERBOARD_LEGEND[:-1]
    width = max(len(column) for column, _ in legend)
    for column, meaning in legend:
        rows = textwrap.wrap(meaning, WRAP - width - 2) or [""]
        console.print(_dim(f"{column.ljust(width)}  {rows[0]}", theme))
        for row in rows[1:]:
            console.print(_dim(f"{' ' * width}  {row}", theme))
    return 0


def lobby(connection: Connection, console: Console, theme: Theme, game: str = "") -> int:
    """Print the public games waiting for players: every seat, who holds it, the free ones,
    and the command that takes one."""
    games = list(connection.browse_open(game.lower()).games)
    if not games:
        console.print(
            Text(
                "No public game is waiting for players. Start one: wargame play GAME "
                "--vs human (add --scenario NAME for Napoleonic Chess battles)."
            )
        )
        return 0
    for view in games:
        free = [seat.side for seat in view.seats if not seat.HasField("player")]
        console.print(
            _bold(f"{view.id}  {view.game}, {len(view.seats)} seats, {len(free)} free", theme)
        )
        for seat in view.seats:
            if seat.HasField("player"):
                bot = seat.kind == matchmaker_pb2.SEAT_KIND_BOT or seat.player.bot
                holder = "bot" if bot else seat.player.display_name or seat.player.id
            else:
                holder = "kept for a rematch" if seat.reserved_for else "free"
            console.print(Text(f"  {seat.side:<10} {holder}"))
        if free:
            console.print(
                _dim(f"  take a seat: wargame play --join {view.id} --seat {free[0]}", theme)
            )
    return 0

"""Getting into a game: against the bot, an open or invited game, a join, or the queue."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import grpc
from rich.text import Text

from cli_client.connection import Connection, duration, iterate
from cli_client.display import choose
from cli_client.errors import ClientError
from cli_client.identity import Store
from cli_client.play import Play
from cli_client.prompt import welcome
from cli_client.render import panel
from cli_client.session import GameSession
from cli_client.terminal import Terminal
from wargame.v1 import game_pb2, matchmaker_pb2

MOVES_SHOWN = 12


@dataclass(frozen=True)
class Clock:
    """A time control: base minutes plus an increment in seconds."""

    base_seconds: float
    increment_seconds: float

    def proto(self) -> matchmaker_pb2.TimeControl:
        """As a TimeControl message."""
        return matchmaker_pb2.TimeControl(
            base=duration(self.base_seconds), increment=duration(self.increment_seconds)
        )


def parse_clock(text: str) -> Clock:
    """`10+5` (10 minutes, 5 seconds a move), `5` or `0.5+1`; ValueError if malformed."""
    base, _, increment = text.strip().partition("+")
    try:
        minutes = float(base)
        seconds = float(increment) if increment else 0.0
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time control like 10+5 (minutes + seconds a move)"
        ) from None
    if minutes <= 0 or seconds < 0:
        raise ValueError(f"{text!r}: the base time must be positive and the increment not negative")
    return Clock(minutes * 60, seconds)


def parse_options(pairs: list[str]) -> dict[str, str]:
    """`k=v` items into a dict; ValueError naming a malformed item."""
    options: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"option {pair!r} is not name=value")
        options[name.strip()] = value.strip()
    return options


def parse_bot_seats(text: str) -> tuple[tuple[str, ...], dict[str, int]]:
    """`--bot-seats` (`blue:3,green` ...) into the bot's sides and the levels given for some
    of them (the others play at `--level`); ValueError naming a malformed item."""
    sides: list[str] = []
    levels: dict[str, int] = {}
    for item in text.split(","):
        side, sep, level = (part.strip() for part in item.partition(":"))
        if not side and not sep:
            continue
        side = side.lower()
        if not side or (sep and level not in ("1", "2", "3", "4", "5")):
            raise ValueError(
                f"bot seat {item.strip()!r} is not SIDE or SIDE:LEVEL (a level 1 to 5)"
            )
        sides.append(side)
        if sep:
            levels[side] = int(level)
    return tuple(sides), levels


def from_position(connection: Connection, request: GameRequest, position: str) -> GameRequest:
    """The request to start a game from a position text: its options and its set-up."""
    made = connection.new_game_from(request.game, position)
    if made.state.HasField("outcome"):
        raise ClientError(f"that position is a finished game: {made.state.outcome.message}")
    return replace(request, options=dict(made.state.options), setup=made.setup)


@dataclass
class GameRequest:
    """What `wargame play` asks for."""

    game: str
    options: Mapping[str, str] = field(default_factory=dict)
    preset: str = ""
    side: str = ""
    clock: Clock | None = None
    setup: str = ""
    rated: bool = False
    bot_time: float = 0.0
    level: int = 0  # the bot's level; 0 for the matchmaker's default
    bot_sides: tuple[str, ...] = ()  # the bot's seats in a game with people
    bot_levels: Mapping[str, int] = field(default_factory=dict)  # their own levels, by side

    def create(
        self,
        opponent: matchmaker_pb2.SeatKind.ValueType,
        visibility: matchmaker_pb2.Visibility.ValueType,
    ) -> matchmaker_pb2.CreateGameRequest:
        """The CreateGame request (the bot's time and level only in a game against it)."""
        request = matchmaker_pb2.CreateGameRequest(
            game=self.game, options=dict(self.options), preset=self.preset, side=self.side,
            visibility=visibility, opponent=opponent, rated=self.rated, setup=self.setup,
        )  # fmt: skip
        if self.clock is not None:
            request.time_control.CopyFrom(self.clock.proto())
        request.bot_sides.extend(self.bot_sides)
        if opponent == matchmaker_pb2.SEAT_KIND_BOT or self.bot_sides:
            request.bot_level = self.level
            request.bot_levels.update(self.bot_levels)
            if self.bot_time > 0:
                request.bot_time.CopyFrom(duration(self.bot_time))
        return request

    def queue(self) -> matchmaker_pb2.JoinQueueRequest:
        """The JoinQueue request."""
        request = matchmaker_pb2.JoinQueueRequest(
            game=self.game, options=dict(self.options), preset=self.preset, rated=self.rated
        )
        if self.clock is not None:
            request.time_control.CopyFrom(self.clock.proto())
        return request


def is_game_id(text: str) -> bool:
    """Whether `--join` names a game by its id ("g" and 14 letters or digits) rather than
    by an invite code (16 letters and digits, in dashed groups)."""
    text = text.strip().lower()
    return len(text) == 15 and text.startswith("g") and text.isalnum()


def open_session(
    connection: Connection, view: matchmaker_pb2.GameView, *, with_history: bool = False
) -> GameSession:
    """A GameSession for a view: the board from the engine under the game's options."""
    state = view.state
    description = connection.describe_game(view.game or state.game, dict(state.options))
    initial: game_pb2.GameState | None = None
    if with_history:
        try:
            initial = connection.replay_record(connection.get_record(view.id)).initial_state
        except ClientError:
            initial = None
    return GameSession(view, description, view.your_side, initial)


def wait_in_queue(
    connection: Connection, terminal: Terminal, request: matchmaker_pb2.JoinQueueRequest
) -> matchmaker_pb2.GameView:
    """Wait in the quick-match queue with a spinner; the matched game's view."""
    call = connection.queue(request)
    ticket = ""
    try:
        with terminal.session():
            terminal.set_prompt(
                "(Ctrl-C leaves the queue)", waiting=f"looking for an opponent for {request.game}"
            )
            stream = iterate(call)
            for status in stream:
                ticket = status.ticket or ticket
                if status.HasField("game") and status.game.id:
                    terminal.set_prompt("")
                    terminal.hide_prompt()
                    matched: matchmaker_pb2.GameView = status.game
                    return matched
                terminal.set_prompt(
                    f"({status.waiting} waiting, place {status.position}; Ctrl-C leaves)",
                    waiting=f"looking for an opponent for {request.game}",
                )
    except grpc.RpcError as error:
        raise connection.matchmaker_error(error) from None
    except KeyboardInterrupt:
        call.cancel()
        if ticket:
            with contextlib.suppress(ClientError):
                connection.leave_queue(ticket)
        terminal.console.print(f"You left the queue for {request.game}: no game was started.")
        raise
    raise ClientError(
        "the queue closed without a match (the matchmaker may be restarting); try again"
    )


def spin_while(terminal: Terminal, label: str, seconds: float) -> None:
    """Turn the spinner for a while (used between retries)."""
    end = time.monotonic() + seconds
    terminal.set_prompt("", waiting=label)
    while time.monotonic() < end:
        terminal.tick()
        time.sleep(0.1)


def start(
    connection: Connection,
    store: Store,
    terminal: Terminal,
    request: GameRequest,
    *,
    mode: str,
    join_code: str = "",
    plain: bool = False,
    hint_level: int = 0,
) -> int:
    """Create, join or queue for a game, then play it (hints at `hint_level`, 0: the coach's
    own choice)."""
    invite = ""
    if mode == "join" and is_game_id(join_code):
        view = connection.join_game(game_id=join_code.strip().lower(), side=request.side)
    elif mode == "join":
        view = connection.join_game(invite_code=join_code, side=request.side)
    elif mode == "queue":
        view = wait_in_queue(connection, terminal, request.queue())
    elif mode == "bot":
        view = connection.create_game(
            request.create(matchmaker_pb2.SEAT_KIND_BOT, matchmaker_pb2.VISIBILITY_PUBLIC)
        ).game
    else:
        visibility = (
            matchmaker_pb2.VISIBILITY_PRIVATE
            if mode == "invite"
            else matchmaker_pb2.VISIBILITY_PUBLIC
        )
        reply = connection.create_game(request.create(matchmaker_pb2.SEAT_KIND_HUMAN, visibility))
        view, invite = reply.game, reply.invite_code
    store.set_last_game(connection.addresses.matchmaker, view.id)
    session = open_session(connection, view)
    greeting = Text(welcome(session))
    terminal.console.print(greeting, soft_wrap=False)  # by words
    display = choose(terminal, plain=plain)
    display.remember(greeting)
    return Play(
        connection,
        store,
        session,
        display,
        invite_code=invite,
        open_game=opener(connection),
        hint_level=hint_level,
    ).run()


def opener(connection: Connection) -> Callable[[matchmaker_pb2.GameView], GameSession]:
    """How the game loop opens the next game (a rematch)."""
    return lambda view: open_session(connection, view)


def resume(
    connection: Connection,
    store: Store,
    terminal: Terminal,
    game_id: str,
    *,
    plain: bool = False,
    hint_level: int = 0,
) -> int:
    """Come back to a game: the board as it stands, then live again from its version."""
    view = connection.get_game(game_id)
    session = open_session(connection, view, with_history=True)
    if not view.your_side:
        raise ClientError(
            f"you have no seat in game {game_id}; `wargame watch {game_id}` to watch it"
        )
    store.set_last_game(connection.addresses.matchmaker, view.id)
    if session.finished:
        for line in panel.screen(session, terminal.theme, terminal.console.width):
            terminal.console.print(line)
        outcome = panel.outcome_line(session, terminal.theme).plain.removeprefix("Game over: ")
        raise ClientError(f"the game is over: {outcome}", reason="GAME_OVER")
    lines = [Text(f"Resuming game {view.id}: you play {session.name(view.your_side)}.")]
    if view.moves:
        shown = list(view.moves)[-MOVES_SHOWN:]
        earlier = len(view.moves) - len(shown)
        more = f"… ({earlier} earlier) " if earlier else ""
        lines.append(Text(f"Moves so far: {more}{', '.join(shown)}"))
    for line in lines:
        terminal.console.print(line, soft_wrap=False)
    display = choose(terminal, plain=plain)
    display.remember(*lines)
    return Play(
        connection, store, session, display, open_game=opener(connection), hint_level=hint_level
    ).run()


def watch(
    connection: Connection, store: Store, terminal: Terminal, game_id: str, *, plain: bool = False
) -> int:
    """Follow a game as a spectator."""
    view = connection.get_game(game_id)
    session = open_session(connection, view, with_history=True)
    session.your_side = ""
    if session.finished:
        for line in panel.screen(session, terminal.theme, terminal.console.width):
            terminal.console.print(line)
        terminal.console.print(panel.outcome_line(session, terminal.theme))
        return 0
    return Play(connection, store, session, choose(terminal, plain=plain), spectator=True).run()

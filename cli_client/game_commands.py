"""Carrying out what the player types during a game: `help`, `board`, `flip`, `moves`,
`hint`, `resign`, `abort`, `undo`, `say`, `mute`, `draw`, `accept`/`decline`, and actions
in the game's notation.

`commands.py` reads a typed line into a `Command`; `GameCommands.handle` does it, for the
loop (`play.Play`) and after the game. A game's own words go to its hooks first
(`hooks.py`); what is not a client word is sent as an action (`submit.py` keeps the retry
policy), and a refusal comes back as one helpful line (`notation.py`, `wording.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rich.text import Text

from cli_client import commands, notation, updates, wording
from cli_client.commands import Command
from cli_client.defaults import BOT_LEVELS
from cli_client.errors import ClientError, is_rules_reason
from cli_client.hooks import GameHooks
from cli_client.render import Theme
from cli_client.render.panel import piece_legend
from cli_client.session import GameSession
from cli_client.submit import Submitter
from wargame.v1 import engine_pb2, game_pb2, matchmaker_pb2

HINT_SECONDS = 1.0
YES = frozenset({"y", "yes"})


def spoken(text: str) -> str:
    """A notation as the hint line says it: `#C` in words."""
    if text.endswith(wording.CITADEL_HELD):
        return text.removesuffix(wording.CITADEL_HELD) + " (the Citadel holds: a win)"
    return text


def hint_line(reply: engine_pb2.SuggestActionResponse, level: int = 0) -> str:
    """The engine's suggestion in one line: the coach's level, the action, its verdict, the
    line that follows."""
    line = " ".join(spoken(text) for text in reply.line[1:6])
    follow = f"; then {line}" if line else ""
    verdict = reply.summary or f"{reply.evaluation:+.1f} material"
    coach = f" (level {level})" if level else ""
    return f"Hint{coach}: {spoken(reply.notation)} ({verdict}{follow})"


def coach_level(session: GameSession, chosen: int = 0) -> int:
    """The level the hint plays at: the one the player chose (`--hint-level`), else one
    above the strongest bot the player faces (a coach that helps beat it without being
    the bot itself), else the strongest."""
    if chosen:
        return chosen
    bots = [seat.level or BOT_LEVELS for seat in session.seats() if seat.bot and not seat.you]
    return min(BOT_LEVELS, max(bots) + 1) if bots else BOT_LEVELS


def in_columns(notations: Sequence[str], width: int) -> list[str]:
    """Notations in as many columns as fit in `width`, each row indented by two spaces."""
    column = max(len(text) for text in notations) + 2
    columns = max(1, (width - 2) // column)
    rows = []
    for start in range(0, len(notations), columns):
        row = "".join(text.ljust(column) for text in notations[start : start + columns])
        rows.append("  " + row.rstrip())
    return rows


def not_yours(session: GameSession, cell: str, theme: Theme) -> str:
    """ "e8 is North's Troop, not yours; yours are South's: capitals K" when `cell` holds a
    man of another alliance than the player's ("" otherwise)."""
    piece = next((p for p in session.state.pieces if p.cell.lower() == cell.lower()), None)
    if piece is None or not session.your_side:
        return ""
    alliance = session.alliances()
    if alliance.get(piece.side, piece.side) == alliance.get(session.your_side):
        return ""
    kind = next((k.name for k in session.board.piece_kinds if k.id == piece.kind), piece.kind)
    mine = session.name(session.your_side)
    written = piece_legend(session.scene(), theme)[-1].replace(" - ", " · ").split(" · ")
    how = next((part.partition(": ")[2] for part in written if mine in part.split(":")[0]), "")
    yours = f"; yours are {mine}'s: {how}" if how else ""
    return f"{cell} is {session.name(piece.side)}'s {kind}, not yours{yours}"


@dataclass(frozen=True)
class Question:
    """A yes/no question the next typed line answers (no unless "y" or "yes")."""

    prompt: str
    then: Callable[[], None]


class Loop(updates.Loop, Protocol):
    """What the typed commands may use of the loop (`play.Play`): what the updates may,
    and the screen, the game's hooks, its cells, the submitter and the updates."""

    theme: Theme
    updates: updates.Updates
    hooks: GameHooks
    cells: notation.Cells
    submitter: Submitter
    hint_level: int

    @property
    def options(self) -> list[str]:
        """The game's option names."""

    def show_board(self) -> None:
        """Draw the game as it stands."""


class GameCommands:
    """The typed commands of one game, carried out through the loop (`play.Play`)."""

    def __init__(self, play: Loop) -> None:
        self.play = play
        self.question: Question | None = None
        self._legal: tuple[int, list[str]] = (-1, [])

    @property
    def session(self) -> GameSession:
        """The game."""
        return self.play.session

    def answer_question(self, line: str) -> bool:
        """Whether the line answered a question asked (carried out on yes)."""
        question, self.question = self.question, None
        if question is None:
            return False
        if line.strip().lower() in YES:
            question.then()
        else:
            self.play.note("Not done: play on.")
        return True

    def legal_notations(self) -> list[str]:
        """The notations of the legal actions now (asked once per version)."""
        version, notations = self._legal
        if version != self.session.version:
            if self.session.finished or not self.session.started:
                notations = []
            else:
                reply = self.play.connection.legal_actions(self.session.state)
                notations = [action.notation for action in reply.actions]
            self._legal = (self.session.version, notations)
        return notations

    def candidates(self) -> list[str]:
        """What the input line may complete to: the client's words and the legal actions."""
        play = self.play
        words = commands.words(deploying=play.hooks.deploying, spectator=play.spectator)
        if play.spectator or not self.session.my_turn:
            return words
        try:
            return words + self.legal_notations()
        except ClientError:
            return words

    def handle(self, command: Command) -> bool:
        """Carry out one typed command; True when the player leaves."""
        play = self.play
        if command.name == "quit":
            return True
        viewing: dict[str, Callable[[str], None]] = {
            "empty": lambda _: None,
            "help": lambda _: self._help(),
            "board": lambda _: play.show_board(),
            "flip": lambda _: self._flip(),
            "moves": self.list_moves,
            "mute": lambda _: self._mute(True),
            "unmute": lambda _: self._mute(False),
        }
        playing: dict[str, Callable[[str], None]] = {
            "hint": lambda _: self.hint(),
            "resign": self._resign,
            "abort": lambda _: self._abort(),
            "undo": lambda _: self._undo(),
            "say": self._say,
            "draw": lambda _: self._draw(),
            "accept": lambda _: self._answer(True),
            "decline": lambda _: self._answer(False),
            "rematch": lambda _: self._not_yet(),
        }
        if command.name in viewing:
            viewing[command.name](command.argument)
        elif play.spectator:
            raise ClientError("you are watching this game; `quit` stops watching")
        elif not play.hooks.handle(command):
            playing.get(command.name, self.act)(command.argument)
        return False

    def _help(self) -> None:
        play = self.play
        lines = commands.help_lines(self.session.board.notation, play.hooks.deploying)
        guidance = play.hooks.guidance()
        if guidance:
            lines += ["", "Now: " + guidance]
        play.display.page("help", *[Text(line) for line in lines])

    def _flip(self) -> None:
        self.session.turns = (self.session.turns + 2) % 4
        self.play.show_board()

    def _resign(self, argument: str) -> None:
        """Resign (withdraw a game nobody joined), once the player says yes (`resign!`: now)."""
        session = self.session
        self.require_ongoing()

        def resign() -> None:
            self._apply_view(self.play.connection.resign(session.game_id))

        if argument == "!":
            resign()
            return
        if session.started and session.multiplayer:
            self.question = Question("Surrender and leave the game (allies play on)?", resign)
        elif session.started:
            self.question = Question("Resign and lose the game?", resign)
        else:
            self.question = Question("Withdraw the game nobody has joined?", resign)
        self.play.note(f"{self.question.prompt} Type y to confirm; anything else plays on.")

    def _abort(self) -> None:
        """Abort the game (no result, no rating); the matchmaker says when it is too late."""
        self.require_ongoing()
        self._apply_view(self.play.connection.abort(self.session.game_id))

    def _undo(self) -> None:
        """Take back the player's last action and the bot's answers (the matchmaker says
        when it may not)."""
        self.require_ongoing()
        session = self.session
        reply = self.play.connection.take_back(session.game_id, session.version)
        self.play.note("You take back: " + ", ".join(reply.taken_back))
        self._apply_view(reply.game)

    def _say(self, text: str) -> None:
        """Say a line to the game's chat (shown at once; the stream's copy is not again)."""
        if not text.strip():
            raise ClientError("say what? `say good luck` sends a line to the game's chat")
        self.play.updates.show_chat(self.play.connection.send_chat(self.session.game_id, text))

    def _mute(self, muted: bool) -> None:
        """Hide (or show again) the chat lines that arrive."""
        self.play.chat_muted = muted
        self.play.note("chat muted: `unmute` shows it again" if muted else "chat shown again")

    def _not_yet(self) -> None:
        raise ClientError("`rematch` is for after the game; this one is still being played")

    def _draw(self) -> None:
        offer = self.session.state.draw_offer
        if offer and offer != self.session.your_side:
            self._answer(True)
        else:
            self._apply_view(self.play.connection.offer_draw(self.session.game_id))

    def _answer(self, accept: bool) -> None:
        self._apply_view(self.play.connection.answer_draw(self.session.game_id, accept))
        if not accept:
            self.play.note("You decline the draw.")

    def _apply_view(self, view: matchmaker_pb2.GameView) -> None:
        if self.session.update(view):
            self.play.changed()

    def require_ongoing(self) -> None:
        """Refuse what only a game in play allows, once the game is over."""
        if self.session.finished:
            raise ClientError("the game is over", reason="GAME_OVER")

    def check_turn(self) -> None:
        """Refuse to act when it is not the player's turn (or no game runs)."""
        session = self.session
        self.require_ongoing()
        if not session.started:
            raise ClientError("the game has not started: waiting for an opponent")
        if not session.my_turn:
            acting = ", ".join(session.seat_name(side) for side in session.to_act) or "nobody"
            raise ClientError(f"not your turn: {acting} to act", reason="NOT_YOUR_TURN")

    def act(self, text: str) -> None:
        """Send an action typed in the game's notation; a refusal becomes one helpful line."""
        play = self.play
        self.check_turn()
        try:
            self.submit([game_pb2.Action(side=self.session.your_side, notation=text)])
            return
        except ClientError as error:
            if not is_rules_reason(error.reason):
                raise
            refused = error
        words = commands.words(deploying=play.hooks.deploying)
        letters = {kind.id: kind.letter.upper() for kind in self.session.board.piece_kinds}
        standing = {p.cell.lower(): letters.get(p.kind, "") for p in self.session.state.pieces}
        reading = notation.read(text, self.legal_notations(), play.cells, words, standing)
        if reading.play:
            arrow = "→" if play.theme.unicode else "->"
            play.note(f"{text.strip()} {arrow} {reading.play} (the only legal action there)")
            self.submit([game_pb2.Action(side=self.session.your_side, notation=reading.play)])
            return
        if reading.instead:
            refused, text = self.judge_instead(refused, text, reading.instead)
        raise ClientError(self.explain(refused, text, reading), reason=refused.reason)

    def judge_instead(
        self, refused: ClientError, text: str, instead: str
    ) -> tuple[ClientError, str]:
        """A chess letter (`Nb1-c3`) judged as the game's own (`Hb1-c3`): the engine's
        refusal of that, saying so, or the first refusal when that reads no better."""
        try:
            self.play.connection.parse_action(self.session.state, instead, self.session.your_side)
        except ClientError as error:
            if not is_rules_reason(error.reason) or error.reason == refused.reason:
                return refused, text
            prefix, _, _ = error.message.partition(": ")
            rest = wording.refusal(error.message, instead, self.play.options)  # sides: explain
            rest = rest.removeprefix(f"{prefix}: ")
            letter = self.play.cells.letters[instead[:1].upper()]
            said = f"{prefix}: {text.strip()} is {instead} here ({instead[:1]} is the {letter}): "
            return ClientError(said + rest, reason=error.reason, details=error.details), instead
        return refused, text

    def explain(self, refused: ClientError, text: str, reading: notation.Reading) -> str:
        """A refusal in one line: the rule in words, and a suggestion or where to look."""
        play = self.play
        prefix, _, _ = refused.message.partition(": ")
        if reading.replaces:
            return f"{prefix}: {reading.hint}"
        route = play.cells.of(text)
        whose = not_yours(self.session, route[0], play.theme) if len(route) > 1 else ""
        if whose:  # the opponent's man moved: whose it is, and which are the player's
            return f"{prefix}: {whose}"
        message = wording.refusal(refused.message, text.strip(), play.options, self.session.sides)
        dash = " — " if play.theme.unicode else " - "
        if reading.hint:
            return message + dash + reading.hint
        if refused.details.get("alternatives"):
            route = play.cells.of(text)
            where = f"moves {route[0]}" if route else "moves"
            return message + dash + f"`{where}` lists what is legal"
        return message

    def submit(self, actions: list[game_pb2.Action]) -> None:
        """Submit actions (see `submit.Submitter`) and show what they did."""
        play = self.play
        try:
            reply = play.submitter.submit(actions)
        except ClientError as error:
            if error.reason == "VERSION_CONFLICT":
                play.show_board()
            raise
        if reply.game.version > self.session.version:
            # The prompt was for the position before: none until the loop sets the next one.
            play.display.prompt(Text("› " if play.theme.unicode else "> "))
            play.show_actions(self.session.your_side, list(reply.notations), list(reply.events))
            self.session.note_events(reply.events)
            self.session.update(reply.game)
            play.changed()

    def list_moves(self, cell: str) -> None:
        """List the legal actions (for one cell if given)."""
        play = self.play
        session = self.session
        self.require_ongoing()
        reply = play.connection.legal_actions(session.state, cell.strip())
        notations = [action.notation for action in reply.actions]
        where = f" from {cell.strip()}" if cell.strip() else ""
        acting = ", ".join(session.name(side) for side in reply.to_act) or "nobody"
        if not notations:
            play.note(f"No legal actions{where} for {acting}.")
            return
        head = Text(f"{len(notations)} legal action(s){where} for {acting}:")
        head.stylize(play.theme.style("cyan"))
        rows = [Text(row) for row in in_columns(notations, play.display.width)]
        play.display.page("moves", head, *rows)

    def hint(self) -> None:
        """Ask the engine for a suggestion."""
        play = self.play
        self.check_turn()
        level = coach_level(self.session, play.hint_level)
        with play.display.busy("thinking about a hint"):
            reply = play.connection.suggest(
                self.session.state, self.session.your_side, HINT_SECONDS, level=level
            )
        play.note(hint_line(reply, level))

"""The client's model of one game: the matchmaker's view of it plus what to draw it with.

Everything here is read from messages (GameView, DescribeGame, events); nothing is decided
by rules. Captured pieces are counted, not computed: a baseline of the pieces each side has
had on the board (raised when pieces are placed or deployed) minus the pieces on it now.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cli_client import details
from cli_client.render.board import Scene, bottom_side, turns_for
from wargame.v1 import board_pb2, engine_pb2, game_pb2, matchmaker_pb2

_MOVE_EVENTS = frozenset(
    {
        game_pb2.EVENT_KIND_MOVED,
        game_pb2.EVENT_KIND_CAPTURED,
        game_pb2.EVENT_KIND_PLACED,
        game_pb2.EVENT_KIND_HUFFED,
        game_pb2.EVENT_KIND_CITADEL_ENTERED,
        game_pb2.EVENT_KIND_ADVANCED,
        game_pb2.EVENT_KIND_ELIMINATED,
        game_pb2.EVENT_KIND_COMBAT_RESOLVED,
        game_pb2.EVENT_KIND_ATTACK_DECLARED,
        game_pb2.EVENT_KIND_SUPPORT_ALLOCATED,
    }
)


LOW_TIME_SECONDS = 20.0  # a running clock under this (or under LOW_TIME_SHARE of its
LOW_TIME_SHARE = 0.1  # starting time) is low: it turns colour and the bell rings once


@dataclass(frozen=True)
class SeatInfo:
    """Who plays a side."""

    side: str
    name: str
    bot: bool
    you: bool
    level: int = 0  # the bot's level (1-5), 0 for a person or when not known
    away: bool = False  # a person seated who has left (none of its clients watches)
    rating_before: matchmaker_pb2.Rating | None = None  # a settled rated game's ratings
    rating_after: matchmaker_pb2.Rating | None = None
    alliance: str = ""  # its alliance in a game of more than two players ("" otherwise)
    out: bool = False  # out of the game (its Guards fell, or it surrendered)
    acted: bool = False  # was awaited in the current phase and has acted since

    @property
    def player(self) -> str:
        """Who plays, as the side panel shows it ("alice", "bot, level 1")."""
        if self.bot:
            return f"bot, level {self.level}" if self.level else "bot"
        return self.name


def side_name(board: board_pb2.BoardDescription, side: str) -> str:
    """A side's short display name: its id in capitals ("South", "Attacker")."""
    return side[:1].upper() + side[1:] if side else "?"


def state_scene(
    board: board_pb2.BoardDescription,
    state: game_pb2.GameState,
    *,
    upper_side: str = "",
    last: frozenset[str] = frozenset(),
    turns: int = 0,
    kinds: frozenset[str] = frozenset(),
) -> Scene:
    """A Scene of a state on its board, with the terrain the state decides."""
    return Scene(
        board=board,
        pieces=list(state.pieces),
        last=last,
        turns=turns,
        upper_side=upper_side,
        kinds=kinds,
        terrain=details.terrain_tags(state),
        replaced=details.state_tags(state),
    )


def seconds(value: object) -> float:
    """A protobuf Duration as seconds."""
    return float(getattr(value, "seconds", 0)) + float(getattr(value, "nanos", 0)) / 1e9


class GameSession:
    """A game as the client shows it."""

    def __init__(
        self,
        view: matchmaker_pb2.GameView,
        description: engine_pb2.DescribeGameResponse,
        your_side: str = "",
        initial: game_pb2.GameState | None = None,
    ) -> None:
        self.view = view
        self.board = description.board
        self.info = description.info
        self.your_side = your_side or view.your_side
        reference = initial if initial is not None and initial.pieces else description.initial_state
        self.bottom = bottom_side(self.board, reference) or bottom_side(self.board, view.state)
        # Your own army at the bottom of the drawing, and your allies' with it.
        self.turns = turns_for(
            self.board, reference if reference.pieces else view.state, self.your_side,
            self.alliances(),
        )  # fmt: skip
        self.last_cells: frozenset[str] = frozenset()
        self.marked: frozenset[str] = frozenset()
        self.extra: list[str] = []  # status lines a game's hooks add (see hooks.py)
        self.abandon_at: dict[str, float] = {}  # side -> when it loses as abandoned (epoch s)
        self._baseline: Counter[tuple[str, str]] = Counter()
        self._armies = frozenset(piece.kind for piece in reference.pieces)
        # The current phase (see `phase_key`) and every side awaited in it so far.
        self._phase: tuple[object, ...] = ()
        self._awaited: set[str] = set()
        if initial is not None:
            self._raise(initial.pieces)
        self._raise(view.state.pieces)
        self._follow_phase()

    # -- reading -----------------------------------------------------------------------

    @property
    def state(self) -> game_pb2.GameState:
        """The current state."""
        return self.view.state

    @property
    def game_id(self) -> str:
        """The game's id."""
        return self.view.id

    @property
    def version(self) -> int:
        """The version of the view held."""
        return int(self.view.version)

    @property
    def finished(self) -> bool:
        """Whether the game has ended."""
        return self.view.status == matchmaker_pb2.GAME_STATUS_FINISHED or self.outcome is not None

    @property
    def started(self) -> bool:
        """Whether both seats are filled and play runs (or ran)."""
        return self.view.status in (
            matchmaker_pb2.GAME_STATUS_RUNNING,
            matchmaker_pb2.GAME_STATUS_FINISHED,
        )

    @property
    def outcome(self) -> game_pb2.Outcome | None:
        """How the game ended, if it has."""
        if self.view.HasField("outcome") and (
            self.view.outcome.reason or self.view.outcome.message
        ):
            return self.view.outcome
        if self.state.HasField("outcome") and (
            self.state.outcome.reason or self.state.outcome.message
        ):
            return self.state.outcome
        return None

    @property
    def to_act(self) -> list[str]:
        """The sides that may act now."""
        return list(self.state.to_act)

    @property
    def my_turn(self) -> bool:
        """Whether the player may act now."""
        return bool(self.your_side) and self.your_side in self.state.to_act and not self.finished

    @property
    def sides(self) -> list[str]:
        """Side ids in the game's order."""
        return [side.id for side in self.board.sides] or sorted(
            {seat.side for seat in self.view.seats}
        )

    def name(self, side: str) -> str:
        """A side's short display name."""
        return side_name(self.board, side)

    def opponents(self) -> list[str]:
        """The other sides."""
        return [side for side in self.sides if side != self.your_side]

    @property
    def multiplayer(self) -> bool:
        """Whether the game has more than two players."""
        return len(self.sides) > 2

    def alliances(self) -> dict[str, str]:
        """Each side's alliance (its own id when the game does not say)."""
        found = {side.id: side.alliance for side in self.board.sides if side.alliance}
        if self.state.WhichOneof("detail") == "napoleonic":
            found |= {p.id: p.alliance for p in self.state.napoleonic.players if p.alliance}
        return {side: found.get(side, side) for side in self.sides}

    def out_of_game(self) -> set[str]:
        """The players out of the game (Guards lost, or surrendered)."""
        if self.state.WhichOneof("detail") != "napoleonic":
            return set()
        return {player.id for player in self.state.napoleonic.players if player.out}

    def acted(self) -> set[str]:
        """The sides awaited earlier in the current phase that have acted since."""
        return self._awaited - set(self.to_act)

    def seats(self) -> list[SeatInfo]:
        """Who plays each side."""
        out = []
        by_side = {seat.side: seat for seat in self.view.seats}
        running = self.view.status == matchmaker_pb2.GAME_STATUS_RUNNING
        alliances = self.alliances() if self.multiplayer else {}
        gone, acted = self.out_of_game(), self.acted()
        for side in self.sides:
            seat = by_side.get(side) or matchmaker_pb2.Seat(side=side)
            you = side == self.your_side
            bot = seat.player.bot or seat.kind == matchmaker_pb2.SEAT_KIND_BOT
            level = int(seat.bot_level)
            alliance = alliances.get(side, "")
            if not seat.HasField("player"):
                name = "bot" if bot else "(open)"
                out.append(SeatInfo(side, name, bot, you, level, alliance=alliance))
                continue
            settled = seat.HasField("rating_after")
            out.append(
                SeatInfo(
                    side,
                    seat.player.display_name or ("bot" if bot else "?"),
                    bot,
                    you,
                    level,
                    away=running and not bot and not you and not seat.connected,
                    rating_before=seat.rating_before if settled else None,
                    rating_after=seat.rating_after if settled else None,
                    alliance=alliance,
                    out=side in gone,
                    acted=side in acted,
                )
            )
        return out

    def seat(self, side: str) -> SeatInfo | None:
        """Who plays `side`."""
        return next((seat for seat in self.seats() if seat.side == side), None)

    def seat_name(self, side: str) -> str:
        """The player of a side, as shown in prompts ("North (bot)", "North (alice)")."""
        seat = self.seat(side)
        if seat is None:
            return self.name(side)
        return f"{self.name(side)} (bot)" if seat.bot else f"{self.name(side)} ({seat.name})"

    @property
    def keeps_others_waiting(self) -> bool:
        """Whether another person sits in the game (the matchmaker warns, then forfeits,
        only a side that keeps another person waiting; a game against the bot alone waits
        for its player)."""
        return sum(not seat.bot for seat in self.seats()) > 1

    @property
    def against_bot(self) -> bool:
        """Whether a bot holds a seat."""
        return any(seat.bot for seat in self.seats())

    def abandon_left(self, side: str, now: float | None = None) -> float | None:
        """Seconds until a side that has left loses as abandoned (None: not warned)."""
        deadline = self.abandon_at.get(side)
        if deadline is None or self.finished:
            return None
        return max(0.0, deadline - (now if now is not None else time.time()))

    @property
    def kinds(self) -> frozenset[str]:
        """Every kind the game's armies have had (drawn alike from start to end)."""
        return self._armies | {kind for _, kind in self._baseline}

    def lost(self, side: str) -> list[str]:
        """Piece kind ids a side no longer has on the board, in the board's kind order."""
        now = Counter((piece.side, piece.kind) for piece in self.state.pieces)
        order = [kind.id for kind in self.board.piece_kinds]
        missing: list[str] = []
        for (owner, kind), count in self._baseline.items():
            if owner == side and count > now[(owner, kind)]:
                missing += [kind] * (count - now[(owner, kind)])
        return sorted(missing, key=lambda kind: order.index(kind) if kind in order else len(order))

    def clock(self, side: str, now: float | None = None) -> tuple[float, bool] | None:
        """A side's time left and whether its clock runs; None when the game is untimed."""
        if not self.view.HasField("clock") or side not in self.view.clock.remaining:
            return None
        clock = self.view.clock
        left = seconds(clock.remaining[side])
        running = side in {part.strip() for part in clock.running.split(",") if part.strip()}
        if running and not self.finished:
            as_of = clock.as_of.seconds + clock.as_of.nanos / 1e9
            left -= max(0.0, (now if now is not None else time.time()) - as_of)
        return max(0.0, left), running

    def low_time(self, side: str, now: float | None = None) -> bool:
        """Whether a side's running clock is under 10 % of its starting time or 20 s."""
        clock = self.clock(side, now)
        if clock is None or not clock[1]:
            return False
        base = seconds(self.view.clock.time_control.base)
        return clock[0] < max(LOW_TIME_SECONDS, LOW_TIME_SHARE * base)

    def scene(
        self, *, marked: Iterable[str] = (), extra_pieces: Sequence[game_pb2.Piece] = ()
    ) -> Scene:
        """What to draw now."""
        return Scene(
            board=self.board,
            pieces=[*self.state.pieces, *extra_pieces],
            last=self.last_cells,
            marked=frozenset(marked) | self.marked,
            turns=self.turns,
            upper_side=self.bottom,
            terrain=details.terrain_tags(self.state),
            replaced=details.state_tags(self.state),
            spent=details.moved_cells(self.state),
            kinds=self.kinds,
        )

    # -- changing ------------------------------------------------------------------------

    def update(self, view: matchmaker_pb2.GameView) -> bool:
        """Take a newer view; False (and nothing changes) if it is not newer."""
        if view.version < self.view.version or (
            view.version == self.view.version and view.status == self.view.status
        ):
            return False
        self.view = view
        self._raise(view.state.pieces)
        self._follow_phase()
        return True

    def phase_key(self) -> tuple[object, ...]:
        """What names the current phase: a Napoleonic Chess turn's number, phase and active
        player; in other games each action is a phase of its own."""
        state = self.state
        if state.WhichOneof("detail") == "napoleonic":
            game = state.napoleonic
            return (game.turn_number, game.phase, game.active_player)
        return (state.ply,)

    def _follow_phase(self) -> None:
        """Keep who has been awaited in the current phase (those since gone have acted)."""
        key = self.phase_key()
        if key != self._phase:
            self._phase, self._awaited = key, set()
        self._awaited |= set(self.to_act)

    def refresh(self, view: matchmaker_pb2.GameView) -> None:
        """Take a view of the version held or newer: what changes no version (who is there,
        settled ratings, a rematch offered, the clocks read again)."""
        if view.version >= self.view.version:
            self.view = view
            self._raise(view.state.pieces)
            self._follow_phase()

    def note_notice(self, notice: matchmaker_pb2.Notice) -> None:
        """Remember what a presence notice says (a side warned that it loses as abandoned)."""
        if notice.kind == matchmaker_pb2.NOTICE_KIND_ABANDON_WARNING and notice.deadline.seconds:
            self.abandon_at[notice.side] = notice.deadline.seconds + notice.deadline.nanos / 1e9
        elif notice.kind == matchmaker_pb2.NOTICE_KIND_RECONNECTED:
            self.abandon_at.pop(notice.side, None)

    def note_events(self, events: Iterable[game_pb2.Event]) -> None:
        """Remember the cells of the last move (to highlight them)."""
        cells: list[str] = []
        for event in events:
            if event.kind in _MOVE_EVENTS:
                cells += list(event.cells)
        if cells:
            self.last_cells = frozenset(cells)

    def _raise(self, pieces: Iterable[game_pb2.Piece]) -> None:
        for key, count in Counter((piece.side, piece.kind) for piece in pieces).items():
            self._baseline[key] = max(self._baseline[key], count)

"""Games as one viewer may see them: what the rules hide is left out.

The only hidden information of the three games is Napoleonic Chess's "Attack at Dawn"
deployment (rules 10.1): until the arrays are laid out, nobody but its author sees an
array, a salt, or the notation of the action that carried them. The engine gives every
applied action a `public_notation` for the others; what a viewer may see of a state is
`states.for_viewer`'s to decide (the one place that reads what a position hides), for the
state stored and for the view for drawing the engine makes of it. Everything else is open
information (the defender sees every declared attack). Nothing here names a game.

States are stored compact (`states.py`); a view sent to a client carries the view for
drawing, which the engine adds (`Engine.drawn`) to the copy the viewer may see.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from google.protobuf import timestamp_pb2
from google.protobuf.message import Message

from matchmaker import clocks
from matchmaker.engine import duration
from matchmaker.players import rating_message
from matchmaker.ratings import Rating
from matchmaker.record import (
    BOT_PLAYER,
    ActionEntry,
    GameRecord,
    GameStatus,
    SeatKind,
    Visibility,
)
from matchmaker.states import for_viewer, hidden_pending
from matchmaker.store import StreamEntry
from wargame.v1 import game_pb2, matchmaker_pb2

STATUS = {
    GameStatus.OPEN: matchmaker_pb2.GAME_STATUS_OPEN,
    GameStatus.RUNNING: matchmaker_pb2.GAME_STATUS_RUNNING,
    GameStatus.FINISHED: matchmaker_pb2.GAME_STATUS_FINISHED,
}
VISIBILITY = {
    Visibility.PUBLIC: matchmaker_pb2.VISIBILITY_PUBLIC,
    Visibility.PRIVATE: matchmaker_pb2.VISIBILITY_PRIVATE,
}
SEAT_KIND = {
    SeatKind.HUMAN: matchmaker_pb2.SEAT_KIND_HUMAN,
    SeatKind.BOT: matchmaker_pb2.SEAT_KIND_BOT,
}

# Game actions that carry a whole array (Napoleonic Chess 10.1): secret until the arrays
# are laid out.
SECRET_ACTIONS = frozenset({"reveal", "seal"})
# Events that may describe a side's secret array while the deployment is hidden.
DEPLOYMENT_EVENTS = frozenset(
    {
        game_pb2.EVENT_KIND_DEPLOYMENT_COMMITTED,
        game_pb2.EVENT_KIND_DEPLOYMENT_SEALED,
        game_pb2.EVENT_KIND_DEPLOYMENT_REVEALED,
    }
)


def public_notation(action: game_pb2.Action, notation: str, public: str) -> str:
    """What others may see of an action: the engine's public notation, and never an
    array or salt even if the engine left one in (defence in depth)."""
    if public != notation:
        return public
    member = action.WhichOneof("kind")  # the game's own action, or notation, resign, ...
    game_action = getattr(action, member) if member else None
    if isinstance(game_action, Message) and "kind" in game_action.DESCRIPTOR.oneofs_by_name:
        kind = game_action.WhichOneof("kind") or ""
        if kind in SECRET_ACTIONS:
            return f"{kind} (hidden)"
    return public


def public_events(events: Sequence[game_pb2.Event], secret_sides: set[str]) -> list[game_pb2.Event]:
    """Events as others may see them while the deployment of `secret_sides` is hidden:
    deployment events of those sides keep their kind and side, lose text and cells."""
    out = []
    for event in events:
        if event.kind in DEPLOYMENT_EVENTS and event.side in secret_sides:
            word = game_pb2.EventKind.Name(event.kind).rsplit("_", 1)[-1].lower()
            out.append(
                game_pb2.Event(
                    kind=event.kind, side=event.side, text=f"{event.side}'s deployment is {word}"
                )
            )
        else:
            out.append(event)
    return out


def notations_for(
    full: Sequence[str], public: Sequence[str], actor: str, viewer_side: str, pending: bool
) -> list[str]:
    """The notations a viewer may see of one update's actions."""
    if not full or not pending or actor == viewer_side:
        return list(full or public)
    return list(public)


def timestamp(ms: int) -> timestamp_pb2.Timestamp:
    """A protobuf Timestamp from epoch milliseconds."""
    value = timestamp_pb2.Timestamp()
    value.FromMilliseconds(ms)
    return value


def seat_messages(game: GameRecord) -> list[matchmaker_pb2.Seat]:
    """The seats as the contract shows them."""
    out = []
    for seat in game.seats:
        bot = seat.kind == SeatKind.BOT
        message = matchmaker_pb2.Seat(
            side=seat.side,
            kind=SEAT_KIND[seat.kind],
            bot_level=(seat.level or game.bot_level or 5) if bot else 0,
            connected=bool(seat.player) and (bot or seat.side not in game.away),
            reserved_for=seat.reserved,
        )
        if seat.player:
            message.player.CopyFrom(
                matchmaker_pb2.Player(
                    id=seat.player, display_name=seat.name, bot=seat.player == BOT_PLAYER
                )
            )
        if seat.rating_after:
            message.rating_before.CopyFrom(
                rating_message(game.rating_pool, Rating.parse(seat.rating_before))
            )
            message.rating_after.CopyFrom(
                rating_message(game.rating_pool, Rating.parse(seat.rating_after))
            )
        out.append(message)
    return out


def clock_message(game: GameRecord, now_ms: int) -> matchmaker_pb2.Clock | None:
    """The clocks at `now_ms` (None for untimed games)."""
    clock = game.clock
    if clock is None:
        return None
    running = clock.running if game.status == GameStatus.RUNNING else ()
    # Several clocks run at once only during a simultaneous deployment: comma-separated.
    message = matchmaker_pb2.Clock(running=",".join(running))
    at = now_ms if game.status == GameStatus.RUNNING else clock.at_ms
    for side, left in clocks.remaining_at(clock, at).items():
        message.remaining[side].CopyFrom(duration(max(0, left) / 1000))
    message.as_of.CopyFrom(timestamp(at))
    message.time_control.base.CopyFrom(duration(clock.base_ms / 1000))
    message.time_control.increment.CopyFrom(duration(clock.increment_ms / 1000))
    return message


def game_view(
    game: GameRecord,
    viewer: str,
    now_ms: int,
    *,
    with_state: bool = True,
    with_moves: bool = True,
    drawn: game_pb2.GameState | None = None,
) -> matchmaker_pb2.GameView:
    """The game as player `viewer` ("" for an anonymous spectator) may see it; its state is
    `drawn` when given (the current state with its view for drawing), else as stored."""
    seat = game.seat_of(viewer)
    side = seat.side if seat else ""
    view = matchmaker_pb2.GameView(
        id=game.id,
        game=game.ruleset,
        status=STATUS.get(game.status, matchmaker_pb2.GAME_STATUS_UNSPECIFIED),
        version=game.version,
        seats=seat_messages(game),
        your_side=side,
        visibility=VISIBILITY[game.visibility],
        rated=game.rated,
        rematch_game_id=game.rematch,
        rematch_of=game.rematch_of,
    )
    view.created_at.CopyFrom(timestamp(game.created_ms))
    if seat is not None and game.invite:
        view.invite_code = game.invite
    clock = clock_message(game, now_ms)
    if clock is not None:
        view.clock.CopyFrom(clock)
    outcome = game.outcome()
    if outcome is not None:
        view.outcome.CopyFrom(outcome)
    if game.state_bytes:
        state = game.state
        if with_state:
            view.state.CopyFrom(for_viewer(drawn or state, side))
        if with_moves:
            pending = hidden_pending(state)
            view.moves.extend(
                entry.public if entry.hidden and pending and entry.side != side else entry.notation
                for entry in game.moves
            )
    if game.status == GameStatus.FINISHED and not view.HasField("outcome") and game.closed:
        # An open game nobody joined: closed without a game played, so no winner.
        view.outcome.CopyFrom(
            game_pb2.Outcome(reason=game_pb2.OUTCOME_REASON_ABANDONED, message=game.closed)
        )
    return view


def public_record(game: GameRecord) -> tuple[list[ActionEntry], dict[str, str]]:
    """What anyone may see of a game's record: its moves up to the first one the rules
    still hide, and the record's tags (players' names by side, date, session, and how it
    ended when the matchmaker ended it)."""
    entries = game.moves
    if hidden_pending(game.state):
        cut = next((i for i, entry in enumerate(entries) if entry.hidden), len(entries))
        entries = entries[:cut]
    tags = {seat.side.capitalize(): seat.name for seat in game.seats if seat.name}
    tags["Date"] = time.strftime("%Y.%m.%d", time.gmtime(game.created_ms / 1000))
    tags["Session"] = game.id
    if game.ending:  # an ending no action of the record shows (clocks out together)
        tags["Termination"] = game_pb2.Outcome.FromString(game.ending).message
    return entries, tags


NOTICE_KINDS: dict[str, matchmaker_pb2.NoticeKind.ValueType] = {
    name.removeprefix("NOTICE_KIND_"): number
    for name, number in matchmaker_pb2.NoticeKind.items()
    if number
}


def notice_message(
    entry: StreamEntry, view: matchmaker_pb2.GameView | None
) -> matchmaker_pb2.WatchGameResponse:
    """A notice of the stream as every watcher sees it (notices hide nothing)."""
    fields = entry.notice
    kind = fields.get("n", "")
    side = fields.get("s", "")
    deadline = int(fields.get("d") or 0)
    notice = matchmaker_pb2.Notice(
        kind=NOTICE_KINDS.get(kind, matchmaker_pb2.NOTICE_KIND_UNSPECIFIED),
        side=side,
        game_id=fields.get("g", ""),
    )
    if kind == "DISCONNECTED":
        notice.text = f"{side} disconnected"
    elif kind == "RECONNECTED":
        notice.text = f"{side} reconnected"
    elif kind == "ABANDON_WARNING":
        when = time.strftime("%H:%M:%S UTC", time.gmtime(deadline / 1000))
        notice.text = f"{side} has left; the game ends as abandoned at {when} unless they come back"
        notice.deadline.CopyFrom(timestamp(deadline))
    elif kind == "REMATCH_OFFERED":
        notice.text = f"{side} offers a rematch"
    message = matchmaker_pb2.WatchGameResponse(
        version=entry.version, side=side, notice=notice, at=timestamp(int(fields.get("t") or 0))
    )
    if view is not None:
        message.game.CopyFrom(view)
    return message


def watch_message(
    entry: StreamEntry, viewer_side: str, pending: bool, view: matchmaker_pb2.GameView | None
) -> matchmaker_pb2.WatchGameResponse:
    """One stream entry as a viewer on `viewer_side` ("" for spectators) may see it while
    hidden information is `pending`; `view` (the game now) is attached when given."""
    message = matchmaker_pb2.WatchGameResponse.FromString(entry.message)
    if entry.full_notations:
        shown = notations_for(
            entry.full_notations, message.notations, entry.side, viewer_side, pending
        )
        del message.notations[:]
        message.notations.extend(shown)
    if view is not None:
        message.game.CopyFrom(view)
    return message

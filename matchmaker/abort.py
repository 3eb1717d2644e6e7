"""Abort: a game that has barely begun ends with no result and changes no rating.

A seated player may abort while no side has begun its second turn. A turn is one side's
actions in a row in the record (Napoleonic Chess: the phases of one player's turn, or one
deployment step), draw offers and answers aside. The ending is the matchmaker's own
(`Play.end_by_matchmaker`, Outcome reason ABORTED, no winner): committed only if the game is
still at the version read, so an action and an abort never both count; the record's
Termination tag says the game was aborted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from matchmaker.errors import kept_changing, not_seated
from matchmaker.play import Play, Played, require_running
from matchmaker.record import ActionEntry, GameRecord, SeatKind
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import game_pb2

DRAW_NOTATIONS = frozenset({"offer draw", "accept draw", "decline draw"})


def turns(moves: Sequence[ActionEntry]) -> Counter[str]:
    """How many turns each side has begun: runs of its actions in the record (draw offers
    and answers are no turn and do not break one)."""
    begun: Counter[str] = Counter()
    last = ""
    for entry in moves:
        if entry.public in DRAW_NOTATIONS:
            continue
        if entry.side != last:
            begun[entry.side] += 1
            last = entry.side
    return begun


def abortable(game: GameRecord) -> bool:
    """Whether no side has begun its second turn."""
    return all(count < 2 for count in turns(game.moves).values())


def aborted(side: str, name: str) -> game_pb2.Outcome:
    """The outcome of a game aborted by `side`'s player."""
    who = f"{side} ({name})" if name else side
    return game_pb2.Outcome(
        reason=game_pb2.OUTCOME_REASON_ABORTED,
        message=f"aborted by {who}: no result",
    )


async def abort(play: Play, player_id: str, game_id: str) -> Played:
    """End `game_id` as aborted by the seated `player_id`, retrying on a version conflict
    (whether it may still be aborted is judged again on each read)."""
    for _ in range(play.settings.submit_retries):
        game, now = await play.store.get(game_id)
        seat = game.seat_of(player_id)
        if seat is None or seat.kind != SeatKind.HUMAN:
            raise not_seated(game_id)
        require_running(game)
        if not abortable(game):
            raise Refusal(
                Code.FAILED_PRECONDITION,
                Reason.ABORT_TOO_LATE,
                "a game can be aborted only before any side's second turn; "
                "resign or offer a draw instead",
            )
        try:
            await play._check_flag(game, now)  # a side out of time loses first
            return await play.end_by_matchmaker(game, now, aborted(seat.side, seat.name))
        except Refusal as error:
            if error.reason != Reason.VERSION_CONFLICT:
                raise
    raise kept_changing()

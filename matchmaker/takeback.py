"""Takeback against the bot: a player's last action and the bot's answers, undone.

Only in unrated games whose other seats are all the bot's. The game goes back to the
position before the caller's last action (draw offers and answers are not taken back
alone: they go with the actions after them): the engine replays the record up to there
from the initial state, and the commit cuts the actions list and the moves to it with the
game's next version (`commit.lua`), so the record reads as if the actions were never
played and a bot's answer computed meanwhile loses its compare-and-set.

Never into a Napoleonic Chess secret deployment (Attack at Dawn, rules 10.1): each side
picks its array unseen by the other, so a takeback that returned to the commit or reveal
after the arrays were laid out would let the player choose again knowing the enemy's; and
while the deployment is hidden there is nothing of it to give back. Marching Orders (10.2)
places openly, turn by turn, and is taken back like any action.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from matchmaker import clocks
from matchmaker.abort import DRAW_NOTATIONS
from matchmaker.engine import Engine, EngineError, refusal_status
from matchmaker.errors import kept_changing, not_seated, version_conflict
from matchmaker.play import Play, Played, require_running
from matchmaker.record import GameRecord, SeatKind, rows_json
from matchmaker.states import compact, hidden_pending
from matchmaker.store import CONFLICTS, CommitOutcome
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import game_pb2, matchmaker_pb2

REPLAY_CHUNK = 256  # actions per ApplyActions call while replaying (the engine takes 512)


def not_allowed(why: str) -> Refusal:
    """UNDO_NOT_ALLOWED, saying why."""
    return Refusal(Code.FAILED_PRECONDITION, Reason.UNDO_NOT_ALLOWED, why)


def cut_point(game: GameRecord, side: str) -> int | None:
    """Where the record is cut: at `side`'s last action that is no draw offer or answer
    (None: it has none)."""
    for index in range(len(game.moves) - 1, -1, -1):
        entry = game.moves[index]
        if entry.side == side and entry.public not in DRAW_NOTATIONS:
            return index
    return None


async def replayed(
    engine: Engine, initial: game_pb2.GameState, actions: list[game_pb2.Action]
) -> game_pb2.GameState:
    """The compact state after `actions` from `initial` (a few engine calls for a long game)."""
    state = compact(initial)
    try:
        for start in range(0, len(actions), REPLAY_CHUNK):
            reply = await engine.apply(state, actions[start : start + REPLAY_CHUNK])
            state = compact(reply.state)
    except EngineError as refusal:
        raise refusal_status(refusal, stored_session=True) from None
    return state


async def take_back(
    play: Play, player_id: str, game_id: str, expected_version: int
) -> tuple[Played, list[str]]:
    """Take back `player_id`'s last action and everything after it; the game after, and the
    notations taken back (public forms, oldest first)."""
    for _ in range(play.settings.submit_retries):
        game, now = await play.store.get(game_id, full=True)
        seat = game.seat_of(player_id)
        if seat is None or seat.kind != SeatKind.HUMAN:
            raise not_seated(game_id)
        require_running(game)
        if not game.allows_takebacks():
            raise not_allowed("takebacks are only for unrated games against the bot")
        if expected_version and expected_version != game.version:
            CONFLICTS.inc()
            raise version_conflict(expected_version, game.version)
        if hidden_pending(game.state):
            raise not_allowed(_SECRET)
        cut = cut_point(game, seat.side)
        if cut is None:
            raise not_allowed("you have no action to take back yet")
        actions = (await play.store.actions(game.id))[:cut]
        state = await replayed(play.engine, game.initial, actions)
        if hidden_pending(state):  # the cut falls inside the secret deployment
            raise not_allowed(_SECRET)
        await play._check_flag(game, now)  # a side out of time loses first
        kept = game.moves[:cut]
        after = replace(
            game,
            version=game.version + 1,
            updated_ms=now,
            acted_ms=now,
            clock=_clock_back(game, cut, now, state.to_act),
            readings={key: left for key, left in game.readings.items() if int(key) <= cut},
            state_bytes=state.SerializeToString(),
            moves_raw=rows_json("", [entry.row() for entry in kept]),
            warned={},
            _state=state,
            _moves=kept,
        )
        undone = [entry.public for entry in game.moves[cut:]]
        result = await play.store.commit_change(
            game,
            after,
            now,
            matchmaker_pb2.WatchGameResponse(side=seat.side, taken_back=undone),
            keep_actions=cut,
        )
        if result.outcome == CommitOutcome.OK:
            return Played(after, now, [], []), undone
        CONFLICTS.inc()
        if expected_version:
            raise version_conflict(expected_version, result.version)
    raise kept_changing()


def _clock_back(
    game: GameRecord, cut: int, now: int, running: Iterable[str]
) -> clocks.Clock | None:
    """The clock as it read when the position taken back to was reached (each side's
    time left then, running from now), or the game's clock run on to now when no reading
    was kept (a game stored before readings were)."""
    clock = game.clock
    if clock is None:
        return None
    reading = game.readings.get(str(cut))
    if reading is None and cut == 0:
        reading = {side: clock.base_ms for side in clock.remaining}
    if reading is None:
        return clocks.advance(clock, now, running)
    return replace(clock, remaining=dict(reading), at_ms=now, running=tuple(running))


_SECRET = "a secret deployment cannot be taken back (rules 10.1: each side chose its array unseen)"

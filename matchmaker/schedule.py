"""When the sweeper must next look at a game, and how long the game's keys live.

Both follow from the record alone, so every commit (`Store.commit_change`) sets them from
the game it writes, and the sweeper (`sweeper.py`) from the game it has just worked on.
"""

from __future__ import annotations

from matchmaker import clocks
from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, SeatKind
from matchmaker.settings import Settings
from matchmaker.states import players_out

RATING_RETRY_MS = 10_000  # a finished game whose ratings are not settled is looked at again


def next_due(game: GameRecord, now_ms: int, settings: Settings) -> int | None:
    """When the sweeper must next look at a game (None: never again): an open game's
    expiry, a bot's turn or a draw offer to a bot (now), a clock's flag, a human side to
    act that keeps another person waiting (its warning now if it has left, its abandonment
    once warned, else a look at whether it is still there), pending ratings."""
    if game.status == GameStatus.OPEN:
        return open_until(game, settings)
    if game.status == GameStatus.FINISHED:
        return now_ms + RATING_RETRY_MS if game.rating_status == RatingStatus.PENDING else None
    times: list[int] = []
    if game.seated_to_act(SeatKind.BOT) is not None or offered_to_bot(game) is not None:
        times.append(now_ms)
    if game.clock is not None:
        flag_at = clocks.deadline(game.clock)
        if flag_at is not None:
            times.append(flag_at)
    waiting = game.keeps_others_waiting()  # else nobody is warned: no look at presence
    for seat in game.seats:
        if waiting and seat.kind == SeatKind.HUMAN and seat.side in game.to_act():
            if seat.side in game.warned:
                times.append(game.warned[seat.side])
            elif seat.side in game.away:
                times.append(now_ms)
            else:
                times.append(now_ms + int(settings.presence_check * 1000))
    return min(times) if times else None


def offered_to_bot(game: GameRecord) -> Seat | None:
    """The bot seat a standing draw offer waits for, if any: one that has not offered or
    accepted it and is still in the game (a game of N players is drawn once every
    remaining player has accepted)."""
    state = game.state if game.state_bytes else None
    if state is None or not state.draw_offer or game.status != GameStatus.RUNNING:
        return None
    answered = {state.draw_offer, *state.draw_accepted, *players_out(state)}
    return next(
        (seat for seat in game.seats if seat.kind == SeatKind.BOT and seat.side not in answered),
        None,
    )


def open_until(game: GameRecord, settings: Settings) -> int:
    """When an open game nobody joined is closed (ms)."""
    return game.created_ms + int(settings.open_game_ttl * 1000)


def ttl(status: GameStatus, settings: Settings) -> float:
    """How long (s) a game's keys live after a commit that leaves it in `status`."""
    if status == GameStatus.FINISHED:
        return settings.finished_game_ttl
    if status == GameStatus.OPEN:
        return settings.open_game_ttl + settings.finished_game_ttl
    return settings.running_game_ttl

"""The bot seat: its moves at its level, its secret deployments, its answers to draw offers.

The bot plays through the engine's SuggestAction at the game's level (1-5), with a search
seed derived from the matchmaker's secret key (`vault.py`), never from the game id or
anything else a player sees. Its Attack-at-Dawn array (Napoleonic Chess 10.1) and salt
come from the same key: a uniformly random legal array (the army of the state on the
deployment squares the engine's DescribeGame marks), so no player can predict it or check
a guess against the bot's commitment. They are derived again, not stored, when the bot
must reveal (`round` counts its commitments, so a redeployment gets a new array). The
bot answers a draw offer from the engine's evaluation of the position: it accepts when
the game is even or worse for it, within `draw_answer_time`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import structlog

from matchmaker.engine import Engine, EngineError
from matchmaker.record import GameRecord, Seat
from matchmaker.settings import Settings
from matchmaker.states import alliance, army, hidden_pending, phase
from matchmaker.vault import Vault
from wargame.position_text import SECRET_PHASES
from wargame.runtime.refusal import Refusal
from wargame.v1 import game_pb2

log = structlog.get_logger(component="matchmaker")


class Bot:
    """What the bot of a game does, decided with the engine and the matchmaker's secret."""

    def __init__(self, engine: Engine, vault: Vault, settings: Settings) -> None:
        self.engine = engine
        self.vault = vault
        self.settings = settings

    def seed(self, game_id: str, side: str) -> int:
        """The bot's search seed in a game: stable per game and side, secret."""
        secret = self.vault.derive(f"bot seed|{game_id}|{side}")
        return int.from_bytes(secret[:8], "big") >> 1 or 1

    def level(self, game: GameRecord, seat: Seat) -> int:
        """The level (1-5) the bot plays a seat at: the seat's own, else the game's."""
        return seat.level or game.bot_level or self.settings.bot_level

    def thinking_time(self, game: GameRecord) -> float:
        """Seconds the bot may think per action in this game."""
        return (game.bot_ms or int(self.settings.bot_time * 1000)) / 1000

    async def action(self, game: GameRecord, seat: Seat) -> game_pb2.Action:
        """The bot's next action for its seat (EngineError/Refusal when there is none)."""
        secret = await self._deployment(game, seat.side)
        if secret is not None:
            return secret
        reply = await self.engine.suggest(
            game.state,
            seat.side,
            self.thinking_time(game),
            self.seed(game.id, seat.side),
            self.level(game, seat),
        )
        action = game_pb2.Action()
        action.CopyFrom(reply.action)
        if not action.side:
            action.side = seat.side
        return action

    async def answer_draw(self, game: GameRecord, seat: Seat) -> game_pb2.Action:
        """Accept a standing draw offer when the game is even or worse for the bot (for
        its alliance, in a game of N players)."""
        state = game.state
        to_act = game.to_act()
        side = seat.side if seat.side in to_act else (to_act[0] if len(to_act) == 1 else "")
        accept = False
        if side:
            seconds = min(self.settings.draw_answer_time, self.thinking_time(game))
            try:
                reply = await self.engine.suggest(
                    state, side, seconds, self.seed(game.id, seat.side), self.level(game, seat)
                )
                drawn = await self.engine.drawn(state)  # the alliances are the view's
                allied = alliance(drawn, side) == alliance(drawn, seat.side)
                value = reply.evaluation if allied else -reply.evaluation
                accept = value <= 0
            except (EngineError, Refusal) as error:
                log.info(
                    "the bot declines a draw it cannot judge", game_id=game.id, error=str(error)
                )
        if accept:
            return game_pb2.Action(side=seat.side, accept_draw=game_pb2.AcceptDraw())
        return game_pb2.Action(side=seat.side, decline_draw=game_pb2.DeclineDraw())

    # -- Attack at Dawn ------------------------------------------------------------------

    async def _deployment(self, game: GameRecord, side: str) -> game_pb2.Action | None:
        """The bot's secret-deployment action (None outside the secret phases)."""
        if not hidden_pending(game.state):
            return None
        state = await self.engine.drawn(game.state)  # its armies and options
        word = SECRET_PHASES.get(phase(state))
        if word is None:
            return None
        commits = sum(
            1 for entry in game.moves if entry.side == side and entry.notation.startswith("commit")
        )
        round_ = commits - 1 if word == "reveal" else commits
        units = army(state, side)
        squares = await self.engine.deployment_squares(state, side)
        if not units or len(squares) < len(units):
            log.warning("no deployment squares for the bot's army", game_id=game.id, side=side)
            return None
        array = secret_array(
            self.vault.derive(f"bot array|{game.id}|{side}|{round_}"), squares, units
        )
        if word == "seal":
            return game_pb2.Action(side=side, notation=f"seal {array}")
        salt = self.vault.derive(f"bot salt|{game.id}|{side}|{round_}").hex()
        return game_pb2.Action(side=side, notation=f"{word} {array} salt {salt}")


def secret_array(secret: bytes, squares: Sequence[str], army: Sequence[str]) -> str:
    """The array text ("a2=infantry b3=guards ...") a secret picks: the army's units on
    distinct squares, every legal array equally likely."""
    rng = random.Random(int.from_bytes(secret, "big"))
    chosen = rng.sample(sorted(squares), len(army))
    return " ".join(f"{square}={kind}" for square, kind in zip(chosen, army, strict=True))

"""The bot seat: its level reaches the engine and shows in the game, it
is never rated, and it answers draw offers from the engine's evaluation."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from matchmaker.vault import Vault
from tests.conftest import TEST_SEAL_KEY
from tests.matchmaker.conftest import TEST_SECRET_KEY, Client, InProcessMatchmaker
from tests.matchmaker.helpers import expect_error, seconds, serving_engine, wait_for
from tests.matchmaker.test_multiplayer import play_turns
from wargame.v1 import engine_pb2, game_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode

# Game of War set-ups, South to move: North left with a Gun and its King, or South.
NORTH_CRUSHED = "4gk4/10/10/10/10/10/10/T1T1T1T1T1/1T1T1T1T1T/MHC1GK1CHM S FF:ff"
SOUTH_CRUSHED = "mhc1gk1chm/1t1t1t1t1t/t1t1t1t1t1/10/10/10/10/10/10/4GK4 S FF:ff"


@pytest.fixture(scope="module")
def listening_engine() -> Iterator[tuple[str, list[engine_pb2.SuggestActionRequest]]]:
    """A real engine whose SuggestAction requests are kept for the test to read."""
    from engine_service.rules import rulesets
    from engine_service.service import RulesEngine

    heard: list[engine_pb2.SuggestActionRequest] = []
    lock = threading.Lock()

    class Listening(RulesEngine):
        def SuggestAction(self, request: Any, context: Any) -> Any:
            with lock:
                heard.append(request)
            return super().SuggestAction(request, context)

    with serving_engine(Listening(rulesets(TEST_SEAL_KEY))) as address:
        yield address, heard


def test_the_bot_plays_at_the_level_the_game_asks_and_shows_it(
    make_matchmaker: Callable[..., InProcessMatchmaker],
    listening_engine: tuple[str, list[engine_pb2.SuggestActionRequest]],
    clients: Callable[..., Client],
) -> None:
    address, heard = listening_engine
    server = make_matchmaker(engine=address, bot_level=4)
    ada = clients(server.address, "Ada")
    for level, shown in ((1, 1), (0, 4)):  # 0: the matchmaker's default level
        before = len(heard)
        game = ada.CreateGame(
            mm.CreateGameRequest(
                game="war",
                side="north",  # the bot plays South and moves first
                opponent=mm.SEAT_KIND_BOT,
                bot_level=level,
                bot_time=seconds(0.05),
            )
        ).game
        (bot,) = [seat for seat in game.seats if seat.kind == mm.SEAT_KIND_BOT]
        assert bot.bot_level == shown and bot.connected
        (human,) = [seat for seat in game.seats if seat.kind == mm.SEAT_KIND_HUMAN]
        assert human.bot_level == 0
        wait_for(functools.partial(lambda n: len(heard) > n, before))
        assert heard[before].level == shown and heard[before].side == "south"
        # Its search seed is its secret one for this game and side.
        secret = Vault(TEST_SECRET_KEY).derive(f"bot seed|{game.id}|south")
        assert heard[before].seed == int.from_bytes(secret[:8], "big") >> 1
    expect_error(
        lambda: ada.CreateGame(
            mm.CreateGameRequest(game="war", opponent=mm.SEAT_KIND_BOT, bot_level=6)
        ),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    expect_error(
        lambda: ada.CreateGame(mm.CreateGameRequest(game="war", bot_level=2)),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )


def test_a_game_against_the_bot_is_never_rated(ada: Client) -> None:
    details = expect_error(
        lambda: ada.CreateGame(
            mm.CreateGameRequest(game="war", opponent=mm.SEAT_KIND_BOT, rated=True)
        ),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    assert "never rated" in details.message and details.fields[0][0] == "rated"


@pytest.mark.parametrize(("setup", "accepted"), [(NORTH_CRUSHED, True), (SOUTH_CRUSHED, False)])
def test_the_bot_answers_a_draw_offer_from_its_evaluation(
    setup: str, accepted: bool, ada: Client
) -> None:
    game = ada.CreateGame(
        mm.CreateGameRequest(
            game="war", side="south", setup=setup, opponent=mm.SEAT_KIND_BOT, bot_time=seconds(0.2)
        )
    ).game
    assert list(game.state.to_act) == ["south"]
    offered = ada.OfferDraw(mm.OfferDrawRequest(game_id=game.id)).game
    assert offered.state.draw_offer == "south"
    answered = wait_for(
        lambda: (
            (g := ada.GetGame(mm.GetGameRequest(game_id=game.id)).game).state.draw_offer == "" and g
        )
    )
    if accepted:  # North has lost all but its Gun and King: a draw is the best it can hope for
        assert answered.status == mm.GAME_STATUS_FINISHED
        assert answered.outcome.reason == game_pb2.OUTCOME_REASON_AGREEMENT
        assert answered.moves[-1] == "accept draw"
    else:  # North is far ahead: it plays on
        assert answered.status == mm.GAME_STATUS_RUNNING
        assert answered.moves[-1] == "decline draw"


def test_the_bot_judges_a_draw_offer_at_its_level_with_its_secret_seed(
    make_matchmaker: Callable[..., InProcessMatchmaker],
    listening_engine: tuple[str, list[engine_pb2.SuggestActionRequest]],
    clients: Callable[..., Client],
) -> None:
    """The bot (North, level 3) is asked about a draw while South is to move: it asks the
    engine about South's position at the game's level, with its own secret seed."""
    address, heard = listening_engine
    server = make_matchmaker(engine=address, bot_level=5, draw_answer_time=0.2)
    ada = clients(server.address, "Ada")
    game = ada.CreateGame(
        mm.CreateGameRequest(
            game="war",
            side="south",
            setup=SOUTH_CRUSHED,
            opponent=mm.SEAT_KIND_BOT,
            bot_level=3,
            bot_time=seconds(0.2),
        )
    ).game
    before = len(heard)
    ada.OfferDraw(mm.OfferDrawRequest(game_id=game.id))
    wait_for(functools.partial(lambda n: len(heard) > n, before))
    asked = heard[before]
    seed = int.from_bytes(Vault(TEST_SECRET_KEY).derive(f"bot seed|{game.id}|north")[:8], "big")
    assert (asked.side, asked.level, asked.seed) == ("south", 3, seed >> 1)


def test_each_bot_seat_plays_at_its_own_level_and_shows_it(
    make_matchmaker: Callable[..., InProcessMatchmaker],
    listening_engine: tuple[str, list[engine_pb2.SuggestActionRequest]],
    clients: Callable[..., Client],
    engine_stub: Any,
) -> None:
    """A game of three (`three_way`: red, black, green in turn) with bots on red at level 2
    and black at the game's level 4: each seat shows its own level, and the bot asks the
    engine for each seat's actions at that seat's level."""
    address, heard = listening_engine
    server = make_matchmaker(engine=address, bot_level=1)
    ada = clients(server.address, "Ada")
    before = len(heard)
    game = ada.CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options={"scenario": "three_way"},
            side="green",
            bot_sides=["red", "black"],
            bot_levels={"red": 2},
            bot_level=4,
            bot_time=seconds(0.05),
        )
    ).game
    assert game.status == mm.GAME_STATUS_RUNNING
    shown = {seat.side: seat.bot_level for seat in game.seats}
    assert shown == {"red": 2, "black": 4, "green": 0}
    again = ada.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert {seat.side: seat.bot_level for seat in again.seats} == shown

    def asked() -> dict[str, set[int]]:
        levels: dict[str, set[int]] = {}
        for request in heard[before:]:
            if request.state.game == "napoleonic":
                levels.setdefault(request.side, set()).add(request.level)
        return levels

    # Green plays when it must (an attack on it asks for its answer) until both bots acted.
    play_turns(engine_stub, {"green": ada}, game.id, lambda _: {"red", "black"} <= asked().keys())
    assert {side: asked()[side] for side in ("red", "black")} == {"red": {2}, "black": {4}}


def test_levels_per_bot_seat_are_checked(ada: Client) -> None:
    request = mm.CreateGameRequest(
        game="napoleonic", options={"scenario": "three_way"}, side="green", bot_sides=["red"]
    )
    for levels, said in (
        ({"black": 3}, "bot_levels names 'black': name only sides the bot takes (red)"),
        ({"green": 3}, "bot_levels names 'green'"),
        ({"purple": 3}, "bot_levels names 'purple'"),
        ({"red": 6}, "bot_levels gives 'red' level 6: a level is 1 to 5"),
        ({"red": 0}, "bot_levels gives 'red' level 0: a level is 1 to 5"),
    ):
        bad = mm.CreateGameRequest(bot_levels=levels)
        bad.MergeFrom(request)
        details = expect_error(
            functools.partial(ada.CreateGame, bad), Code.INVALID_ARGUMENT, "MALFORMED_REQUEST"
        )
        assert said in details.message and details.fields[0][0] == "bot_levels"
    # Levels for a game without a bot seat.
    details = expect_error(
        lambda: ada.CreateGame(mm.CreateGameRequest(game="war", bot_levels={"north": 3})),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    assert details.fields[0][0] == "bot_levels"
    # With opponent BOT, each of the bot's seats may have its own level.
    game = ada.CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options={"scenario": "three_way"},
            side="green",
            opponent=mm.SEAT_KIND_BOT,
            bot_levels={"black": 1, "red": 3},
        )
    ).game
    assert {seat.side: seat.bot_level for seat in game.seats} == {"red": 3, "black": 1, "green": 0}

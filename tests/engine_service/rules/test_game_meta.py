"""What every game shares around its rules (`engine_service.rules.game`): resignation and
forfeits, draws by agreement (two players, and every remaining player with more), the
number of actions played, batches applied all or nothing, and the words of the meta actions.

The games are the real three: The Game of War for two sides, Napoleonic Chess for its
multiplayer scenarios (docs/multiplayer.md: one player may surrender alone; a draw needs
every player still in the game).
"""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.rules import rulesets
from engine_service.rules.base import Event, EventKind, OutcomeReason
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import (
    AcceptDraw,
    DeclineDraw,
    Game,
    OfferDraw,
    Resign,
    forfeit,
)
from engine_service.rules.napoleonic.actions import EndPhase
from engine_service.rules.war.notation import read_text
from tests.engine_service.rules.war.helpers import position

RULESETS = rulesets(bytes(range(32)))
WAR = RULESETS["war"]
NAPOLEONIC = RULESETS["napoleonic"]


def war(**options: str) -> Game[Any]:
    return Game(WAR, WAR.new_game(WAR.resolve_options(options)))


def napoleonic(**options: str) -> Game[Any]:
    return Game(NAPOLEONIC, NAPOLEONIC.new_game(NAPOLEONIC.resolve_options(options)))


def refusal(game: Game[Any], side: str, action: Any) -> RuleError:
    with pytest.raises(RuleError) as refused:
        game.apply(side, action)
    return refused.value


def told(events: list[Event]) -> list[tuple[str, str, str | None]]:
    return [(e.kind, e.text, e.side) for e in events]


# --- resignation and forfeits -------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (OutcomeReason.RESIGNATION, "south resigns; north wins"),
        (OutcomeReason.TIME, "south loses on time; north wins"),
        (OutcomeReason.ABANDONED, "south abandoned the game; north wins"),
        # Any other reason the matchmaker might record is still a forfeit, said plainly.
        (OutcomeReason.DEPLOYMENT_FORFEIT, "south forfeits; north wins"),
    ],
)
def test_a_forfeit_gives_the_game_to_the_opponent_in_words(
    reason: OutcomeReason, message: str
) -> None:
    outcome = forfeit(WAR, "south", reason)
    assert (outcome.winner, outcome.reason, outcome.message) == ("north", reason, message)
    game, events = war().apply("south", Resign("south", reason))
    assert game.outcome == outcome
    assert told(events) == [("GAME_OVER", message, "north")]


def test_a_resignation_drops_the_standing_offer_and_counts_as_an_action() -> None:
    game, _ = war().apply("south", OfferDraw("south"))
    game, _ = game.apply("south", Resign("south"))
    assert game.draw_offer is None and game.draw_accepted == ()
    assert game.ply == 2


def test_after_a_resignation_nothing_more_is_played_and_no_move_is_listed() -> None:
    fresh = war()
    assert fresh.legal_actions() != []
    game, _ = fresh.apply("south", Resign("south"))
    assert game.legal_actions() == [] and game.to_act() == ()
    for side, action in (
        ("north", fresh.legal_actions()[0]),
        ("north", Resign("north")),
        ("north", OfferDraw("north")),
        ("south", Resign("south")),
    ):
        refused = refusal(game, side, action)
        assert refused.reason == Reason.GAME_OVER
        assert refused.message == "the game is over: south resigns; north wins"


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        (OutcomeReason.RESIGNATION, "green resigns and is out"),
        (OutcomeReason.TIME, "green loses on time and is out"),
        (OutcomeReason.ABANDONED, "green abandoned the game and is out"),
        (OutcomeReason.DEPLOYMENT_FORFEIT, "green forfeits and is out"),
    ],
)
def test_one_player_of_several_leaves_alone_and_the_game_goes_on(
    reason: OutcomeReason, said: str
) -> None:
    game, _ = napoleonic(scenario="three_way").apply("red", OfferDraw("red"))
    game, _ = game.apply("black", AcceptDraw("black"))
    game, events = game.apply("green", Resign("green", reason))
    assert told(events) == [("PLAYER_OUT", said, "green")]
    assert game.outcome is None and game.ended is None
    assert NAPOLEONIC.remaining(game.state) == ("red", "black")
    # Whoever leaves, a standing offer and its acceptances fall with it.
    assert game.draw_offer is None and game.draw_accepted == ()
    assert game.ply == 3


def test_the_last_enemy_leaving_ends_the_game_for_the_alliance_left() -> None:
    game = napoleonic(scenario="grand_battle_2v2")
    game, _ = game.apply("black", Resign("black"))
    game, events = game.apply("green", Resign("green", OutcomeReason.ABANDONED))
    outcome = game.outcome
    assert outcome is not None and game.ended is None  # ended by the rules (10.6)
    assert (outcome.winner, outcome.winners, outcome.reason) == (
        "south",
        ("red", "blue"),
        OutcomeReason.ENEMIES_OUT,
    )
    assert told(events) == [
        ("PLAYER_OUT", "green abandoned the game and is out", "green"),
        ("GAME_OVER", outcome.message, "south"),
    ]


def test_a_two_player_napoleonic_surrender_ends_the_game_at_once() -> None:
    _game, events = napoleonic().apply("black", Resign("black"))
    assert told(events) == [("GAME_OVER", "black resigns; red wins", "red")]


# --- draws by agreement, two players --------------------------------------------------------


def test_a_draw_offer_is_an_action_told_in_words() -> None:
    game, events = war().apply("north", OfferDraw("north"))
    assert told(events) == [("DRAW_OFFERED", "north offers a draw", "north")]
    assert (game.draw_offer, game.draw_accepted, game.ply, game.outcome) == ("north", (), 1, None)


def test_an_accepted_offer_is_a_draw_by_agreement_and_no_one_wins() -> None:
    game, _ = war().apply("north", OfferDraw("north"))
    game, events = game.apply("south", AcceptDraw("south"))
    assert game.outcome is not None and game.ended == game.outcome
    assert (game.outcome.winner, game.outcome.reason, game.outcome.message) == (
        None,
        OutcomeReason.AGREEMENT,
        "drawn by agreement",
    )
    assert told(events) == [("GAME_OVER", "drawn by agreement", None)]
    assert (game.draw_offer, game.draw_accepted, game.ply) == (None, (), 2)
    assert game.to_act() == () and game.legal_actions() == []


def test_a_declined_offer_is_gone_and_counts_as_an_action() -> None:
    game, _ = war().apply("north", OfferDraw("north"))
    game, events = game.apply("south", DeclineDraw("south"))
    assert told(events) == [("DRAW_DECLINED", "south declines the draw", "south")]
    assert (game.draw_offer, game.draw_accepted, game.ply, game.outcome) == (None, (), 2, None)


def test_draws_by_agreement_switched_off_refuse_an_offer() -> None:
    refused = refusal(war(draw_by_agreement="false"), "south", OfferDraw("south"))
    assert refused.reason == Reason.DRAW_BY_AGREEMENT_DISABLED
    assert refused.message == "draws by agreement are off in this game"


def test_an_offer_cannot_be_repeated_nor_made_over_the_other_side_s_offer() -> None:
    game, _ = war().apply("south", OfferDraw("south"))
    again = refusal(game, "south", OfferDraw("south"))
    assert (again.reason, again.message) == (
        Reason.ILLEGAL_ACTION,
        "south has already offered a draw",
    )
    over = refusal(game, "north", OfferDraw("north"))
    assert (over.reason, over.message) == (
        Reason.ILLEGAL_ACTION,
        "south has offered a draw: accept or decline it",
    )


@pytest.mark.parametrize("answer", [AcceptDraw, DeclineDraw])
def test_only_the_other_side_answers_a_standing_offer(answer: type[Any]) -> None:
    none = refusal(war(), "north", answer("north"))
    assert (none.reason, none.message) == (
        Reason.DRAW_NOT_OFFERED,
        "north has no draw offer to answer",
    )
    game, _ = war().apply("south", OfferDraw("south"))
    own = refusal(game, "south", answer("south"))
    assert (own.reason, own.message) == (
        Reason.DRAW_NOT_OFFERED,
        "south has no draw offer to answer",
    )


def test_a_meta_action_for_another_side_is_refused() -> None:
    game, _ = war().apply("south", OfferDraw("south"))
    for action in (AcceptDraw("north"), DeclineDraw("north"), OfferDraw("north")):
        refused = refusal(game, "south", action)
        assert (refused.reason, refused.message) == (
            Reason.NOT_YOUR_TURN,
            "south cannot act for north",
        )


def test_the_other_side_s_move_withdraws_its_offer() -> None:
    game = war()
    game, _ = game.apply("north", OfferDraw("north"))
    move = game.legal_actions()[0]
    moved, _ = game.apply("south", move)
    assert (moved.draw_offer, moved.draw_accepted, moved.ply) == (None, (), 2)
    refused = refusal(moved, "north", AcceptDraw("north"))
    assert refused.reason == Reason.DRAW_NOT_OFFERED


# --- draws by agreement, more players (docs/multiplayer.md) --------------------------------


def test_a_draw_waits_for_every_remaining_player_and_says_whom() -> None:
    game, _ = napoleonic(scenario="grand_battle_2v2").apply("red", OfferDraw("red"))
    game, events = game.apply("black", AcceptDraw("black"))
    assert told(events) == [
        ("DRAW_OFFERED", "black accepts the draw; awaiting blue, green", "black")
    ]
    assert (game.draw_offer, game.draw_accepted, game.ply) == ("red", ("black",), 2)
    game, events = game.apply("green", AcceptDraw("green"))
    assert told(events) == [("DRAW_OFFERED", "green accepts the draw; awaiting blue", "green")]
    assert game.draw_accepted == ("black", "green") and game.outcome is None
    again = refusal(game, "black", AcceptDraw("black"))
    assert (again.reason, again.message) == (
        Reason.ILLEGAL_ACTION,
        "black has already accepted the draw",
    )
    game, events = game.apply("blue", AcceptDraw("blue"))
    assert told(events) == [("GAME_OVER", "drawn by agreement", None)]
    assert game.outcome is not None and game.outcome.reason is OutcomeReason.AGREEMENT
    assert (game.draw_offer, game.draw_accepted, game.ply) == (None, (), 4)


def test_one_refusal_drops_the_offer_and_every_acceptance() -> None:
    game, _ = napoleonic(scenario="three_way").apply("red", OfferDraw("red"))
    game, _ = game.apply("black", AcceptDraw("black"))
    game, events = game.apply("green", DeclineDraw("green"))
    assert told(events) == [("DRAW_DECLINED", "green declines the draw", "green")]
    assert (game.draw_offer, game.draw_accepted) == (None, ())


def test_the_offering_player_s_own_actions_keep_its_offer_and_the_acceptances() -> None:
    game, _ = napoleonic(scenario="three_way").apply("red", OfferDraw("red"))
    game, _ = game.apply("black", AcceptDraw("black"))
    move = game.legal_actions()[0]
    assert game.actor(move) == "red"
    kept, _ = game.apply("red", move)
    assert (kept.draw_offer, kept.draw_accepted, kept.ply) == ("red", ("black",), 3)


def test_another_player_s_action_drops_the_offer_and_its_acceptances() -> None:
    game, _ = napoleonic(scenario="three_way").apply("black", OfferDraw("black"))
    game, _ = game.apply("green", AcceptDraw("green"))
    move = game.legal_actions()[0]
    dropped, _ = game.apply("red", move)
    assert (dropped.draw_offer, dropped.draw_accepted) == (None, ())


def test_a_player_who_is_out_neither_offers_nor_answers_a_draw() -> None:
    game, _ = napoleonic(scenario="three_way").apply("green", Resign("green"))
    offers = refusal(game, "green", OfferDraw("green"))
    assert (offers.reason, offers.message) == (Reason.ILLEGAL_ACTION, "green is out of the game")
    game, _ = game.apply("black", OfferDraw("black"))
    for answer in (AcceptDraw("green"), DeclineDraw("green")):
        answers = refusal(game, "green", answer)
        assert (answers.reason, answers.message) == (
            Reason.ILLEGAL_ACTION,
            "green is out of the game",
        )
    # Being out is said before the offer that stands (the out player could answer none).
    over = refusal(game, "green", OfferDraw("green"))
    assert over.message == "green is out of the game"
    # Red is the only other player still in: its acceptance is the draw.
    game, events = game.apply("red", AcceptDraw("red"))
    assert told(events) == [("GAME_OVER", "drawn by agreement", None)]


# --- endings by the rules ---------------------------------------------------------------------


def test_a_move_that_ends_the_game_by_the_rules_is_told_once() -> None:
    # North takes South's last man: South has no legal move and loses (Game of War 10).
    game: Game[Any] = Game(WAR, position("Mf5 tg6 ka10", side="N"))
    over, events = game.apply("north", read_text("g6xf5").action())
    assert over.outcome is not None and over.ended is None
    assert (over.outcome.winner, over.outcome.reason) == ("north", OutcomeReason.NO_LEGAL_MOVE)
    assert [e for e in events if e.kind is EventKind.GAME_OVER] == [
        Event(EventKind.GAME_OVER, over.outcome.message, side="north")
    ]
    assert over.to_act() == () and over.ply == 1
    refused = refusal(over, "south", Resign("south"))
    assert refused.reason == Reason.GAME_OVER
    assert refused.message == f"the game is over: {over.outcome.message}"


class _QuietWar(type(WAR)):  # type: ignore[misc]
    """The Game of War with rules that report no GAME_OVER of their own."""

    def apply(self, state: Any, action: Any) -> tuple[Any, list[Event]]:
        state, events = super().apply(state, action)
        return state, [e for e in events if e.kind is not EventKind.GAME_OVER]


def test_a_game_ended_by_its_rules_always_says_so_even_when_the_rules_do_not() -> None:
    quiet = _QuietWar()
    game: Game[Any] = Game(quiet, position("Mf5 tg6 ka10", side="N"))
    over, events = game.apply("north", read_text("g6xf5").action())
    assert over.outcome is not None
    assert events[:-1] != [] and all(e.kind is not EventKind.GAME_OVER for e in events[:-1])
    assert events[-1] == Event(EventKind.GAME_OVER, over.outcome.message, side="north")


# --- batches ----------------------------------------------------------------------------------


def test_a_batch_applies_every_action_in_order_and_tells_every_event() -> None:
    game = war()
    move = game.legal_actions()[0]
    after, events = game.apply_all([("north", OfferDraw("north")), ("south", move)])
    step, first = game.apply("north", OfferDraw("north"))
    last, second = step.apply("south", move)
    assert after == last and after.ply == 2 and after.draw_offer is None
    assert events == first + second
    assert game.apply_all([]) == (game, [])


def test_a_refused_batch_names_the_refused_action_and_changes_nothing() -> None:
    game = war()
    with pytest.raises(RuleError) as refused:
        game.apply_all(
            [
                ("north", OfferDraw("north")),
                ("south", OfferDraw("south")),
                ("south", Resign("south")),
            ]
        )
    assert refused.value.index == 1
    assert refused.value.reason == Reason.ILLEGAL_ACTION
    assert refused.value.message == "north has offered a draw: accept or decline it"
    assert game.ply == 0 and game.draw_offer is None and game.outcome is None


# --- the words of the meta actions -------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "action"),
    [
        ("resign", Resign("south")),
        ("Surrender", Resign("south")),  # Napoleonic Chess calls it surrender (8)
        ("timeout", Resign("south", OutcomeReason.TIME)),
        ("ABANDON", Resign("south", OutcomeReason.ABANDONED)),
        ("offer draw", OfferDraw("south")),
        ("  Accept \t DRAW ", AcceptDraw("south")),
        ("decline draw", DeclineDraw("south")),
    ],
)
def test_meta_words_are_read_for_the_side_to_act_in_any_case_and_spacing(
    words: str, action: Any
) -> None:
    assert war().parse(words) == action


def test_meta_words_are_read_for_the_side_named() -> None:
    game = war()
    assert game.to_act() == ("south",)
    assert game.parse("resign", "north") == Resign("north")
    assert game.parse("decline draw", "north") == DeclineDraw("north")


def test_meta_words_are_still_read_once_the_game_is_over() -> None:
    game, _ = war().apply("south", Resign("south"))
    assert game.parse("accept draw", "north") == AcceptDraw("north")


@pytest.mark.parametrize(
    ("action", "words"),
    [
        (Resign("north"), "resign"),
        (Resign("north", OutcomeReason.TIME), "timeout"),
        (Resign("north", OutcomeReason.ABANDONED), "abandon"),
        (OfferDraw("north"), "offer draw"),
        (AcceptDraw("north"), "accept draw"),
        (DeclineDraw("north"), "decline draw"),
    ],
)
def test_meta_actions_are_written_in_their_words_and_read_back(action: Any, words: str) -> None:
    game = war()
    assert game.format(action) == words
    assert game.parse(words, "north") == action
    assert game.actor(action) == "north"


def test_game_actions_are_written_and_read_by_the_game_s_own_notation() -> None:
    game = napoleonic()
    move = game.legal_actions()[0]
    text = game.format(move)
    assert text == NAPOLEONIC.format_action(game.state, move)
    assert game.parse(text) == move
    assert game.actor(move) == "red"


def test_a_game_action_is_read_for_the_side_named_or_else_the_side_to_act() -> None:
    game = napoleonic(scenario="three_way")
    assert game.to_act() == ("red",)
    assert game.parse("end") == EndPhase("red")
    assert game.parse("end", "black") == EndPhase("black")


def test_meta_words_for_a_player_not_in_the_scenario_are_refused_naming_its_players() -> None:
    with pytest.raises(RuleError) as refused:
        napoleonic(scenario="three_way").parse("surrender", "blue")
    assert refused.value.reason == Reason.ILLEGAL_ACTION
    assert refused.value.message == "unknown side 'blue'; sides: red, black, green"

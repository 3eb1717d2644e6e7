"""One conformance suite for every registered game (OpenSpiel's games_sim_test, here).

It iterates the registry (`engine_service.rules.games`), so a game is tested as soon as it
is registered, and a registered game without the data below fails here:

- random playouts under each game's defaults, presets and deployments: at every position
  the state is consistent, goes over the wire and back unchanged (core -> proto -> core, in
  the structured form and as the position alone), its position text reads back to an equal
  game and is canonical (the text of what it reads is the text itself), the legal actions
  all apply (by `apply` and by the fast `play`, to the same state), their notation reads
  back to the same action, and a finished game offers nothing more; at the end the game's
  record replays to the same final state;
- the same with draw offers answered and games ended by the players' hands (resignation,
  time, abandonment, agreement), so every field of a position text is exercised;
- every option set's initial state is its own set-up text;
- golden transcripts of scripted games (`golden.py`, `<game>/golden/`);
- perft counts (`<game>/perft.json`), the deep ones only with `-m slow`.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from engine_service.ai import strategy_for
from engine_service.convert import conversions
from engine_service.convert.base import Conversions
from engine_service.rules import games, rulesets
from engine_service.rules.base import AnyRuleset, OutcomeReason
from engine_service.rules.errors import RuleError
from engine_service.rules.game import AcceptDraw, DeclineDraw, Game, OfferDraw, Resign
from engine_service.rules.position import read_position, write_position
from engine_service.rules.record import parse_record, record_of, replay
from tests import seeds
from tests.engine_service.convert.helpers import compact, wire
from tests.engine_service.rules.golden import path_of, scripts_of, transcripts

GAMES = [entry.id for entry in games()]
HERE = Path(__file__).parent
PLAYOUTS = 6
MAX_PLIES = 400
ACTIONS_CHECKED_PER_POSITION = 25  # in depth; a sample checks fewer, in more games a week
SAMPLE_ACTIONS_CHECKED = 8
SEAL_KEY = bytes(range(32))
# Option sets beyond the defaults and presets, each a way through the game the defaults do
# not take (deployments, passing, huffing): played out fewer times.
MORE_OPTIONS: dict[str, list[dict[str, str]]] = {
    "war": [{"passing_allowed": "true", "compulsion": "huff"}],
    "battle": [{"forced_reply": "lose_figure", "first_player": "defender"}],
    "napoleonic": [
        {"scenario": "attack_at_dawn"},
        {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
        {"scenario": "attack_at_dawn", "illegal_reveal": "redeploy"},
        {"deployment": "marching_orders", "split_two_square_moves": "true"},
        {"scenario": "hill_and_stream", "repetition_draw": "3"},
    ],
}
# Napoleonic Chess 10.6: the multiplayer scenarios, with every value of the multiplayer
# options; each set is its own test (the boards are larger and the games longer).
MULTIPLAYER_OPTIONS: list[dict[str, str]] = [
    {"scenario": "grand_battle_2v2"},
    {"scenario": "grand_battle_2v2", "on_commander_loss": "army_stays_inert"},
    {"scenario": "three_way", "on_commander_loss": "army_passes_to_ally"},
    {"scenario": "three_way", "deployment": "attack_at_dawn"},
    {"scenario": "grand_battle_2v2", "deployment": "marching_orders"},
    {"scenario": "divided_command"},
    {"scenario": "divided_command", "divided_command_turns": "merged_side_turn"},
]
MORE_PLAYOUTS = 2


def _option_sets(ruleset: AnyRuleset) -> list[tuple[str, Any, int]]:
    sets: list[tuple[str, Any, int]] = [("defaults", ruleset.resolve_options({}), PLAYOUTS)]
    sets += [
        (f"preset {name}", ruleset.resolve_options({}, name), PLAYOUTS) for name in ruleset.presets
    ]
    sets += [
        (str(given), ruleset.resolve_options(given), MORE_PLAYOUTS)
        for given in MORE_OPTIONS.get(ruleset.id, [])
    ]
    return sets


def _check_wire_and_text(game: Game[Any], wired: Conversions) -> None:
    """The game survives the wire in both forms, and its position text is canonical."""
    back = wired.game_from_proto(wire(wired, game))
    assert (back.state, back.ended, back.draw_offer, back.ply) == (
        game.state,
        game.ended,
        game.draw_offer,
        game.ply,
    ), "the wire round trip (structured form) changed the game"
    text = write_position(game)
    again = read_position(game.ruleset, text)
    assert again == game, f"the position text does not read back: {text}"
    # Equal states, made apart, hash alike (the memos of the rules key on the state).
    assert hash(again.state) == hash(game.state), f"equal states hash apart: {text}"
    assert hash(back.state) == hash(game.state), "equal states hash apart (structured form)"
    assert write_position(again) == text, f"the position text is not canonical: {text}"
    assert write_position(back) == text, "the structured form writes another text"
    assert wired.game_from_proto(compact(wired, game)) == game, "the position alone changed it"


def _check_position(
    ruleset: AnyRuleset, game: Game[Any], rng: random.Random, wired: Conversions, checked: int
) -> None:
    state = game.state
    assert ruleset.check_state(state) == [], ruleset.check_state(state)
    _check_wire_and_text(game, wired)
    text = ruleset.setup_text(state)
    assert ruleset.setup_text(ruleset.new_game(ruleset.options_of(state), text)) == text
    actions = ruleset.legal_actions(state)
    if game.outcome is not None:
        assert actions == [] and game.to_act() == ()
        return
    assert len(set(actions)) == len(actions), "legal actions repeat"
    for action in rng.sample(actions, min(len(actions), checked)):
        text = ruleset.format_action(state, action)
        side = ruleset.actor(state, action)
        assert ruleset.parse_action(state, text, side) == action, text
        after, _ = ruleset.apply(state, action)
        assert ruleset.play(state, action) == after, text
        assert ruleset.check_state(after) == [], (text, ruleset.check_state(after))


# Each game's option sets one test each: they spread over the test workers, and each stays
# well within the timeout on a busy machine. `make test` plays a sample of half of them
# (SAMPLED games each, their seeds rotating from run to run, and the half from day to day:
# `tests/seeds.py`; a Napoleonic game is long); `-m slow` plays the fixed games of every set
# in depth (the counts of `_option_sets` and MORE_PLAYOUTS).
OPTION_SETS = seeds.in_turn(
    [
        pytest.param(game_id, index, id=f"{game_id}-" + re.sub(r"[^\w=]+", "-", label).strip("-"))
        for game_id in GAMES
        for index, (label, _options, _playouts) in enumerate(
            _option_sets(rulesets(SEAL_KEY)[game_id])
        )
    ],
    every=2,
)
# Each of the multiplayer sets is a game of three or four players on a larger board: the
# sample plays a third of them, each in turn.
MULTIPLAYER_SETS = seeds.in_turn(
    [pytest.param(given, id="-".join(given.values())) for given in MULTIPLAYER_OPTIONS], every=3
)
SAMPLED = 1


def _seeds(in_depth: bool, playouts: int) -> list[str]:
    """The seeds of the games to play: the fixed ones in depth, else a rotating sample."""
    return [str(seed) for seed in range(playouts)] if in_depth else seeds.sampled(SAMPLED)


@pytest.mark.parametrize(("game_id", "index", "in_depth"), OPTION_SETS)
@pytest.mark.usefixtures("playout_seed")
def test_random_playouts_keep_every_invariant(game_id: str, index: int, in_depth: bool) -> None:
    ruleset = rulesets(SEAL_KEY)[game_id]
    label, options, playouts = _option_sets(ruleset)[index]
    _play_out(ruleset, label, options, _seeds(in_depth, playouts), _checked(in_depth))


@pytest.mark.parametrize(("given", "in_depth"), MULTIPLAYER_SETS)
@pytest.mark.usefixtures("playout_seed")
def test_random_playouts_keep_every_invariant_with_more_players(
    given: dict[str, str], in_depth: bool
) -> None:
    ruleset = rulesets(SEAL_KEY)["napoleonic"]
    options = ruleset.resolve_options(given)
    _play_out(ruleset, str(given), options, _seeds(in_depth, MORE_PLAYOUTS), _checked(in_depth))


def _checked(in_depth: bool) -> int:
    """How many of a position's legal actions are applied and read back."""
    return ACTIONS_CHECKED_PER_POSITION if in_depth else SAMPLE_ACTIONS_CHECKED


def _play_out(
    ruleset: AnyRuleset, label: str, options: Any, games: list[str], checked: int
) -> None:
    wired = conversions(rulesets(SEAL_KEY))
    for seed in games:
        rng = random.Random(f"{ruleset.id}-{label}-{seed}")
        initial: Game[Any] = Game(ruleset, ruleset.new_game(options))
        game = initial
        played: list[tuple[str, Any]] = []
        for _ply in range(MAX_PLIES):
            _check_position(ruleset, game, rng, wired, checked)
            if game.outcome is not None:
                break
            action = ruleset.random_action(game.state, rng)
            assert action is not None, "an unfinished game must offer an action"
            side = ruleset.actor(game.state, action)
            game, _ = game.apply(side, action)
            played.append((side, action))
        text = record_of(initial, played)
        final, _ = replay(ruleset, parse_record(text))
        assert final.state == game.state, f"{label} seed {seed}: replay differs"


ENDINGS = (
    OutcomeReason.RESIGNATION,
    OutcomeReason.TIME,
    OutcomeReason.ABANDONED,
    OutcomeReason.AGREEMENT,
)


@pytest.mark.parametrize("game_id", GAMES)
def test_position_texts_carry_offers_and_every_ending_by_the_players(game_id: str) -> None:
    ruleset = rulesets(SEAL_KEY)[game_id]
    wired = conversions(rulesets(SEAL_KEY))
    sides = [info.id for info in ruleset.sides]

    def other(side: str) -> str:
        return next(s for s in sides if s != side)

    offers = endings = 0
    for number, ending in enumerate(ENDINGS * 3):
        rng = random.Random(f"{game_id}-{ending}-{number}")
        game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
        for _ply in range(rng.randrange(5, 120)):
            if game.outcome is not None:
                break
            if game.draw_offer is None and rng.random() < 0.1:
                side = rng.choice(sides)
                game, _ = game.apply(side, OfferDraw(side))
                offers += 1
            elif game.draw_offer is not None and rng.random() < 0.3:
                answer = other(game.draw_offer)
                game, _ = game.apply(answer, DeclineDraw(answer))
            else:
                action = ruleset.random_action(game.state, rng)
                assert action is not None
                game, _ = game.apply(ruleset.actor(game.state, action), action)
            _check_wire_and_text(game, wired)
        if game.outcome is not None:
            continue  # the rules ended it first
        if ending is OutcomeReason.AGREEMENT:
            if game.draw_offer is None:
                game, _ = game.apply(sides[0], OfferDraw(sides[0]))
            answer = other(game.draw_offer or "")
            game, _ = game.apply(answer, AcceptDraw(answer))
        else:
            side = rng.choice(sides)
            game, _ = game.apply(side, Resign(side, ending))
        assert game.ended is not None and game.ended.reason is ending
        _check_wire_and_text(game, wired)
        endings += 1
    assert offers and endings >= len(ENDINGS)


@pytest.mark.parametrize("game_id", GAMES)
def test_a_finished_game_refuses_every_action(game_id: str) -> None:
    ruleset = rulesets()[game_id]
    game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
    side = ruleset.sides[0].id
    over, _ = game.apply(side, Resign(side))
    assert over.outcome is not None and over.outcome.winner == ruleset.sides[1].id
    assert over.legal_actions() == [] and over.to_act() == ()
    action = ruleset.legal_actions(game.state)[0]
    with pytest.raises(RuleError) as error:
        over.apply(ruleset.actor(game.state, action), action)
    assert error.value.reason == "GAME_OVER"


@pytest.mark.parametrize("game_id", GAMES)
def test_draw_offer_stands_until_answered(game_id: str) -> None:
    ruleset = rulesets()[game_id]
    game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
    first, second = (info.id for info in ruleset.sides)
    offered, _ = game.apply(first, OfferDraw(first))
    assert offered.draw_offer == first
    with pytest.raises(RuleError) as error:
        offered.apply(first, offered.parse("accept draw", first))
    assert error.value.reason == "DRAW_NOT_OFFERED"
    drawn, _ = offered.apply(second, offered.parse("accept draw", second))
    assert drawn.outcome is not None and drawn.outcome.winner is None


@pytest.mark.parametrize("game_id", GAMES)
def test_options_are_checked_and_named(game_id: str) -> None:
    ruleset = rulesets()[game_id]
    with pytest.raises(RuleError) as error:
        ruleset.resolve_options({"no_such_option": "1"})
    assert error.value.reason == "UNKNOWN_OPTION" and "no_such_option" in error.value.message
    for spec in ruleset.option_specs:
        assert spec.parse(spec.default) is not None or spec.default == ""
        if spec.allowed and spec.kind.value == "enum":
            with pytest.raises(RuleError) as bad:
                ruleset.resolve_options({spec.name: "not-a-value"})
            assert bad.value.reason == "INVALID_OPTION_VALUE"
            assert spec.name in bad.value.message
            assert all(value in bad.value.message for value in spec.allowed)


@pytest.mark.parametrize("game_id", GAMES)
def test_every_initial_state_is_its_set_up_text(game_id: str) -> None:
    ruleset = rulesets(SEAL_KEY)[game_id]
    for label, options, _playouts in _option_sets(ruleset):
        initial = ruleset.new_game(options)
        again = ruleset.new_game(options, ruleset.setup_text(initial))
        assert again == initial, label


@pytest.mark.parametrize("game_id", GAMES)
def test_every_layer_finds_the_game_in_the_registry(game_id: str) -> None:
    ruleset = rulesets()[game_id]
    assert conversions(rulesets()).converter(game_id).ruleset is ruleset
    state = ruleset.new_game(ruleset.resolve_options({}))
    side = ruleset.to_act(state)[0]
    assert isinstance(strategy_for(ruleset).evaluate(state, side), float)


# --- golden transcripts ---------------------------------------------------------------------

GOLDEN = [(game_id, name) for game_id in GAMES for name in scripts_of(game_id).SCRIPTS]


@pytest.mark.parametrize(("game_id", "name"), GOLDEN, ids=[f"{g}-{n}" for g, n in GOLDEN])
def test_golden_transcript(game_id: str, name: str) -> None:
    stored = path_of(game_id, name).read_text(encoding="utf-8")
    fresh = transcripts(game_id)[name]
    if fresh != stored:
        diff = "".join(
            difflib.unified_diff(
                stored.splitlines(keepends=True), fresh.splitlines(keepends=True), "stored", "now"
            )
        )
        pytest.fail(
            f"transcript {name} differs from {path_of(game_id, name)}; if the change is "
            "intended, regenerate with `.venv/bin/python -m tests.engine_service.rules.golden "
            f"--regenerate {game_id}`:\n{diff}"
        )


def test_every_game_has_golden_transcripts() -> None:
    assert all(scripts_of(game_id).SCRIPTS for game_id in GAMES)


# --- perft ----------------------------------------------------------------------------------


def _perft_cases(game_id: str) -> list[Any]:
    data = json.loads((HERE / game_id / "perft.json").read_text())["positions"]
    return [
        pytest.param(
            game_id,
            entry,
            depth,
            # A deep count is minutes of CPU: its bound is for a hang, not for a busy machine.
            marks=[pytest.mark.slow, pytest.mark.timeout(3600)]
            if depth > entry["fast_depth"]
            else [],
            id=f"{game_id}-{entry['name'][:40]}-d{depth}",
        )
        for entry in data
        for depth in range(1, len(entry["counts"]) + 1)
    ]


@pytest.mark.parametrize(
    ("game_id", "entry", "depth"), [case for g in GAMES for case in _perft_cases(g)]
)
def test_perft(game_id: str, entry: dict[str, Any], depth: int) -> None:
    ruleset = rulesets()[game_id]
    state = ruleset.new_game(ruleset.resolve_options(entry["options"]), entry["setup"])
    assert ruleset.perft(state, depth) == entry["counts"][depth - 1]

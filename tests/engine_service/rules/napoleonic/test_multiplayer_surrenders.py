"""A player who leaves a game of alliances (10.6) leaves a state the engine accepts, and
the game goes on as docs/multiplayer.md says: the first player leaving
a deployment, an ally leaving after a defender supported a unit only it attacked, and an
ally leaving an inert army behind with its attacks declared."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from engine_service.rules.base import Event, OutcomeReason
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game, Resign
from engine_service.rules.napoleonic.actions import (
    Attack,
    Commit,
    EndPhase,
    NapoleonicAction,
    Place,
    Reveal,
    Support,
)
from engine_service.rules.napoleonic.deployment import (
    commitment,
    legal_placements,
    random_deployment,
    random_player_array,
)
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import SEALED_RULESET
from tests.engine_service.rules.napoleonic.test_multiplayer import ALLIES, play, start

RULESET = SEALED_RULESET
SCENARIOS = ("three_way", "grand_battle_2v2", "divided_command")
DEPLOYMENTS = {
    "marching_orders": {"deployment": "marching_orders"},
    "commit_reveal": {"deployment": "attack_at_dawn"},
    "sealed": {"deployment": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
}
FORFEITS = (OutcomeReason.RESIGNATION, OutcomeReason.TIME, OutcomeReason.ABANDONED)


def accepted(game: Game[Any]) -> None:
    """The engine accepts the state and, while the game goes on, lists its actions."""
    assert RULESET.check_state(game.state) == []
    if game.outcome is None:
        assert game.to_act()
        assert game.state.in_game(game.state.active)


def deploy_the_rest(game: Game[Any], seed: int) -> Game[Any]:
    """Every player still deploying does so (random arrays, revealed honestly)."""
    rng = random.Random(seed)
    while game.outcome is None and game.state.phase in (
        Phase.PLACEMENT,
        Phase.DEPLOY_COMMIT,
        Phase.DEPLOY_REVEAL,
        Phase.DEPLOY_SEALED,
    ):
        side = game.to_act()[0]
        state = game.state
        action: NapoleonicAction
        if state.phase is Phase.PLACEMENT:
            kind, cell = legal_placements(state, side)[0]
            action = Place(side, kind, state.geo.names[cell])
        else:
            action = random_deployment(state, side, rng)
        game, _events = game.apply(side, action)
        accepted(game)
    return game


@pytest.mark.parametrize("reason", FORFEITS, ids=lambda r: r.value.lower())
@pytest.mark.parametrize("mode", sorted(DEPLOYMENTS))
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_first_player_leaving_a_deployment_passes_the_first_move_on(
    scenario: str, mode: str, reason: OutcomeReason
) -> None:
    """MP1: the first player resigns, loses on time or abandons during a deployment: the
    next player in the turn order still in the game moves first, and the deployment goes
    on without the leaver."""
    options = {"scenario": scenario, **DEPLOYMENTS[mode]}
    game: Game[Any] = Game(RULESET, RULESET.new_game(RULESET.resolve_options(options)))
    first = game.state.turn_order[0]
    game, _events = game.apply(first, Resign(first, reason))
    accepted(game)
    following = game.state.turn_order[1]
    assert game.state.active == following
    if mode == "marching_orders":
        assert game.to_act() == (following,)  # placement passes along the turn order
    game = deploy_the_rest(game, 1)
    assert game.state.phase is Phase.MOVEMENT
    assert game.state.active == following
    assert first not in {u.side for u in game.state.units}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_first_player_forfeiting_its_reveal_passes_the_first_move_on(
    scenario: str,
) -> None:
    """MP1: the first player's reveal does not match its commitment: it is out (with its
    army's co-commanders), and the next player in the turn order still in the game moves
    first once the others have revealed."""
    state = RULESET.new_game(
        RULESET.resolve_options({"scenario": scenario, "deployment": "attack_at_dawn"})
    )
    arrays = {}
    for side in state.turn_order:
        placements, salt = random_player_array(state, side, 3)
        arrays[side] = (placements, salt)
        state = play(state, Commit(side, commitment(placements, salt)))
    first, following = state.turn_order[:2]
    state = play(state, Reveal(first, arrays[first][0], bytes(32)))  # the wrong salt
    game: Game[Any] = Game(RULESET, state)
    accepted(game)
    if scenario == "divided_command":  # red's army is blue's too: the south is out
        assert state.outcome is not None and state.outcome.winner == "north"
        return
    assert state.active == following
    for side in state.turn_order[1:]:
        if state.in_game(side):
            state = play(state, Reveal(side, *arrays[side]))
    assert (state.phase, state.active) == (Phase.MOVEMENT, following)


@pytest.mark.parametrize("loss", ["remove_army", "army_stays_inert", "army_passes_to_ally"])
def test_an_array_revealed_by_a_player_who_then_leaves_goes_as_on_commander_loss_says(
    loss: str,
) -> None:
    """A player reveals its array, then surrenders before the others have revealed theirs:
    when the arrays are laid out, its own goes as its army on the board would have gone
    (found by the deep property test: laid out whole, it left a player out with units under
    remove_army, a state the engine refused)."""
    state = RULESET.new_game(
        RULESET.resolve_options(
            {
                "scenario": "grand_battle_2v2",
                "deployment": "attack_at_dawn",
                "on_commander_loss": loss,
            }
        )
    )
    arrays = {}
    for side in state.turn_order:
        arrays[side] = random_player_array(state, side, 5)
        state = play(state, Commit(side, commitment(*arrays[side])))
    leaver, *others = state.turn_order
    state = play(state, Reveal(leaver, *arrays[leaver]))
    game: Game[Any] = Game(RULESET, state)
    game, _events = game.apply(leaver, Resign(leaver, OutcomeReason.RESIGNATION))
    for side in others:
        game, _events = game.apply(side, Reveal(side, *arrays[side]))
        accepted(game)
    state = game.state
    assert state.phase is Phase.MOVEMENT
    sides = [unit.side for unit in state.units]
    laid_out = len(arrays[leaver][0])
    ally = next(iter(state.allies(leaver)))
    if loss == "remove_army":
        assert leaver not in sides
    elif loss == "army_stays_inert":
        assert sides.count(leaver) == laid_out and not state.in_game(leaver)
    else:  # its Guards do not pass (10.6): the rest of its army does, to its ally
        assert leaver not in sides and sides.count(ally) == 2 * laid_out - 1


# Red and blue (south) against black and green (north). Red's artillery can attack black's
# d5, blue's artillery black's c6, which black's b6 can support.
SPLIT = (
    f"board 8x8; {ALLIES}; red: d4=A#R_A h1=G; black: d5=I#B_I c6=I#B_I2 b6=I#B_I3 a8=G; "
    "blue: c5=A#U_A a1=G; green: f7=I h8=G; turn: red movement 0"
)
SPLIT_ATTACKS = (
    EndPhase("red"),
    Attack("red", "R_A", "B_I"),
    Attack("blue", "U_A", "B_I2"),
)


def resign(state: NapoleonicState, side: str) -> NapoleonicState:
    game, _events = Game(RULESET, state).apply(side, Resign(side))
    accepted(game)
    return game.state


def test_a_support_of_a_unit_only_a_leaving_ally_attacked_is_withdrawn() -> None:
    """MP2 (on_commander_loss remove_army): blue's attack leaves with blue's army, so black's
    support of the unit only blue attacked has no effect (7.2) and is withdrawn."""
    state = play(start(SPLIT), *SPLIT_ATTACKS, EndPhase("red"), EndPhase("blue"))
    state = play(state, Support("black", "B_I3", "B_I2"))
    state = resign(state, "blue")
    assert state.turn.attacks == (("R_A", "B_I"),)
    assert state.turn.supports == ()
    assert RULESET.to_act(state) == ("black", "green")
    state = play(state, EndPhase("black"), EndPhase("green"))
    assert state.unit("B_I") is None and state.unit("B_I2") is not None


@pytest.mark.parametrize("phase", ["attack_declaration", "defence"])
def test_an_inert_army_never_fights_the_attacks_it_declared(phase: str) -> None:
    """MP3 (army_stays_inert): blue declares an attack that would take black's c6 and
    surrenders before resolution: its units stay on the board, inert, and their attack is
    not fought."""
    state = play(start(SPLIT, on_commander_loss="army_stays_inert"), *SPLIT_ATTACKS)
    if phase == "defence":
        state = play(state, EndPhase("blue"), EndPhase("red"))
    state = resign(state, "blue")
    assert state.unit("U_A") is not None
    assert state.turn.attacks == (("R_A", "B_I"),)
    if phase == "attack_declaration":
        state = play(state, EndPhase("red"))
    state = play(state, EndPhase("black"), EndPhase("green"))
    assert state.unit("B_I") is None  # red's attack is fought: 2 against 1
    assert state.unit("B_I2") is not None  # blue's is not
    assert (state.phase, RULESET.to_act(state)) == (Phase.ADVANCE, ("red",))


def test_an_inert_army_leaving_in_the_advance_keeps_the_advance_going() -> None:
    """MP3 (army_stays_inert): blue, whose attack took black's c6, surrenders while red
    advances: blue's attack is withdrawn with it, and red advances as before."""
    state = play(start(SPLIT, on_commander_loss="army_stays_inert"), *SPLIT_ATTACKS)
    state = play(state, EndPhase("blue"), EndPhase("red"), EndPhase("black"), EndPhase("green"))
    assert state.phase is Phase.ADVANCE and state.unit("B_I2") is None
    state = resign(state, "blue")
    assert [a for a, _t in state.turn.attacks] == ["R_A"]
    assert [v.eligible for v in state.turn.vacancies] == [("R_A",)]
    state = play(state, EndPhase("red"))
    assert (state.phase, state.active) == (Phase.MOVEMENT, "black")


LONE = "board 8x8; red: d4=A#R_A h1=G; black: d5=I#B_I a8=G; turn: red attack_declaration 0"
ALLIED = (
    f"board 8x8; {ALLIES}; red: d4=A#R_A h1=G; black: d5=I#B_I a8=G; blue: a1=G; "
    "green: {green} h8=G; turn: red attack_declaration 0; pending: red blue"
)


@pytest.mark.parametrize(
    ("text", "skip", "words"),
    [
        (LONE, "true", "1 attack declared; black has no legal support, so"),
        (ALLIED.format(green="g7=I"), "true", "; black and green have no legal support, so"),
        (LONE, "false", "1 attack declared: black allocates supports"),
        (ALLIED.format(green="e5=I"), "false", ": black and green allocate supports"),
    ],
)
def test_the_defenders_are_named_in_good_grammar(text: str, skip: str, words: str) -> None:
    """'black has no legal support', 'black and green have no legal support' (and
    'allocates' / 'allocate supports')."""
    state = start(text, auto_skip_defence=skip)
    state = play(state, Attack("red", "R_A", "B_I"))
    enders = ("red",) if state.turn.pending_players == () else ("red", "blue")
    events: list[Event] = []
    for side in enders:
        state, events = RULESET.apply(state, EndPhase(side))
    assert any(words in e.text for e in events), [e.text for e in events]


def test_attacks_on_an_inert_army_with_no_ally_left_are_resolved_at_once() -> None:
    """army_stays_inert: green surrendered and stays on the board, and nobody in the game
    is its ally; red's attack on it needs no defence phase (and once raised INTERNAL)."""
    text = (
        "board 8x8; players: red/red black/black green/green!surrendered; "
        "red: d4=A#R_A h1=G; black: a8=G; green: d5=I#G_I h8=G; turn: red movement 0"
    )
    state = start(text, on_commander_loss="army_stays_inert")
    state, events = RULESET.apply(play(state, Attack("red", "R_A", "G_I")), EndPhase("red"))
    assert state.unit("G_I") is None  # 2 against 1
    assert (state.phase, RULESET.to_act(state)) == (Phase.ADVANCE, ("red",))
    assert any("no player in the game defends" in e.text for e in events)


def test_the_last_reveal_awaited_is_refused_on_a_copy_withholding_an_array() -> None:
    """Green has left; red's reveal is withheld from black's copy: black's reveal is the
    last one awaited, so on that copy it is refused (INVALID_STATE), never laid out with
    red's army missing."""
    state = RULESET.new_game(
        RULESET.resolve_options({"scenario": "three_way", "deployment": "attack_at_dawn"})
    )
    arrays = {}
    for side in ("red", "black", "green"):
        arrays[side] = random_player_array(state, side, 5)
        state = play(state, Commit(side, commitment(*arrays[side])))
    state = resign(state, "green")
    state = play(state, Reveal("red", *arrays["red"]))
    assert state.deployment is not None
    copy = state.evolve(
        deployment=replace(state.deployment, reveals=(("red", ()),), withheld=frozenset({"red"}))
    )
    assert RULESET.check_state(copy) == []
    with pytest.raises(RuleError) as refusal:
        RULESET.apply(copy, Reveal("black", *arrays["black"]))
    assert refusal.value.reason == "INVALID_STATE"
    laid_out = play(state, Reveal("black", *arrays["black"]))
    assert {u.side for u in laid_out.units} == {"red", "black"}

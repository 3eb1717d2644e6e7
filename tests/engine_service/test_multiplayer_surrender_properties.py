"""Every state the engine returns is one it accepts, whoever leaves a game and whenever
(docs/multiplayer.md): a stateful property test over a real engine on loopback.

A Hypothesis state machine plays random games of Napoleonic Chess through the service:
every scenario (the 3- and 4-player ones, and the standard 1-v-1), every deployment (the
fixed arrays, Marching Orders, Attack at Dawn committed and revealed or sealed), both
surrender rulings of docs/multiplayer.md (`on_commander_loss` `remove_army`,
`army_stays_inert`, and `army_passes_to_ally`), either divided-command turn ruling and any
first player. Between stretches of play (at random, or seeking combat) it injects a player
leaving in every way the engine is told of it: `Resign` with RESIGNATION (a player
resigns), TIME and ABANDONED (what the matchmaker sends when a clock runs out or a player
abandons, `matchmaker.play`), and a reveal that forfeits (the wrong salt, or an honestly
committed illegal array). A departure comes at once or is aimed at a delicate moment (a
deployment, a movement under way, an ally's declaration, a defence, a support of a unit
only an ally attacked, an advance), and the one who leaves is drawn by role (the active
player, an ally who declared attacks, a defender, anyone).

Every state an RPC returns is sent back to the service: `ListLegalActions` must accept it,
agree on who acts, and, unless the game is over, list something to do (secret deployments
are not listed; someone must still be to act). Units of players out of the game never
attack (an inert army never acts). The default run plays a few short games drawn from the
run's rotating seed (`tests/seeds.py`; `WARGAME_TEST_SEED` plays them again); the `slow` run
(`make test-slow`) plays many longer ones.
"""

from __future__ import annotations

import random
from typing import Any

import grpc
import hypothesis
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from engine_service.convert import conversions
from engine_service.rules import rulesets
from engine_service.rules.game import Game
from engine_service.rules.napoleonic.actions import (
    Attack,
    Commit,
    EndPhase,
    Move,
    NapoleonicAction,
    Reveal,
    Seal,
    Support,
)
from engine_service.rules.napoleonic.deployment import (
    commitment,
    random_placements,
    random_player_array,
)
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.conftest import TEST_SEAL_KEY
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

pytestmark = pytest.mark.integration

RULESETS = rulesets(TEST_SEAL_KEY)
CONVERSIONS = conversions(RULESETS)
SCENARIOS = {
    "standard": ("red", "black"),
    "three_way": ("red", "black", "green"),
    "grand_battle_2v2": ("red", "black", "blue", "green"),
    "divided_command": ("red", "black", "blue", "green"),
}
DEPLOYMENTS = {
    "fixed": {},
    "marching_orders": {"deployment": "marching_orders"},
    "commit_reveal": {"deployment": "attack_at_dawn"},
    "sealed": {"deployment": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
}
LOSSES = ("remove_army", "army_stays_inert", "army_passes_to_ally")
REASONS = (
    game_pb2.OUTCOME_REASON_RESIGNATION,
    game_pb2.OUTCOME_REASON_TIME,
    game_pb2.OUTCOME_REASON_ABANDONED,
)
SECRET = (Phase.DEPLOY_COMMIT, Phase.DEPLOY_REVEAL, Phase.DEPLOY_SEALED)
# The delicate moments a departure is aimed at, and who leaves there (unless anyone does);
# the moments that take longest to reach are drawn most often.
MOMENTS = {
    "deployment": "active",
    "movement": "active",
    "ally declared": "attacking ally",
    "defence": "defender",
    "ally's target supported": "attacking ally",
    "advance": "attacking ally",
}
AIMS = (*MOMENTS, "ally declared", "ally's target supported", "ally's target supported")
ROLES = ("active", "attacking ally", "defender", "anyone")


@st.composite
def game_options(draw: st.DrawFn) -> dict[str, str]:
    """The options of a random game: scenario, deployment, rulings, first player."""
    scenario = draw(st.sampled_from(sorted(SCENARIOS)))
    options = {
        "scenario": scenario,
        **DEPLOYMENTS[draw(st.sampled_from(sorted(DEPLOYMENTS)))],
        "on_commander_loss": draw(st.sampled_from(LOSSES)),
        "first_player": draw(st.sampled_from(SCENARIOS[scenario])),
        "auto_skip_defence": draw(st.sampled_from(("true", "false"))),
    }
    if scenario == "divided_command":
        turns = ("separate_turns", "merged_side_turn")
        options["divided_command_turns"] = draw(st.sampled_from(turns))
    return options


def toward_the_enemy(state: NapoleonicState, moves: list[Move]) -> Move | None:
    """The move that brings a unit nearest an enemy unit, if one brings it nearer."""
    width = state.width
    by_id = state.by_id()

    def distance(cell: int, side: str) -> int:
        enemies = state.enemies(side)
        return min(
            (
                max(abs(cell % width - u.cell % width), abs(cell // width - u.cell // width))
                for u in state.units
                if u.side in enemies
            ),
            default=0,
        )

    best: tuple[int, Move] | None = None
    for move in moves:
        unit = by_id[move.unit]
        gain = distance(unit.cell, move.side) - distance(state.geo.index[move.to], move.side)
        if gain > 0 and (best is None or gain > best[0]):
            best = (gain, move)
    return best[1] if best else None


class SurrenderGames(RuleBasedStateMachine):
    """Random games through the service with players leaving at random moments."""

    stub: engine_pb2_grpc.RulesEngineStub  # set by the test that runs the machine

    def __init__(self) -> None:
        super().__init__()
        self.state = game_pb2.GameState()
        self.game: Game[Any] | None = None
        self.arrays: dict[str, tuple[Any, bytes]] = {}  # what each player committed to

    # -- the service -------------------------------------------------------------------

    def new_game(self, options: dict[str, str]) -> None:
        request = engine_pb2.NewGameRequest(game="napoleonic", options=options)
        self.accept(self.stub.NewGame(request).state)
        self.arrays = {}

    def send(self, action: game_pb2.Action) -> None:
        request = engine_pb2.ApplyActionsRequest(state=self.state, actions=[action])
        try:
            reply = self.stub.ApplyActions(request)
        except grpc.RpcError as error:
            details = error_details(error)
            raise AssertionError(
                f"{action} refused: {details.reason} {details.message}\n{self.state.position}"
            ) from None
        self.accept(reply.state)

    def accept(self, state: game_pb2.GameState) -> None:
        """The service takes `state` back, and play can go on from it."""
        try:
            reply = self.stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state))
        except grpc.RpcError as error:
            details = error_details(error)
            raise AssertionError(
                f"the engine refuses a state it returned: {details.reason} {details.message}"
                f"\n{state.position}"
            ) from None
        assert list(reply.to_act) == list(state.to_act)
        self.state = state
        self.game = CONVERSIONS.game_from_proto(state)
        if not state.HasField("outcome"):
            assert reply.to_act, "nobody is to act in a game that goes on"
            assert reply.actions or self.board.phase in SECRET

    @property
    def board(self) -> NapoleonicState:
        assert self.game is not None
        state: NapoleonicState = self.game.state
        return state

    def ongoing(self) -> bool:
        return self.game is not None and self.game.outcome is None

    # -- choosing actions --------------------------------------------------------------

    def choose(self, rng: random.Random, aggressive: bool) -> NapoleonicAction:
        """A legal action: at random, or (aggressive) one that seeks combat."""
        assert self.game is not None
        state = self.board
        side = rng.choice(self.game.to_act())
        if state.phase is Phase.DEPLOY_COMMIT:
            placements, salt = random_player_array(state, side, rng.randrange(1000))
            self.arrays[side] = (placements, salt)
            return Commit(side, commitment(placements, salt))
        if state.phase is Phase.DEPLOY_REVEAL:
            return Reveal(side, *self.arrays[side])
        if state.phase is Phase.DEPLOY_SEALED:
            return Seal(side, random_placements(state, side, rng))
        legal = self.game.legal_actions()
        if not aggressive or state.phase is Phase.PLACEMENT:
            action: NapoleonicAction = rng.choice(legal)
            return action
        fights = [a for a in legal if isinstance(a, Attack | Support)]
        if fights and rng.random() < 0.9:
            fight: NapoleonicAction = rng.choice(fights)
            return fight
        if state.phase is Phase.MOVEMENT:
            forward = toward_the_enemy(state, [a for a in legal if isinstance(a, Move)])
            if forward is not None and rng.random() < 0.9:
                return forward
        ends = [a for a in legal if isinstance(a, EndPhase)]
        end: NapoleonicAction = rng.choice(ends or legal)
        return end

    def at(self, moment: str) -> bool:
        """Whether the game is at the moment named."""
        state = self.board
        turn = state.turn
        units = state.by_id()
        allied = {  # the units attacked only by allies of the active player
            t
            for _a, t in turn.attacks
            if all(units[a].side != state.active for a, u in turn.attacks if u == t and a in units)
        }
        return {
            "deployment": state.phase in (*SECRET, Phase.PLACEMENT),
            "movement": state.phase is Phase.MOVEMENT and bool(turn.moved),
            "ally declared": state.phase in (Phase.ATTACK_DECLARATION, Phase.DEFENCE)
            and any(units[a].side != state.active for a, _t in turn.attacks if a in units),
            "defence": state.phase is Phase.DEFENCE,
            "ally's target supported": state.phase is Phase.DEFENCE
            and any(t in allied for _s, t in turn.supports),
            "advance": state.phase is Phase.ADVANCE,
        }[moment]

    # -- the rules of the machine ------------------------------------------------------

    @initialize(options=game_options())
    def start(self, options: dict[str, str]) -> None:
        self.new_game(options)

    @precondition(lambda self: self.game is not None and self.game.outcome is not None)
    @rule(options=game_options())
    def start_again(self, options: dict[str, str]) -> None:
        self.new_game(options)

    def play_until(self, rng: random.Random, steps: int, aggressive: bool, moment: str) -> None:
        """Up to `steps` actions, stopping early at the moment named ('' for none)."""
        for _ in range(steps):
            if not self.ongoing() or (moment and self.at(moment)):
                return
            assert self.game is not None
            action = self.choose(rng, aggressive)
            self.send(CONVERSIONS.action_to_proto(self.game, action))

    @precondition(lambda self: self.ongoing())
    @rule(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 40), aggressive=st.booleans())
    def play(self, seed: int, steps: int, aggressive: bool) -> None:
        """A stretch of play."""
        self.play_until(random.Random(seed), steps, aggressive, "")

    @precondition(lambda self: self.ongoing())
    @rule(role=st.sampled_from(ROLES), pick=st.integers(0, 7), reason=st.sampled_from(REASONS))
    def leave(self, role: str, pick: int, reason: game_pb2.OutcomeReason.ValueType) -> None:
        """A player leaves now: resigns, loses on time or abandons."""
        self.depart(role, pick, reason)

    @precondition(lambda self: self.ongoing())
    @rule(
        seed=st.integers(0, 2**32 - 1),
        moment=st.sampled_from(AIMS),
        anyone=st.booleans(),
        pick=st.integers(0, 7),
        reason=st.sampled_from(REASONS),
    )
    def leave_at(
        self,
        seed: int,
        moment: str,
        anyone: bool,
        pick: int,
        reason: game_pb2.OutcomeReason.ValueType,
    ) -> None:
        """Combat-seeking play up to a delicate moment (if it comes within 150 actions),
        and there the player the moment is about (or anyone) leaves."""
        self.play_until(random.Random(seed), 150, True, moment)
        if self.ongoing():
            self.depart("anyone" if anyone else MOMENTS[moment], pick, reason)

    def depart(self, role: str, pick: int, reason: game_pb2.OutcomeReason.ValueType) -> None:
        """The player of `role` (`pick` chooses among several) leaves for `reason`."""
        state = self.board
        remaining = [p.id for p in state.players if not p.out]
        units = state.by_id()
        chosen = {
            "active": [state.active],
            "attacking ally": [
                units[a].side
                for a, _t in state.turn.attacks
                if a in units and units[a].side != state.active
            ],
            "defender": list(state.turn.pending_defenders),
        }.get(role, remaining)
        candidates = [p for p in chosen if p in remaining] or remaining
        side = candidates[pick % len(candidates)]
        self.send(game_pb2.Action(side=side, resign=game_pb2.Resign(reason=reason)))

    @precondition(lambda self: self.ongoing() and self.board.phase is Phase.DEPLOY_COMMIT)
    @rule(pick=st.integers(0, 7), seed=st.integers(0, 999))
    def commit_illegal(self, pick: int, seed: int) -> None:
        """A player commits honestly to an array one unit short (illegal at the reveal)."""
        assert self.game is not None
        side = self.game.to_act()[pick % len(self.game.to_act())]
        placements, salt = random_player_array(self.board, side, seed)
        self.arrays[side] = (placements[1:], salt)
        commit = Commit(side, commitment(placements[1:], salt))
        self.send(CONVERSIONS.action_to_proto(self.game, commit))

    @precondition(lambda self: self.ongoing() and self.board.phase is Phase.DEPLOY_REVEAL)
    @rule(pick=st.integers(0, 7))
    def reveal_badly(self, pick: int) -> None:
        """A player's reveal forfeits: the wrong salt, or its illegal array."""
        assert self.game is not None
        side = self.game.to_act()[pick % len(self.game.to_act())]
        placements, salt = self.arrays[side]
        honest_but_illegal = len(placements) < len(self.board.army(side))
        reveal = Reveal(side, placements, salt if honest_but_illegal else bytes(32))
        self.send(CONVERSIONS.action_to_proto(self.game, reveal))

    @invariant()
    def out_players_never_attack(self) -> None:
        """An army out of the game never acts: no declared attack is by one of its units."""
        if not self.ongoing():
            return
        state = self.board
        units = state.by_id()
        for attacker, _target in state.turn.attacks:
            unit = units.get(attacker)
            assert unit is not None and state.in_game(unit.side), (attacker, state.turn)


def run(
    stub: engine_pb2_grpc.RulesEngineStub, examples: int, steps: int, *, seed: int | None
) -> None:
    """Play `examples` games of up to `steps` rules; from `seed` when one is given."""
    SurrenderGames.stub = stub
    # A subclass, so a seed stays with this run's machine and not with the class.
    machine: type[SurrenderGames] = type("SurrenderGames", (SurrenderGames,), {})
    if seed is not None:
        machine = hypothesis.seed(seed)(machine)
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            # No shrinking: a game of a few hundred RPCs shrinks for minutes, and the
            # failure already names the refused state and the steps that led to it.
            phases=(hypothesis.Phase.explicit, hypothesis.Phase.reuse, hypothesis.Phase.generate),
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


# `make test` plays a few short games drawn from the run's rotating seed (tests/seeds.py,
# about 10 s of CPU), `-m slow` many longer ones.
@pytest.mark.timeout(900)
def test_whoever_leaves_whenever_the_engine_accepts_every_state(
    stub: engine_pb2_grpc.RulesEngineStub, playout_seed: int
) -> None:
    run(stub, examples=8, steps=10, seed=playout_seed)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_whoever_leaves_whenever_the_engine_accepts_every_state_deeply(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    run(stub, examples=300, steps=25, seed=None)

"""Napoleonic Chess's golden scripts (see `tests/engine_service/rules/golden.py`)."""

from __future__ import annotations

from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.state import NapoleonicState
from tests.engine_service.rules.golden import Script

RULESET = NapoleonicRuleset(seal_key=b"golden transcripts test key")

RED_ARRAY = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
BLACK_ARRAY = "a7=C b7=C c7=I d7=I e7=I f7=I g7=C h7=C a6=I b6=I c6=A d6=G e6=I f6=A g6=I"
RED_SALT = "11" * 32
BLACK_SALT = "22" * 32
TERRAIN_SETUP = (
    "board 8x8; red: c3=I#R_I1 d3=I#R_I2 b3=A#R_A b2=C#R_C h1=G#R_G; "
    "black: c6=I#B_I1 b6=I#B_I2 a6=A#B_A f6=I#B_I3 a8=G#B_G; "
    "hills: c4 f5; obstacles: a4|a5 b4|b5 g4|g5 h4|h5"
)


SCRIPTS: dict[str, Script] = {
    "standard": Script(
        options={},
        notes=("Standard set-up; a support, an exchange, two eliminations and advances.",),
        lines=(
            "red move d3-d4",
            "red move e3-e4",
            "red move c2-d3",
            "red end",
            "red end",
            "black move d6-d5",
            "black move e6-e5",
            "black move f7-e6",
            "black end",
            "black attack d5>d4",
            "black attack e5>e4",
            "black end",
            "! red support d3>d4",
            "red support d3>e4",
            "red end",
            "red move d3-c4",
            "red move h2-h1",
            "red attack d4>d5",
            "red attack c4>d5",
            "red attack e4>e5",
            "red end",
            "black support e6>d5",
            "black end",
            "black move c7-c5",
            "black attack d5>d4",
            "black attack c5>d4",
            "black attack e5>e4",
            "black end",
            "black advance c5>d4",
            "black end",
            "red move e2-e3",
            "red move c3-d3",
            "red attack e4>d4",
            "red attack e3>d4",
            "red attack d3>d4",
            "! red attack d3>d5",
            "red attack c4>d5",
            "red end",
            "black end",
            "red advance d3>d4",
            "red end",
            "black surrender",
        ),
    ),
    "terrain": Script(
        options={"scenario": "hill_and_stream"},
        setup=TERRAIN_SETUP,
        notes=(
            "Hill and Stream ground: a redoubt built over three red turns, the hill and "
            "obstacle bonuses, artillery firing across the stream at 1.",
        ),
        lines=(
            "red move c3-c4",
            "red redoubt c4",
            "red move b3-b4",
            "red end",
            "red end",
            "black move c6-c5",
            "black move b6-b5",
            "black attack c5>c4",
            "black attack b5>b4",
            "black end",
            "red move b2-d4",
            "red end",
            "red attack b4>b5",
            "red attack c4>c5",
            "red attack d4>c5",
            "red end",
            "! red advance b4>c5",
            "red advance d4>c5",
            "red end",
            "black move f6-f5",
            "black end",
            "black end",
            "! red redoubt c4",
            "red end",
            "red end",
        ),
    ),
    "attack_at_dawn": Script(
        options={"scenario": "attack_at_dawn"},
        notes=(
            "Attack at Dawn, commit_reveal: both commit through the engine's hashing "
            "notation, reveal, and the first turn is played.",
        ),
        lines=(
            f"! red reveal {RED_ARRAY} salt {RED_SALT}",
            f"black commit {BLACK_ARRAY} salt {BLACK_SALT}",
            f"red commit {RED_ARRAY} salt {RED_SALT}",
            f"black reveal {BLACK_ARRAY} salt {BLACK_SALT}",
            f"red reveal {RED_ARRAY} salt {RED_SALT}",
            "red move d3-d4",
            "red move c2-c4",
            "red end",
            "red end",
            "black move e6-e5",
            "black end",
            "black end",
        ),
    ),
    "attack_at_dawn_sealed": Script(
        options={"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
        notes=("Attack at Dawn, sealed: the engine seals each array and lays both out.",),
        lines=(
            f"red seal {RED_ARRAY}",
            f"! red seal {RED_ARRAY}",
            f"black seal {BLACK_ARRAY}",
            "red end",
            "red end",
        ),
    ),
    "marching_orders": Script(
        options={"scenario": "marching_orders", "placements_per_turn": "2"},
        setup="board 8x8; army red: 2I 1C 1G; army black: 2I 1A 1G",
        notes=("Marching Orders with two placements per turn on small armies.",),
        lines=(
            "red place e2=G",
            "red place d3=I",
            "black place e7=G",
            "! black place d4=I",
            "black place d6=I",
            "red place e3=I",
            "red place c2=C",
            "black place e6=I",
            "black place f7=A",
            "red end",
            "red end",
        ),
    ),
}


def status(state: NapoleonicState) -> str:
    """The phase, beside the players to act."""
    return f"phase {state.phase}"

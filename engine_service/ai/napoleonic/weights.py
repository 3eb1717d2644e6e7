"""The planner's weights: what a unit is worth, and what the position evaluation counts.

Material units: an Infantry unit is 1. The work limits keep plans deterministic (the
clock is only a safety net).
"""

from __future__ import annotations

from typing import Final

COMMANDER_VALUE: Final = 1000.0  # the Guards: losing them loses the game (8)
# Material by unit type (the Guards' loss ends the game: see COMMANDER_VALUE).
VALUES: Final = {
    "infantry": 1.0,
    "cavalry": 1.5,
    "artillery": 2.0,
    "guards": 6.0,
    "horse_artillery": 1.5,
    "dragoons": 1.5,
    "foot_guards": 2.0,
    "cuirassiers": 2.0,
    "heavy_infantry": 2.0,
}
PRESSURE: Final = 0.05  # per unit of value attacked beyond its defence but saved by supports
PRESSURE_CAP: Final = 10.0
KILL_SEARCH_NODES: Final = 1500  # per target
PLAN_CACHE: Final = 512
CANDIDATE_PLANS: Final = 4
# From this budget (CPU seconds) on, the strongest level judges each candidate turn by the
# enemy's answer to it (`lookahead.py`): about 10 ms a candidate. Over 40 games at 0.2 s
# against level 4 it scored 81 % with it and 74 % without.
LOOKAHEAD_SECONDS: Final = 0.1
POSITION_NOISE: Final = 0.3  # share of a level's noise put on each square a unit may take

# Positional weights (material units: an Infantry unit is 1).
APPROACH: Final = {"cavalry": 0.12, "artillery": 0.08}
APPROACH_DEFAULT: Final = 0.1
CONTACT: Final = 0.15
CONTACT_GUARDS: Final = 0.6
GUARD_SUPPORT: Final = 0.25
COHESION: Final = 0.05
DANGER: Final = 0.5
GUARDS_DANGER: Final = 8.0
MOVE_COST: Final = 0.01
STANDOFF_TURNS: Final = 16  # player-turns without elimination to lose most caution
BLOCKING: Final = 0.3
ALLOCATION_NODES: Final = 20_000

"""Section 7.1 and A12: which enemy men a side must capture, and where the obligation ends.

J is every enemy man some first jump could take; under A12 (citadel defence overrides
compulsion) capturing an enemy man on one's own Citadel also meets the obligation.
"""

from __future__ import annotations

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.war import WarState

from .helpers import RULES, notations, options, position

OVERRIDE = options(citadel_defence_overrides_compulsion="true")


def _must_capture(men: str, side: str, text: str, extra: str = "") -> str:
    """The men named by the compulsion refusal of `text`."""
    with pytest.raises(RuleError) as caught:
        RULES.parse_action(position(men, side=side, extra=extra, opts=OVERRIDE), text)
    assert caught.value.reason == "CAPTURE_COMPULSORY"
    return caught.value.message.split("(")[1].split(")")[0]


@pytest.mark.parametrize(
    ("men", "side", "text", "victims", "extra"),
    [
        ("Tc5 td6 Ka1 ka10", "S", "Ka1-a2", "d6", ""),  # an empty Citadel adds nothing
        ("Tc5 td6 Mf1 Ka1 ka10", "S", "Ka1-a2", "d6", ""),  # nor does one's own man on it
        ("Tc5 td6 tf1 Ka1 ka10", "S", "Ka1-a2", "f1, d6", ""),  # an enemy Troop on it does
        ("td6 Tc5 Hf10 Kj1 ka10", "N", "Ka10-a9", "c5, f10", ""),  # a South Horse on f10
        ("td6 Tc5 Gf10 Kj1 ka10", "N", "Ka10-a9", "c5, f10", ""),
        # a North Troop that has not moved, on South's Citadel c8 (a custom set-up)
        ("Tc5 td6 tc8 Ka1 ka10", "S", "Ka1-a2", "d6, c8", "citadels=c8,f10"),
    ],
)
def test_a12_adds_only_an_enemy_man_on_ones_own_citadel(
    men: str, side: str, text: str, victims: str, extra: str
) -> None:
    assert _must_capture(men, side, text, extra) == victims


def test_an_en_passant_capture_of_a_man_in_j_meets_the_obligation() -> None:
    state = position(
        "Te7 Tc6 td7 Kj1 kj10", extra="ep=d8", opts=options(en_passant="displacement_only")
    )
    assert notations(state) == {"c6:e8", "c6xd7", "e7xd8"}


def _exposed(state: WarState) -> set[str]:
    return {view.cell for view in RULES.pieces(state) if "exposed" in view.tags}


def test_a_jump_that_may_not_land_exposes_nobody() -> None:
    # own_men_on_own_citadel = false: South's Troop may not land on its own Citadel e7.
    landing_forbidden = options(own_men_on_own_citadel="false")
    assert _exposed(position("Tc5 td6 Ka1 ka10", extra="citadels=e7,f10")) == {"d6"}
    state = position("Tc5 td6 Ka1 ka10", extra="citadels=e7,f10", opts=landing_forbidden)
    assert _exposed(state) == set()


def test_a_troop_next_to_its_final_rank_still_jumps_backward() -> None:
    # North's Troop on a2 steps forward to a1 (cell 0); with backward jumps it can take b3.
    state = position("ta2 Tb3 Kj1 kj10", side="N", opts=options(backward_jumps="true"))
    assert _exposed(state) == {"b3"}
    assert "a2:c4" in notations(state)

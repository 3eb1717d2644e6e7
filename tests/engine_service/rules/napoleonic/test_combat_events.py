"""Resolution (spec 7.3) told as events: each combat's sentence term by term, then each
elimination, with the side, square, unit type and unit id a client draws from."""

from __future__ import annotations

from engine_service.rules.base import EventKind
from tests.engine_service.rules.napoleonic.test_combat import fight


def test_each_combat_and_each_elimination_is_an_event_naming_the_unit() -> None:
    setup = (
        "board 8x8; red: d4=A#R_A c5=I#R_I e4=C#R_C h1=G#R_G; "
        "black: d5=I#B_I d6=I#B_S a8=G#B_G; hills: d5; obstacles: c5|d5"
    )
    _state, events, _t = fight(
        setup, [("R_A", "B_I"), ("R_I", "B_I"), ("R_C", "B_I")], [("B_S", "B_I")]
    )
    [combat] = [e for e in events if e.kind is EventKind.COMBAT_RESOLVED]
    assert (combat.side, combat.cells, combat.piece, combat.unit) == (
        "black",
        ("d5",),
        "infantry",
        "B_I",
    )
    assert combat.text == (
        "Combat at d5: black infantry attacked by artillery d4 2, infantry c5 1, cavalry e4 1 "
        "= 4 against defence 1 + hill +1 + support infantry d6 +1 = 3: eliminated."
    )
    [gone] = [e for e in events if e.kind is EventKind.ELIMINATED]
    assert (gone.text, gone.side, gone.cells, gone.piece, gone.unit) == (
        "Black infantry on d5 is eliminated.",
        "black",
        ("d5",),
        "infantry",
        "B_I",
    )


def test_a_unit_that_holds_is_told_so_with_the_notes_of_its_attackers() -> None:
    setup = (
        "board 8x8; red: d4=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G; "
        "redoubts: d5=black; obstacles: d4|d5"
    )
    _state, events, _t = fight(setup, [("R_A", "B_I")])
    [combat] = [e for e in events if e.kind is EventKind.COMBAT_RESOLVED]
    assert combat.text == (
        "Combat at d5: black infantry attacked by artillery d4 1 (attacks at 1 into a redoubt "
        "and across an obstacle) = 1 against defence 1 + redoubt +1 + obstacle +1 = 3: it holds."
    )
    assert not [e for e in events if e.kind is EventKind.ELIMINATED]


def test_a_declared_attack_is_an_event_naming_the_attacker() -> None:
    setup = "board 8x8; red: d4=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G"
    _state, events, _t = fight(setup, [("R_A", "B_I")])
    [declared] = [e for e in events if e.kind is EventKind.ATTACK_DECLARED]
    assert (declared.text, declared.side, declared.cells, declared.piece, declared.unit) == (
        "Red artillery on d4 attacks black infantry on d5.",
        "red",
        ("d4", "d5"),
        "artillery",
        "R_A",
    )

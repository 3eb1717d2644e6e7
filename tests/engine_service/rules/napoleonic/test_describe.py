"""DescribeGame and pieces: what a client needs to draw any scenario."""

from __future__ import annotations

from engine_service.rules.napoleonic.pieces import UNIT_TYPES
from tests.engine_service.rules.napoleonic.helpers import RULESET, play_text


def test_the_standard_board() -> None:
    board = RULESET.describe(RULESET.resolve_options({}))
    assert board.game == "napoleonic" and (board.width, board.height) == (8.0, 8.0)
    cells = {c.name: c for c in board.cells}
    assert len(cells) == 64 and (cells["a1"].x, cells["a1"].y) == (0.5, 0.5)
    assert "dark" in cells["a1"].tags and "light" in cells["b1"].tags
    assert "deployment:red" in cells["d2"].tags and "deployment:black" in cells["d7"].tags
    assert not any(t.startswith("deployment") for t in cells["d4"].tags)
    assert {k.id for k in board.piece_kinds} == set(UNIT_TYPES)
    assert [s.id for s in board.sides] == ["red", "black"]
    assert "move c2-d4" in board.notation and "Guards" in board.summary


def test_terrain_and_larger_boards_are_described() -> None:
    terrain = RULESET.describe(RULESET.resolve_options({"scenario": "hill_and_stream"}))
    hills = {c.name for c in terrain.cells if "hill" in c.tags}
    assert hills == {"c4", "f5"}
    obstacles = {f.cells: f.points for f in terrain.features if f.kind == "obstacle"}
    assert obstacles[("a4", "a5")] == ((0.0, 4.0), (1.0, 4.0))
    assert len(obstacles) == 4
    grand = RULESET.describe(RULESET.resolve_options({"scenario": "grand_battle"}))
    assert (grand.width, grand.height, len(grand.cells)) == (12.0, 10.0, 120)
    assert "deployment:red" in next(c for c in grand.cells if c.name == "a4").tags


def test_pieces_carry_ids_and_what_they_did() -> None:
    setup = "board 8x8; red: d4=A#R_A c2=C#R_C h1=G#R_G; black: d5=I#B_I a8=G#B_G"
    state = RULESET.new_game(RULESET.resolve_options({"auto_skip_defence": "false"}), setup)
    state, _ = play_text(RULESET, state, ["red move c2-c3", "red attack d4>d5", "red end"])
    pieces = {p.id: p for p in RULESET.pieces(state)}
    assert pieces["R_C"].cell == "c3" and "moved" in pieces["R_C"].tags
    assert "attacking" in pieces["R_A"].tags and "under_attack" in pieces["B_I"].tags
    assert "commander" in pieces["B_G"].tags and pieces["B_G"].kind == "guards"

"""DescribeGame data: the board, the Citadels, the stations and the piece kinds."""

from __future__ import annotations

from engine_service.rules.base import CellShape

from .helpers import RULES, options, position


def test_the_board_has_100_squares_with_citadels_and_stations() -> None:
    board = RULES.describe(options())
    assert len(board.cells) == 100 and (board.width, board.height) == (10.0, 10.0)
    tagged = {cell.name: cell.tags for cell in board.cells}
    assert {n for n, tags in tagged.items() if "citadel" in tags} == {"f1", "f10"}
    assert {n for n, tags in tagged.items() if "station" in tags} == {"d1", "g1", "d10", "g10"}
    assert "dark" in tagged["a1"] and "light" in tagged["b1"]
    assert {kind.id for kind in board.piece_kinds} == {
        "king",
        "general",
        "mortar",
        "cannon",
        "horse",
        "troop",
        "flying_machine",
    }
    assert [side.id for side in board.sides] == ["south", "north"]


def test_the_description_follows_the_layout_options() -> None:
    board = RULES.describe(options(north_layout="rotate_180", back_rank=".MHCGKCHM."))
    citadels = {cell.name for cell in board.cells if "citadel" in cell.tags}
    stations = {cell.name for cell in board.cells if "station" in cell.tags}
    assert citadels == {"f1", "e10"}
    assert stations == {"a1", "j1", "a10", "j10"}


def test_pieces_carry_troop_flags_and_tags() -> None:
    state = position("Tb2 Tc3 Td5 Te10 Tf5 tg6 Ka1 ka10")
    views = {view.cell: view for view in RULES.pieces(state)}
    assert views["b2"].tags == ("rear",) and not views["b2"].moved
    assert views["c3"].tags == ("van",)
    assert views["d5"].moved and views["d5"].tags == ()
    assert "immobile" in views["e10"].tags
    assert "exposed" in views["g6"].tags  # f5 could jump it


def test_every_square_is_drawn_at_its_file_and_rank_in_chessboard_colours() -> None:
    board = RULES.describe(options())
    assert board.game == "war" and board.title == "The Game of War (Hudson Maxim, 1910)"
    assert board.features == ()
    assert [cell.name for cell in board.cells] == [
        f"{file}{rank}" for rank in range(1, 11) for file in "abcdefghij"
    ]
    for cell in board.cells:
        file, rank = "abcdefghij".index(cell.name[0]), int(cell.name[1:]) - 1
        assert (cell.x, cell.y, cell.shape) == (file + 0.5, rank + 0.5, CellShape.SQUARE)
        assert cell.tags[0] == ("dark" if (file + rank) % 2 == 0 else "light"), cell.name


def test_the_summary_and_notation_help_are_given() -> None:
    board = RULES.describe(options())
    assert "Flying Machine" in board.summary and "Citadel" in board.summary
    assert "a3:c5:e7" in board.notation and "F@e5" in board.notation

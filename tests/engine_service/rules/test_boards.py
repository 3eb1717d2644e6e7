"""Boards as cell graphs, built here inside the tests (the games build theirs when their
modules load): grid steps and their edges, rays, neighbours, links and offset leaps."""

from __future__ import annotations

import pytest

from engine_service.rules.board import CellGraph, file_letters, offset_table, square_grid


def test_file_letters_run_from_a_up_to_z_for_twenty_six_files() -> None:
    assert file_letters(1) == "a"
    assert file_letters(26) == "abcdefghijklmnopqrstuvwxyz"


@pytest.mark.parametrize("width", [0, 27])
def test_a_board_wider_than_the_alphabet_or_empty_has_no_file_letters(width: int) -> None:
    with pytest.raises(ValueError) as refusal:
        file_letters(width)
    assert str(refusal.value) == f"width {width} is outside 1..26"


def test_a_step_off_the_grid_is_minus_one() -> None:
    grid = square_grid(3, 2)
    a1, b1, c1, a2, b2, c2 = (grid.cell(n) for n in ("a1", "b1", "c1", "a2", "b2", "c2"))
    assert grid.step["N"] == (a2, b2, c2, -1, -1, -1)
    assert grid.step["E"] == (b1, c1, -1, b2, c2, -1)
    assert grid.step["W"] == (-1, a1, b1, -1, a2, b2)
    assert grid.step["SW"] == (-1, -1, -1, -1, a1, b1)


def test_rays_and_neighbours_reach_the_first_cell() -> None:
    grid = square_grid(3, 3)
    a1, b1, a2, b2, c3 = (grid.cell(n) for n in ("a1", "b1", "a2", "b2", "c3"))
    assert a1 == 0
    assert grid.ray(c3, "SW") == (b2, a1)
    assert grid.ray(b1, "W") == (a1,)
    assert grid.neighbours(b1, ("W", "N")) == [a1, b2]
    assert sorted(grid.neighbours(b2)) == [0, 1, 2, 3, 5, 6, 7, 8]
    assert grid.neighbours(a2, ("S",)) == [a1]


def test_a_ray_on_a_board_whose_links_go_round_visits_each_cell_once() -> None:
    ring = CellGraph(names=("x", "y", "z"), coords=((0, 0), (1, 0), (2, 0)), step={"E": (1, 2, 0)})
    assert ring.ray(0, "E") == (1, 2, 0)
    assert ring.ray(2, "E") == (0, 1, 2)
    assert ring.ray(1, "E", 2) == (2, 0)


def test_the_direction_between_two_cells_is_that_of_their_link() -> None:
    grid = square_grid(3, 3)
    a1, b1, b2, c3 = (grid.cell(n) for n in ("a1", "b1", "b2", "c3"))
    assert grid.direction_between(a1, b2) == "NE"
    assert grid.direction_between(b2, a1) == "SW"
    assert grid.direction_between(b1, a1) == "W"
    assert grid.direction_between(a1, c3) is None
    assert grid.direction_between(a1, a1) is None


def test_offset_leaps_are_listed_in_the_order_of_the_offsets() -> None:
    grid = square_grid(3, 3)
    a1, b1, a2, b2, c3 = (grid.cell(n) for n in ("a1", "b1", "a2", "b2", "c3"))
    leaps = offset_table(grid, ((1, 0), (0, 1), (1, 1)))
    assert leaps[a1] == (b1, a2, b2)
    assert leaps[b2] == (grid.cell("c2"), grid.cell("b3"), c3)
    assert leaps[c3] == ()
    backwards = offset_table(grid, ((-1, -1), (-1, 0)))
    assert backwards[b2] == (a1, a2)
    assert backwards[b1] == (a1,)

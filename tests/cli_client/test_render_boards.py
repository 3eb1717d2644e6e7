"""Boards drawn from the engine's descriptions, compared with stored snapshots.

Each game is described by the real (in-process) engine; the drawings are checked against
text files in `snapshots/` (ASCII, Unicode without colour, and Unicode with colours as rich
markup) and for properties that must hold whatever the snapshot says.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from rich.text import Text

from cli_client.render import Scene, Theme, bottom_side, draw_board
from cli_client.render.panel import legend
from tests.cli_client import snapshots
from wargame.v1 import engine_pb2, game_pb2

THEMES = {
    "ascii": Theme(unicode=False, colour=False),
    "unicode": Theme(unicode=True, colour=False),
    "colour": Theme(unicode=True, colour=True),
}
BOARDS = [
    ("war", {}),
    ("battle", {}),
    ("napoleonic", {}),
    ("napoleonic", {"scenario": "hill_and_stream"}),
    ("napoleonic", {"scenario": "grand_battle"}),
]

Describe = Callable[..., engine_pb2.DescribeGameResponse]


def drawing(
    reply: engine_pb2.DescribeGameResponse,
    theme: Theme,
    state: game_pb2.GameState | None = None,
    **scene: object,
) -> list[Text]:
    """A described board with a state's pieces (the initial ones by default), and its legend."""
    state = state or reply.initial_state
    upper = bottom_side(reply.board, reply.initial_state)
    lines = draw_board(Scene(reply.board, list(state.pieces), upper_side=upper, **scene), theme)  # type: ignore[arg-type]
    return [*lines, *legend(Scene(reply.board, list(state.pieces), upper_side=upper), theme)]


def board_name(game: str, options: dict[str, str]) -> str:
    return "_".join([game, *options.values()])


@pytest.mark.parametrize("theme_name", list(THEMES))
@pytest.mark.parametrize(("game", "options"), BOARDS, ids=[board_name(*case) for case in BOARDS])
def test_initial_boards_match_their_snapshots(
    describe: Describe, game: str, options: dict[str, str], theme_name: str
) -> None:
    lines = drawing(describe(game, **options), THEMES[theme_name])
    snapshots.check(
        f"{board_name(game, options)}.{theme_name}.txt",
        snapshots.as_text(lines, styled=theme_name == "colour"),
    )


def pieces_drawn(lines: list[str]) -> int:
    """Piece letters in an ASCII drawing: between a grid's rank labels, before lattice numbers."""
    count = 0
    for line in lines:
        row = re.match(r"^\s*(\d+)\s(.*)\s\1\s*$", line)
        if row:
            count += sum(char.isalpha() for char in row.group(2))
        else:
            count += len(re.findall(r"(?<![A-Za-z0-9])[A-Za-z](?=[=+#]?\d)", line))
    return count


@pytest.mark.parametrize(("game", "options"), BOARDS, ids=[board_name(*case) for case in BOARDS])
def test_every_piece_is_drawn_once_in_ascii(
    describe: Describe, game: str, options: dict[str, str]
) -> None:
    reply = describe(game, **options)
    lines = [
        line.plain
        for line in draw_board(
            Scene(
                reply.board,
                list(reply.initial_state.pieces),
                upper_side=bottom_side(reply.board, reply.initial_state),
            ),
            THEMES["ascii"],
        )
    ]
    assert pieces_drawn(lines) == len(reply.initial_state.pieces)


def test_ascii_output_is_ascii_and_unicode_uses_symbols(describe: Describe) -> None:
    for game, options in BOARDS:
        reply = describe(game, **options)
        assert all(line.plain.isascii() for line in drawing(reply, THEMES["ascii"]))
    war = "\n".join(line.plain for line in drawing(describe("war"), THEMES["colour"]))
    assert (
        "♚" in war and "⌂" not in war.split("\n")[1]
    )  # the King stands on the Citadel, drawn as a glyph


def test_war_citadels_and_a_placed_flying_machine_with_the_last_move(
    describe: Describe, play: Callable[..., engine_pb2.ApplyActionsResponse]
) -> None:
    reply = describe("war")
    after = play(reply.initial_state, "e3-e4", "F@e5")
    last = frozenset(cell for event in after.events[-1:] for cell in event.cells)
    assert last == {"e5"}
    for theme_name in ("ascii", "unicode"):
        lines = drawing(reply, THEMES[theme_name], after.state, last=last)
        snapshots.check(f"war_flying_machine.{theme_name}.txt", snapshots.as_text(lines))
    ascii_lines = [line.plain for line in drawing(reply, THEMES["ascii"], after.state, last=last)]
    rank5 = next(line for line in ascii_lines if line.lstrip().startswith("5 "))
    assert "[f]" in rank5  # North's Flying Machine, highlighted as the last move
    rank1 = next(line for line in ascii_lines if line.lstrip().startswith("1 "))
    assert "K#" in rank1  # South's King on its Citadel


def test_a_flipped_board_puts_the_other_side_at_the_bottom(describe: Describe) -> None:
    reply = describe("war")
    flipped = [line.plain for line in drawing(reply, THEMES["ascii"], turns=2)]
    assert flipped[0].split() == list("jihgfedcba")
    assert flipped[1].split()[0] == "1" and flipped[-3].split()[0] == "10"
    snapshots.check("war_flipped.ascii.txt", snapshots.as_text([Text(line) for line in flipped]))


def test_battle_square_numbers_are_all_readable(describe: Describe) -> None:
    reply = describe("battle")
    for theme_name in ("ascii", "colour"):
        text = "\n".join(line.plain for line in drawing(reply, THEMES[theme_name]))
        numbers = set(re.findall(r"\d+", text))
        assert {cell.label for cell in reply.board.cells} <= numbers


def test_the_compact_battle_board_has_one_line_per_row_and_every_square_and_piece(
    describe: Describe,
) -> None:
    # Richardson's board has 19 rows of squares (y 0 to 18): drawn compact, 19 lines, each
    # with its squares' numbers, every piece once, and (flipped too) no square lost.
    reply = describe("battle")
    rows = sorted({cell.y for cell in reply.board.cells})
    assert len(rows) == 19
    upper = bottom_side(reply.board, reply.initial_state)
    for flipped in (False, True):
        scene = Scene(
            reply.board, list(reply.initial_state.pieces), upper_side=upper, turns=2 * flipped
        )
        lines = [line.plain for line in draw_board(scene, THEMES["ascii"], compact=True)]
        assert len(lines) == len(rows)
        for line, y in zip(lines, rows if flipped else rows[::-1], strict=True):
            labels = {cell.label for cell in reply.board.cells if cell.y == y}
            assert set(re.findall(r"\d+", line)) == labels, (y, line)
        assert pieces_drawn(lines) == len(reply.initial_state.pieces)
        normal = draw_board(scene, THEMES["ascii"])
        assert len(normal) == 2 * len(rows) + 1  # a blank line between rows and around


def test_battle_river_fords_and_bridge_are_drawn(describe: Describe) -> None:
    reply = describe("battle")
    lines = [line.plain for line in drawing(reply, THEMES["ascii"])]
    fords = [cell.label for cell in reply.board.cells if "ford" in cell.tags]
    bridges = [cell.label for cell in reply.board.cells if "bridge" in cell.tags]
    text = "\n".join(lines)
    assert fords and all(f"={label}" in text for label in fords)
    assert bridges and all(f"+{label}" in text for label in bridges)
    assert sum(line.count("~") for line in lines) > 40
    assert "~ river" in lines[-1]


def test_napoleonic_terrain_hills_and_obstacles(describe: Describe) -> None:
    reply = describe("napoleonic", scenario="hill_and_stream")
    lines = [line.plain for line in drawing(reply, THEMES["ascii"])]
    hills = [cell.name for cell in reply.board.cells if "hill" in cell.tags]
    assert len(hills) == sum(line.count("^") for line in lines[:-1])
    assert any("=" in line for line in lines)  # the border obstacles between ranks 4 and 5


def test_shared_glyphs_fall_back_to_letters(describe: Describe) -> None:
    reply = describe("napoleonic", scenario="variant_corps")
    kinds = {kind.id: kind for kind in reply.board.piece_kinds}
    present = {piece.kind for piece in reply.initial_state.pieces}
    glyphs = [kinds[kind].glyph for kind in present]
    shared = {glyph for glyph in glyphs if glyphs.count(glyph) > 1}
    text = "\n".join(line.plain for line in drawing(reply, THEMES["colour"])[:-1])
    for glyph in shared:
        assert glyph not in text
    assert shared, "the variant corps should include two kinds drawn with the same glyph"


def test_the_two_sides_differ_without_colour(describe: Describe) -> None:
    reply = describe("war")
    lines = [line.plain for line in drawing(reply, THEMES["colour"])]
    rank = {line.split()[0]: line for line in lines if line.split() and line.split()[0].isdigit()}
    assert "♔" in rank["1"] and "♙" in rank["3"]  # South (at the bottom): outlined
    assert "♚" in rank["10"] and "♟" in rank["8"]  # North: filled, the shapes alone tell
    assert not set("♚♛♜♝♞♟") & set(rank["1"] + rank["2"] + rank["3"])
    ascii_lines = [line.plain for line in drawing(reply, THEMES["ascii"])]
    assert "K#" in next(line for line in ascii_lines if line.startswith(" 1 "))
    assert "k#" in next(line for line in ascii_lines if line.startswith("10 "))


def test_in_a_game_of_alliances_the_bottom_players_allies_are_in_capitals_too(
    describe: Describe,
) -> None:
    # Grand Battle 2-v-2: red (at the bottom) and blue are allies (south), black and green
    # their enemies (north). Without colour the case of a letter tells friend from foe, and
    # the legend names every player.
    reply = describe("napoleonic", scenario="grand_battle_2v2")
    pieces = list(reply.initial_state.pieces)
    scene = Scene(reply.board, pieces, upper_side="red")
    lines = [line.plain for line in draw_board(scene, THEMES["ascii"])]
    rows = {line.split()[0]: line.split()[1:-1] for line in lines if line[:3].strip().isdigit()}
    files = lines[0].split()
    for piece in pieces:
        file, rank = piece.cell[0], piece.cell[1:]
        token = rows[rank][files.index(file)].strip("'[]")
        assert token.isupper() == (piece.side in ("red", "blue")), (piece.side, piece.cell, token)
    _pieces, sides, *_marks = [
        line.plain for line in legend(scene, THEMES["ascii"], pieces_too=True)
    ]
    assert sides == "Red, Blue: capitals I - Black, Green: small letters i"
    _pieces, sides, *_marks = [
        line.plain for line in legend(scene, THEMES["colour"], pieces_too=True)
    ]
    assert sides.startswith("Red, Blue: outlined ") and " · Black, Green: filled " in sides


def test_the_legend_ties_symbols_to_letters_names_and_sides(describe: Describe) -> None:
    reply = describe("war")
    scene = Scene(
        reply.board,
        list(reply.initial_state.pieces),
        upper_side=bottom_side(reply.board, reply.initial_state),
    )
    pieces, sides, marks = [line.plain for line in legend(scene, THEMES["colour"], pieces_too=True)]
    for item in ("♔♚ K King", "♕♛ G General", "♖♜ M Mortar", "♗♝ C Cannon", "♘♞ H Horse"):
        assert item in pieces
    assert "♙♟ T Troop" in pieces and "Flying Machine" not in pieces  # only the kinds in play
    assert sides == "South: outlined ♔, capitals K · North: filled ♚, small letters k"
    assert "⌂ Citadel" in marks
    pieces, sides, _ = [line.plain for line in legend(scene, THEMES["ascii"], pieces_too=True)]
    assert pieces.startswith("K King  G General  M Mortar")
    assert sides == "South: capitals K - North: small letters k"


def test_units_that_moved_this_turn_are_marked(
    describe: Describe, play: Callable[..., engine_pb2.ApplyActionsResponse]
) -> None:
    reply = describe("napoleonic")
    after = play(reply.initial_state, "move a3-a4", "move b2-b4")
    moved = frozenset({"a4", "b4"})
    lines = [line.plain for line in drawing(reply, THEMES["ascii"], after.state, spent=moved)]
    rank4 = next(line for line in lines if line.startswith("4 "))
    assert rank4.count("'I") == 1 and rank4.count("'C") == 1
    scene = Scene(reply.board, list(after.state.pieces), spent=moved)
    assert "' moved this turn" in legend(scene, THEMES["ascii"])[-1].plain


def test_a_kind_without_a_glyph_pair_is_a_letter_by_side(
    describe: Describe, play: Callable[..., engine_pb2.ApplyActionsResponse]
) -> None:
    reply = describe("war")
    after = play(reply.initial_state, "F@e5", "F@e6")
    lines = [line.plain for line in drawing(reply, THEMES["colour"], after.state)]
    assert "F" in next(line for line in lines if line.startswith(" 5 "))
    assert "f" in next(line for line in lines if line.startswith(" 6 "))

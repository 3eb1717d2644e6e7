"""States as the matchmaker keeps them (`matchmaker/states.py`): compact, read only where it
must be, and secret arrays withheld in the position text itself."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matchmaker.states import (
    compact,
    for_viewer,
    hidden_pending,
    phase,
    players_out,
    withheld,
)
from wargame.position_text import PositionError, quote
from wargame.v1 import game_pb2, napoleonic_pb2, war_pb2

DEPLOYING = (
    "board 8x8; turn: red deploy_reveal 0; committed red: abc; committed black: def; "
    "revealed red: a2=A b2=C; sealed black: Q0xJRU5U; "
    'options: scenario=attack_at_dawn note="a; revealed black: x"'
)


def test_compact_keeps_the_position_and_the_summary_and_drops_the_view() -> None:
    # What compact keeps: the position and the summary beside it.
    summary: dict[str, Any] = {
        "game": "battle",
        "format_version": 1,
        "position": "W129 a",
        "to_act": ["attacker"],
        "ply": 7,
        "draw_offer": "defender",
    }
    drawn = game_pb2.GameState(
        **summary,
        options={"x": "y"},
        pieces=[game_pb2.Piece(kind="wagon", side="attacker", cell="129")],
    )
    drawn.outcome.message = "over"
    drawn.battle.SetInParent()
    kept = compact(drawn)
    assert kept == game_pb2.GameState(**summary, outcome=game_pb2.Outcome(message="over"))
    assert compact(kept) is kept  # nothing to drop
    structured = game_pb2.GameState(game="war", pieces=drawn.pieces)
    assert compact(structured) is structured  # no position: the structured form is the state


def test_compact_drops_any_one_part_of_the_view_alone() -> None:
    # Each part of the view is dropped even when the others are absent.
    position = game_pb2.GameState(game="battle", position="W129 a")
    pieces_only = game_pb2.GameState(
        game="battle",
        position="W129 a",
        pieces=[game_pb2.Piece(kind="wagon", side="attacker", cell="129")],
    )
    options_only = game_pb2.GameState(game="battle", position="W129 a", options={"x": "y"})
    detail_only = game_pb2.GameState(game="battle", position="W129 a")
    detail_only.battle.SetInParent()
    for drawn in (pieces_only, options_only, detail_only):
        assert compact(drawn) == position


def test_the_phase_and_the_secret_are_read_from_the_position_text() -> None:
    state = game_pb2.GameState(game="napoleonic", position=DEPLOYING)
    assert phase(state) == "deploy_reveal" and hidden_pending(state)
    moving = game_pb2.GameState(game="napoleonic", position="board 8x8; turn: red movement 2")
    assert phase(moving) == "movement" and not hidden_pending(moving)
    setup = game_pb2.GameState(game="napoleonic", position="board 8x8; red: a1=G")
    assert phase(setup) == "" and not hidden_pending(setup)
    war = game_pb2.GameState(game="war", position="deploy_commit S -:-")
    assert not hidden_pending(war)
    structured = game_pb2.GameState(game="napoleonic")
    structured.napoleonic.phase = napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED
    assert hidden_pending(structured)  # a state stored before positions existed
    assert phase(structured) == "deploy_sealed"  # the word the position text would write
    structured.napoleonic.phase = napoleonic_pb2.NAPOLEONIC_PHASE_ATTACK_DECLARATION
    assert phase(structured) == "attack_declaration" and not hidden_pending(structured)
    assert phase(game_pb2.GameState(game="war", war=war_pb2.WarState())) == ""


def test_other_players_arrays_are_withheld_and_nothing_else_changes() -> None:
    for_black = withheld(DEPLOYING, "black")
    assert "revealed red: withheld;" in for_black
    assert "sealed black: Q0xJRU5U;" in for_black  # its own
    assert "committed red: abc;" in for_black  # a digest hides nothing
    assert 'note="a; revealed black: x"' in for_black  # a quoted value is not a section
    for_red = withheld(DEPLOYING, "red")
    assert "revealed red: a2=A b2=C;" in for_red and "sealed black: withheld;" in for_red
    spectator = withheld(DEPLOYING, "")
    assert "a2=A" not in spectator and "Q0xJRU5U" not in spectator
    assert withheld(spectator, "") == spectator  # withheld once is withheld
    state = game_pb2.GameState(game="napoleonic", position=DEPLOYING, to_act=["black"])
    assert for_viewer(state, "black").position == for_black
    assert for_viewer(state, "black").to_act == ["black"]
    laid_out = game_pb2.GameState(game="napoleonic", position="board 8x8; turn: red movement 1")
    assert for_viewer(laid_out, "") is laid_out


@given(st.sampled_from(["red", "black", ""]), st.text(alphabet='ab;=: "\\', max_size=20))
def test_withholding_keeps_every_section_and_its_order(viewer: str, noise: str) -> None:
    text = f"{DEPLOYING}; game: ply=3 end={quote(noise)}"  # any value, as the engine writes it
    out = withheld(text, viewer)
    heads = [part.split(":", 1)[0] for part in out.split("; ")]
    assert heads[: len(DEPLOYING.split("; ")) - 1] == [
        part.split(":", 1)[0] for part in DEPLOYING.split("; ")[:-1]
    ]
    assert out.count("withheld") == {"red": 1, "black": 1, "": 2}[viewer]


def test_the_players_out_are_read_from_the_players_section() -> None:
    # docs/positions.md's grand battle: black out (its Guards fell), blue surrendered.
    text = (
        "board 16x10; players: red/south black/north!out blue/south!surrendered green/north; "
        "red: h1=G d4=A; green: e4=I p10=G; army black: 1G; turn: red movement 9; "
        "options: scenario=grand_battle_2v2"
    )
    state = game_pb2.GameState(game="napoleonic", position=text)
    assert players_out(state) == {"black", "blue"}
    # Nobody out: the scenario's players are not written; other games have none.
    nobody = text.replace("black/north!out", "black/north").replace("!surrendered", "")
    assert players_out(game_pb2.GameState(game="napoleonic", position=nobody)) == set()
    assert players_out(game_pb2.GameState(game="war", position="10/10 S -:- x!out")) == set()


def test_a_text_with_a_quote_left_open_is_refused_rather_than_passed_on() -> None:
    # The engine never writes one; if a stored text had one, the sections after it could not
    # be told from a quoted value, so nothing is sent rather than a secret.
    text = 'turn: red deploy_reveal 0; note="a; revealed red: a2=A b2=C'
    with pytest.raises(PositionError):
        withheld(text, "black")
    with pytest.raises(PositionError):
        for_viewer(game_pb2.GameState(game="napoleonic", position=text), "black")

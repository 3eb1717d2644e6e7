"""Chess habits read against the engine's legal actions: destination only, did you mean.

The legal actions come from the real (in-process) engine, so each reading is checked
against what the rules allow in that position, never against a list written here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cli_client.commands import words
from cli_client.notation import Cells, Reading, read
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

Describe = Callable[..., engine_pb2.DescribeGameResponse]


@pytest.fixture
def legal(engine: engine_pb2_grpc.RulesEngineStub) -> Callable[[game_pb2.GameState], list[str]]:
    def call(state: game_pb2.GameState) -> list[str]:
        reply = engine.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state), timeout=30)
        return [action.notation for action in reply.actions]

    return call


WAR_ENDGAME = "9k/10/10/t9/10/10/10/10/10/K8M S -:- citadels=a1,j10"  # no Flying Machines
NAPOLEONIC_ENDGAME = "board 8x8; red: g8=I h7=A g7=C a1=G; black: h8=G a3=I"


@pytest.fixture
def position(engine: engine_pb2_grpc.RulesEngineStub) -> Callable[[str, str], game_pb2.GameState]:
    def call(game: str, setup: str) -> game_pb2.GameState:
        request = engine_pb2.NewGameRequest(game=game, setup=setup)
        state: game_pb2.GameState = engine.NewGame(request, timeout=30).state
        return state

    return call


def war_reading(
    describe: Describe, legal: Callable[..., list[str]], text: str, state: game_pb2.GameState
) -> Reading:
    reply = describe("war")
    return read(text, legal(state), Cells(reply.board), words())


def test_cells_are_found_inside_any_notation(describe: Describe) -> None:
    war, battle = Cells(describe("war").board), Cells(describe("battle").board)
    assert war.of("Hb1-c3") == ["b1", "c3"]
    assert war.of("a3:c5:e7") == ["a3", "c5", "e7"]
    assert war.of("Ma1-a10") == ["a1", "a10"]
    assert war.of("F@e5") == ["e5"]
    assert battle.of("36x51") == ["36", "51"]
    assert battle.of("C51") == ["51"]
    assert Cells(describe("napoleonic").board).of("attack d4>e5") == ["d4", "e5"]


def test_a_destination_reached_by_one_legal_action_plays_it(
    describe: Describe, legal: Callable[..., list[str]], position: Callable[..., game_pb2.GameState]
) -> None:
    state = position("war", WAR_ENDGAME)
    assert war_reading(describe, legal, "j9", state) == Reading(play="Mj1-j9")
    assert war_reading(describe, legal, " A2 ", state) == Reading(play="Ka1-a2")


def test_a_destination_reached_by_several_or_none_is_said_so(
    describe: Describe, legal: Callable[..., list[str]], position: Callable[..., game_pb2.GameState]
) -> None:
    several = war_reading(describe, legal, "b1", position("war", WAR_ENDGAME))
    assert several == Reading(hint="more than one action goes to b1: Ka1-b1, Mj1-b1", replaces=True)
    opening = war_reading(describe, legal, "a4", describe("war").initial_state)
    assert opening.hint == "more than one action goes to a4: a3-a4, F@a4"  # a placement too
    assert war_reading(describe, legal, "c3", position("war", WAR_ENDGAME)) == Reading(
        hint="no legal action goes to c3", replaces=True
    )


def test_a_chess_letter_gets_the_games_own(
    describe: Describe, legal: Callable[..., list[str]], position: Callable[..., game_pb2.GameState]
) -> None:
    reading = war_reading(describe, legal, "Rj1-j9", position("war", WAR_ENDGAME))
    assert reading == Reading(hint="did you mean Mj1-j9? (M is the Mortar here)")
    opening = war_reading(describe, legal, "Bh1-g2", describe("war").initial_state)
    assert opening == Reading(hint="did you mean Ch1-g2? (C is the Cannon here)")


def test_a_chess_letter_over_cells_no_legal_action_takes_is_put_in_the_games_letter(
    describe: Describe, legal: Callable[..., list[str]], position: Callable[..., game_pb2.GameState]
) -> None:
    # In the opening c3 holds South's own Troop: no Horse goes there, so nothing is
    # suggested, but the knight's N is the game's H (both drawn as the knight), for the
    # engine to say why Hb1-c3 is not legal.
    opening = describe("war").initial_state
    assert war_reading(describe, legal, "Nb1-c3", opening) == Reading(instead="Hb1-c3")
    assert war_reading(describe, legal, "qe1-e9", opening) == Reading(instead="Ge1-e9")
    assert war_reading(describe, legal, "Rj1-a1", position("war", WAR_ENDGAME)) == Reading(
        instead="Mj1-a1"  # a1 holds South's own King
    )
    # Not such a habit: the game's own letter, a letter no chess piece has, no cell after it.
    assert war_reading(describe, legal, "Hb1-c3", opening) == Reading()
    assert war_reading(describe, legal, "Zb1-c3", opening) == Reading()
    assert war_reading(describe, legal, "N-b1-c3", opening) == Reading()
    # Napoleonic Chess draws three kinds with the knight: N names none of them for sure.
    reply = describe("napoleonic")
    actions = legal(reply.initial_state)
    assert read("Nb2-b5", actions, Cells(reply.board), words()) == Reading()


def test_napoleonic_moves_without_their_keyword(
    describe: Describe, legal: Callable[..., list[str]], position: Callable[..., game_pb2.GameState]
) -> None:
    cells = Cells(describe("napoleonic").board)
    actions = legal(position("napoleonic", NAPOLEONIC_ENDGAME))
    assert read("a1-b1", actions, cells, words()) == Reading(hint="did you mean move a1-b1?")
    assert read("b1", actions, cells, words()) == Reading(play="move a1-b1")


def test_mistyped_words_get_the_nearest_one(
    describe: Describe, legal: Callable[..., list[str]]
) -> None:
    opening = describe("war").initial_state
    assert war_reading(describe, legal, "mvoes", opening).hint == "did you mean `moves`?"
    assert war_reading(describe, legal, "hnit", opening).hint == "did you mean `hint`?"
    assert war_reading(describe, legal, "zz-top", opening) == Reading()
    reply = describe("napoleonic")
    napoleonic = read("atack", legal(reply.initial_state), Cells(reply.board), words())
    assert napoleonic == Reading()  # no attack is legal now: nothing to point at
    assert read("mvoe", legal(reply.initial_state), Cells(reply.board), words()).hint == (
        "did you mean `move`?"
    )


def test_a_suggestion_never_changes_the_piece_the_player_named(
    describe: Describe, legal: Callable[..., list[str]]
) -> None:
    # Chess's Nf3 and e2e4 in the War opening: no Horse goes to f3 and e2 holds nothing,
    # so neither is "F@f3" or "F@e2" (a Flying Machine); what can go to f3 is said.
    opening = describe("war").initial_state
    actions = legal(opening)
    knight = war_reading(describe, legal, "Nf3", opening)
    assert "did you mean" not in knight.hint
    going = [action for action in actions if action.endswith("f3")]
    assert going and knight.hint == f"no Horse of yours can go to f3; what can: {', '.join(going)}"
    pawn = war_reading(describe, legal, "e2e4", opening)
    assert "F@" not in pawn.hint and "did you mean" not in pawn.hint, pawn
    cells = Cells(describe("war").board)
    assert cells.of("e2e4") == ["e2", "e4"]
    assert cells.of("e3e4") == ["e3", "e4"]
    assert war_reading(describe, legal, "e3e4", opening) == Reading(hint="did you mean e3-e4?")


def test_a_piece_named_before_a_notation_without_letters_is_the_one_standing_there(
    describe: Describe, legal: Callable[..., list[str]], position: Callable[..., game_pb2.GameState]
) -> None:
    # Battle's `34-35` and Napoleonic's `move a1-a2` name no piece: the man on the first
    # cell is the one they move. Naming him is no mistake to refute ("no Cavalry of yours
    # can go to 35" was said of the Cavalry that can); naming another man keeps that man.
    for game, setup, right, wrong, legal_one in (
        ("battle", "attacker to move; attacker: W129 C34; defender: T19 I42 L7",
         "C34-35", "I34-35", "34-35"),
        ("napoleonic", NAPOLEONIC_ENDGAME, "Ga1-a2", "Ia1-a2", "move a1-a2"),
    ):  # fmt: skip
        reply = describe(game)
        state = position(game, setup)
        letters = {kind.id: kind.letter.upper() for kind in reply.board.piece_kinds}
        standing = {piece.cell.lower(): letters[piece.kind] for piece in state.pieces}
        cells, actions = Cells(reply.board), legal(state)
        assert read(right, actions, cells, words(), standing) == Reading(
            hint=f"did you mean {legal_one}?"
        )
        named = cells.letters[wrong[0]]
        where = cells.of(legal_one)[-1]
        assert read(wrong, actions, cells, words(), standing).hint == (
            f"no {named} of yours can go to {where}; what can: {legal_one}"
        )

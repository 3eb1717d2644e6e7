"""Engine refusals and events as players read them, taken from the real engine's answers."""

from __future__ import annotations

import re

from cli_client.wording import as_played, for_players, refusal
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

SECTION = re.compile(r"\((?:[A-Z]\.?)?\d+(?:\.\d+)*(?:, ?\d+)*\)")


def refused(
    engine: engine_pb2_grpc.RulesEngineStub, game: str, text: str
) -> engine_pb2.ValidateActionResponse:
    state = engine.NewGame(engine_pb2.NewGameRequest(game=game), timeout=30).state
    action = game_pb2.Action(side=state.to_act[0], notation=text)
    reply = engine.ValidateAction(
        engine_pb2.ValidateActionRequest(state=state, action=action), timeout=30
    )
    assert not reply.legal
    return reply


def test_a_refusal_is_the_rule_in_words_with_its_section_and_alternatives_beside(
    engine: engine_pb2_grpc.RulesEngineStub,
) -> None:
    reply = refused(engine, "war", "e3-e6")
    # The engine's sentence has neither citation nor list: those come as details.
    assert not SECTION.search(reply.message) and "e3-e4" not in reply.message
    assert reply.rule == "7" and list(reply.alternatives) == ["e3-e4", "e3-e5"]
    text = refusal(reply.message, "e3-e6")
    assert text.startswith("the South Troop on e3 cannot go to e6: a Troop steps forward")
    assert "'e3-e6'" not in text


def test_notation_help_is_left_for_help(engine: engine_pb2_grpc.RulesEngineStub) -> None:
    for game, typed, kept in (
        ("war", "zz-top", "'zz-top' is no move"),
        ("battle", "zz", "cannot read 'zz'"),
        ("napoleonic", "c3", "not an action"),
    ):
        text = refusal(refused(engine, game, typed).message, typed)
        assert text.startswith(kept), text
        assert "e.g." not in text and "'move c2-d4'" not in text and "accepted" not in text


def test_section_numbers_go_and_values_stay() -> None:
    assert for_players("Cavalry cannot take the Citadel (7)") == "Cavalry cannot take the Citadel"
    assert for_players("not protected (A.1); and (5, 6) or (A24)") == "not protected; and or"
    assert for_players("supports infantry on e6 (+1).") == "supports infantry on e6 (+1)."
    assert for_players("3 turn(s) (10.4)") == "3 turn(s)"


def test_option_names_are_not_shown(engine: engine_pb2_grpc.RulesEngineStub) -> None:
    state = engine.NewGame(engine_pb2.NewGameRequest(game="napoleonic"), timeout=30).state
    options = list(state.options)
    text = "red has no legal support, so combat is resolved at once (auto_skip_defence)."
    assert for_players(text, options) == "red has no legal support, so combat is resolved at once."
    assert for_players("every player commits again (illegal_reveal = redeploy).", options) == (
        "every player commits again."
    )
    assert for_players("may advance (advance).", options) == "may advance (advance)."


def test_side_names_are_capitalised_as_the_client_writes_them(
    engine: engine_pb2_grpc.RulesEngineStub,
) -> None:
    # The engine's own ending of a resignation, as it writes it, then as players read it.
    state = engine.NewGame(engine_pb2.NewGameRequest(game="war"), timeout=30).state
    action = game_pb2.Action(side="south", resign=game_pb2.Resign())
    ended = engine.ApplyActions(
        engine_pb2.ApplyActionsRequest(state=state, actions=[action]), timeout=30
    ).state
    assert ended.outcome.message == "south resigns; north wins"
    assert for_players(ended.outcome.message, sides=["south", "north"]) == (
        "South resigns; North wins"
    )
    sides = ["red", "black"]
    assert for_players("red eliminates black's Guards: red wins (9.1)", sides=sides) == (
        "Red eliminates Black's Guards: Red wins"
    )
    # Only whole words that are side ids: not inside other words or names.
    assert for_players("a redoubt; the red-black line; blacksmith", sides=sides) == (
        "a redoubt; the red-black line; blacksmith"
    )
    assert for_players("south resigns; north wins") == "south resigns; north wins"  # no sides
    assert refusal("black cannot act for red", sides=sides) == "Black cannot act for Red"


def test_identifiers_left_in_a_sentence_are_read_as_words() -> None:
    said = "move is not legal in the attack_declaration phase"
    assert for_players(said) == "move is not legal in the attack declaration phase"
    # Notation and quoted text stay as they are.
    assert for_players("cannot read 'light_infantry'") == "cannot read 'light_infantry'"
    assert for_players("try `moves` or x=attack_declaration") == (
        "try `moves` or x=attack_declaration"
    )


def test_a_move_is_shown_without_the_citadel_mark_the_engine_writes_on_the_losers_reply() -> None:
    assert as_played("a7-a6#C") == "a7-a6"
    assert as_played("Ch1xa8") == "Ch1xa8"
    assert as_played("move c3-c4") == "move c3-c4"


def test_the_surrenders_the_server_writes_are_shown_in_words_the_players_own_as_typed() -> None:
    # "You: abandon" and "1. abandon" read as a command, not as what happened.
    assert as_played("abandon") == "abandoned the game"
    assert as_played("timeout") == "out of time"
    assert as_played("resign") == "resign"

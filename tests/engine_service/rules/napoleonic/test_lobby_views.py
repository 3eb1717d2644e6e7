"""What lobbies and boards are shown of a game (10.6, 11): every scenario with its title,
description and players, and the pieces with their ids and tags."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from engine_service.rules.base import SideInfo
from engine_service.rules.napoleonic import scenarios
from engine_service.rules.napoleonic.scenarios import COLOURS
from tests.engine_service.rules.napoleonic.helpers import RULESET, play_text


def test_10_6_every_scenario_is_offered_with_its_players() -> None:
    raw: dict[str, Any] = json.loads(
        resources.files(scenarios.__package__).joinpath("scenarios.json").read_text("utf-8")
    )
    offered = RULESET.scenarios()
    assert [s.name for s in offered] == list(raw["scenarios"])
    for info in offered:
        data = raw["scenarios"][info.name]
        assert (info.title, info.description) == (data["title"], data["description"])
        players = data.get("players") or [
            {"id": "red", "name": "Red", "alliance": "red"},
            {"id": "black", "name": "Black", "alliance": "black"},
        ]
        assert info.sides == tuple(
            SideInfo(p["id"], p["name"], COLOURS[p["id"]], p["alliance"]) for p in players
        )
    three_way = next(s for s in offered if s.name == "three_way")
    assert [side.id for side in three_way.sides] == ["red", "black", "green"]


def test_pieces_show_moves_as_a_tag_not_as_wars_moved_flag() -> None:
    options = RULESET.resolve_options({})
    state = RULESET.new_game(options, "board 8x8; red: d4=I h1=G; black: a8=G")
    state, _events = play_text(RULESET, state, ["red move d4-d5"])
    pieces = {p.id: p for p in RULESET.pieces(state)}
    assert pieces["R_I"].tags == ("moved",) and pieces["R_I"].cell == "d5"
    # `moved` is the Game of War's flag (a Troop's double step); Napoleonic units never
    # carry it.
    assert not any(p.moved for p in pieces.values())

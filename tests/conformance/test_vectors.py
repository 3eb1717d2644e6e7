"""The conformance vectors are the engine's answers of today, and cover what they promise.

The vectors are regenerated in-process into a temporary folder (tools/conformance) and
compared file by file with tests/conformance/<game>/: any difference means the engine's
answers changed (or the generator did) and the vectors must be regenerated on purpose.
In `make test` the perft tables are sampled (`test_the_vectors_are_current`), under -m slow
regenerated whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine_service.rules import rulesets
from tests import seeds
from tools.conformance.generate import NOT_IN_VECTORS, generate, text_of, write
from wargame.v1 import engine_pb2, errors_pb2

HERE = Path(__file__).parent
# The matchmaker's own: TOKEN_MISSING .. STORE_UNAVAILABLE, TOO_MANY_GAMES .. TOO_MANY_WATCHERS.
MATCHMAKER_REASONS = {*range(106, 120), *range(130, 140)}


GAMES = sorted(rulesets())  # every registered game has vectors


def _stored(game: str = "*") -> dict[str, str]:
    return {
        str(path.relative_to(HERE)): path.read_text(encoding="utf-8")
        for path in sorted(HERE.glob(f"{game}/*.json"))
    }


def _shallower(stored: str, fresh: str) -> str:
    """A stored perft vector cut to the depth of its fresh sample (as it was, if not one)."""
    before, after = json.loads(stored), json.loads(fresh)
    if before.get("rpc") != "perft" or after["request"]["depth"] >= before["request"]["depth"]:
        return stored
    depth = after["request"]["depth"]
    before["request"]["depth"] = depth
    before["response"]["counts"] = before["response"]["counts"][:depth]
    return text_of(before)


# One game at a time: each regeneration is a minute's work on a quiet machine, so the three
# spread over the test workers, each with room for a busy machine. perft to depth 3 is nearly
# all of that time (battle's seven tables some 18 s of CPU, the rest of its vectors 2 s), so
# the sample form regenerates every other vector (every section, every RPC, answers and
# refusals) whole, and perft to depth 2 for every position and to depth 3 for one position
# per game, which one turning with the run's seed (tests/seeds.py): a change to the engine's
# answers still shows in the many vectors it reaches, a change to move generation in the
# first two plies of every perft position and three of one; -m slow compares every table
# to depth 3.
@pytest.mark.timeout(900)
@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
@pytest.mark.parametrize("game", GAMES)
def test_the_vectors_are_current(
    game: str, in_depth: bool, playout_seed: int, tmp_path: Path
) -> None:
    write(tmp_path, generate(only=[game], perft_turn=None if in_depth else playout_seed))
    fresh = {
        str(path.relative_to(tmp_path)): path.read_text(encoding="utf-8")
        for path in sorted(tmp_path.glob("*/*.json"))
    }
    stored = _stored(game)
    for name in set(fresh) & set(stored):
        stored[name] = _shallower(stored[name], fresh[name])
    missing = sorted(set(fresh) - set(stored))
    extra = sorted(set(stored) - set(fresh))
    changed = sorted(name for name in set(fresh) & set(stored) if fresh[name] != stored[name])
    problems = [f"new: {n}" for n in missing] + [f"gone: {n}" for n in extra]
    problems += [f"changed: {n}" for n in changed]
    assert not problems, (
        f"tests/conformance/{game} is stale ({len(problems)} files): run `make conformance` "
        "and review the diff\n" + "\n".join(problems[:20])
    )


def _cases() -> list[dict[str, Any]]:
    return [json.loads(text) for text in _stored().values()]


def test_each_vector_is_one_call_with_one_answer() -> None:
    methods = set(engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"].methods_by_name)
    cases = _cases()
    for case in cases:
        assert set(case) in (
            {"name", "rpc", "request", "response"},
            {"name", "rpc", "request", "error"},
        )
        assert case["rpc"] in methods | {"perft"}, case["name"]
    per_game: dict[str, int] = {}
    for name in _stored():
        game = name.split("/")[0]
        per_game[game] = per_game.get(game, 0) + 1
    assert per_game and all(count >= 300 for count in per_game.values()), per_game


def test_every_reason_of_the_engine_has_a_vector() -> None:
    given = set()
    for case in _cases():
        if "error" in case:
            given.add(case["error"]["reason"])
        elif case["rpc"] == "ValidateAction" and "reason" in case["response"]:
            given.add(case["response"]["reason"].removeprefix("ERROR_REASON_"))
    engine_reasons = {
        name.removeprefix("ERROR_REASON_")
        for name, number in errors_pb2.ErrorReason.items()
        if number and number not in MATCHMAKER_REASONS
    }
    assert engine_reasons - given == set(NOT_IN_VECTORS)
    assert not given - engine_reasons, given - engine_reasons


def test_every_rpc_but_suggest_action_answers_in_a_vector() -> None:
    # (ResolveBattle answers for a battle already decided, which needs no search.)
    answered = {case["rpc"] for case in _cases() if "response" in case}
    methods = set(engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"].methods_by_name)
    assert methods - answered == {"SuggestAction"}


def test_the_book_cases_end_as_the_book_says() -> None:
    # Napoleonic Chess's 48 worked cases (spec 13): a case the book rejects ends in a vector
    # refused at the book's action with the book's reason; the others are answered whole.
    from tests.engine_service.rules.napoleonic.helpers import all_cases

    for case in all_cases():
        files = sorted((HERE / "napoleonic").glob(f"book-{case['id']}-*-ApplyActions.json"))
        vectors = [json.loads(path.read_text(encoding="utf-8")) for path in files]
        refused = [v["error"]["reason"] for v in vectors if "error" in v]
        expect = case["expect"]
        if expect.get("status") == "rejected":
            assert refused == [expect["error"]], case["id"]
            assert len(vectors) == expect["at_action"] + 1, case["id"]
        else:
            assert not refused and len(vectors) == len(case["actions"]), case["id"]


@pytest.mark.parametrize("game", ["war", "battle"])
def test_the_book_examples_play_as_the_book_says(game: str) -> None:
    # The worked examples of tests/engine_service/rules/<game>/book.py: each line the book
    # plays is answered, each it forbids refused with the book's reason, each listing kept.
    from tests.engine_service.rules.book import book_of, read_line
    from tools.conformance.generate import file_name

    book = book_of(game)
    assert book is not None and book.EXAMPLES
    for name, example in book.EXAMPLES.items():
        assert (HERE / game / file_name(f"book/{name}/NewGame")).exists(), name
        for variation, lines in example.variations.items():
            for number, raw in enumerate(lines, 1):
                line = read_line(raw)
                rpc = "ListLegalActions" if line.kind == "list" else "ApplyActions"
                path = HERE / game / file_name(f"book/{name}/{variation}/{number:02d}/{rpc}")
                vector = json.loads(path.read_text(encoding="utf-8"))
                if line.kind == "refuse":
                    assert vector["error"]["reason"] == line.reason, (name, raw)
                else:
                    assert "response" in vector, (name, raw)


def test_the_readme_counts_the_vectors() -> None:
    from tools.conformance.generate import table

    cases: dict[str, dict[str, dict[str, Any]]] = {}
    for name, text in _stored().items():
        case = json.loads(text)
        cases.setdefault(name.split("/")[0], {})[case["name"]] = case
    order = ["war", "battle", "napoleonic"]
    expected = table({game: cases[game] for game in order})
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    assert expected in readme, "tests/conformance/README.md: the table should read\n" + expected

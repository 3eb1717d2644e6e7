"""Every memory the engine keeps is bounded.

A cache keyed by the `initial_position` text clients send used to be kept for ever, so a
long-lived worker's memory grew with every distinct position sent. Now every cache is a
`engine_service.memo` memory with a bound (`memo.memories()` lists them all): flooding the
engine with distinct positions and option sets fills them to their bounds and no further.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import grpc
import pytest

from engine_service.memo import memories
from wargame.v1 import engine_pb2, engine_pb2_grpc

pytestmark = pytest.mark.integration

RANKS = [
    "mhc1gk1chm", "1t1t1t1t1t", "t1t1t1t1t1", "10", "10", "10", "10",
    "T1T1T1T1T1", "1T1T1T1T1T", "MHC1GK1CHM",
]  # fmt: skip
FREE = [(rank, file) for rank in range(3, 7) for file in range(10)]  # ranks 7..4: empty


def _rank(pieces: dict[int, str]) -> str:
    text, gap = "", 0
    for file in range(10):
        if file in pieces:
            text += (str(gap) if gap else "") + pieces[file]
            gap = 0
        else:
            gap += 1
    return text + (str(gap) if gap else "")


def war_positions(count: int) -> list[str]:
    """`count` distinct War initial positions: a Troop of each side moved into the middle."""
    found = []
    for south, north in itertools.permutations(FREE, 2):
        ranks = list(RANKS)
        ranks[7], ranks[2] = "2T1T1T1T1", "2t1t1t1t1"  # the Troops of a3 and a8 move
        middle: dict[int, dict[int, str]] = {}
        middle.setdefault(south[0], {})[south[1]] = "T"
        middle.setdefault(north[0], {})[north[1]] = "t"
        for rank, pieces in middle.items():
            ranks[rank] = _rank(pieces)
        found.append("/".join(ranks) + " S FF:ff")
        if len(found) == count:
            return found
    raise AssertionError("not that many positions")


def test_distinct_positions_and_option_sets_fill_the_memories_to_their_bounds(
    engine_channel: grpc.Channel,
) -> None:
    stub = engine_pb2_grpc.RulesEngineStub(engine_channel)
    positions = war_positions(600)
    for position in positions:
        state = stub.NewGame(
            engine_pb2.NewGameRequest(game="war", options={"initial_position": position})
        ).state
        stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state))
    for repetition, quiet in itertools.product(range(2, 22), range(1, 31)):
        options = {"repetition_draw": str(repetition), "no_capture_limit": str(quiet)}
        state = stub.NewGame(engine_pb2.NewGameRequest(game="battle", options=options)).state
        stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state))
    for width, height in itertools.product(range(6, 17), range(6, 17)):
        stub.DescribeGame(
            engine_pb2.DescribeGameRequest(
                game="napoleonic", setup=f"board {width}x{height}; red: a1=G; black: a{height}=G"
            )
        )
    found = {memory.name: memory for memory in memories()}
    assert all(memory.size <= memory.maxsize for memory in found.values()), found
    # The floods went past the bounds of the memories keyed by what clients send.
    for name in (
        "engine_service.rules.war.start._citadels_of",
        "engine_service.rules.base._resolved_options",
    ):
        assert found[name].size == found[name].maxsize, found[name]


ROOT = Path(__file__).resolve().parents[2]
CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "WeakValueDictionary"}


def unbounded_memories(package: Path) -> list[str]:
    """Module-level containers that start empty (where a cache would grow) and functools
    caches without a bound, in the Python files under `package`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            empty = isinstance(value, (ast.Dict, ast.List, ast.Set)) and not (
                getattr(value, "keys", None) or getattr(value, "elts", None)
            )
            made = (
                isinstance(value, ast.Call)
                and isinstance(value.func, (ast.Name, ast.Attribute))
                and (getattr(value.func, "id", None) or getattr(value.func, "attr", None))
                in CONTAINERS
                and not value.args
            )
            if empty or made:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in function.decorator_list:
                    text = ast.unparse(decorator)
                    if text.endswith("cache") or "maxsize=None" in text:
                        found.append(f"{path.relative_to(ROOT)}:{function.lineno} @{text}")
    return found


def test_the_engine_keeps_no_memory_outside_the_bounded_ones() -> None:
    found = unbounded_memories(ROOT / "engine_service")
    # memo.py's own registries list the memories; they grow with the code, not the input.
    assert [place for place in found if not place.startswith("engine_service/memo.py")] == []

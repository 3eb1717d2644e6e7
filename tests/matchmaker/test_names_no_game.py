"""The matchmaker names no game: its code serves every game the engine registers.

What the matchmaker needs of a state (who acts, how the game ended, what the rules hide
and from whom, the phase) it reads through the grammar every position text shares
(`wargame.position_text`), the parts of the view every game's detail that has them names
alike, or the engine. So no module of `matchmaker/` names a registered game (an id from
`engine_service.rules.games()`) in its code: not in an identifier (`napoleonic_pb2`, a
field `.battle`), not in a string it compares or sends (`"war"`). Docstrings and comments
may cite the rules they follow ("Napoleonic Chess 10.1"): they are read, not run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from engine_service.rules import games

ROOT = Path(__file__).resolve().parent.parent.parent
GAME_IDS = tuple(entry.id for entry in games())


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that stand alone as statements (docstrings and the
    like): documentation, not code."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _identifiers(node: ast.AST) -> list[str]:
    """The names a node writes in code: variables, attributes, imports, definitions."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [str(getattr(node, "attr", None) or getattr(node, "name", ""))]
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg or ""]
    return []


def namings(source: str) -> list[str]:
    """Where a module's code names a game: `line: text` for each identifier part or string
    word that is a game id."""
    tree = ast.parse(source)
    documentation = _docstrings(tree)
    word = re.compile(r"\b(" + "|".join(map(re.escape, GAME_IDS)) + r")\b", re.IGNORECASE)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        for name in _identifiers(node):
            parts = re.split(r"[._]", name.lower())
            found += [f"{line}: {name}" for part in parts if part in GAME_IDS]
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in documentation
            and word.search(node.value)
        ):
            found.append(f"{line}: {node.value!r}")
    return sorted(set(found))


def test_the_game_ids_are_the_registry_s() -> None:
    assert len(GAME_IDS) >= 3 and "napoleonic" in GAME_IDS


def test_the_check_finds_a_game_named_in_code_and_not_in_documentation() -> None:
    source = (
        '"""Napoleonic Chess 10.1: the arrays are chosen unseen."""\n'
        "from wargame.v1 import napoleonic_pb2\n"
        "# the Game of War\n"
        'def f(state):\n    """War, battle."""\n    return state.game == "war" or state.battle\n'
    )
    assert namings(source) == ["2: napoleonic_pb2", "6: 'war'", "6: battle"]


def test_no_matchmaker_module_names_a_game() -> None:
    found = {
        path.relative_to(ROOT).as_posix(): hits
        for path in sorted((ROOT / "matchmaker").rglob("*.py"))
        if (hits := namings(path.read_text(encoding="utf-8")))
    }
    assert found == {}

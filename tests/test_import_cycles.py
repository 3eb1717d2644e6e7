"""No product module imports itself back, at module level or inside a function.

The imports of every product module (`cli_client`, `engine_service`, `matchmaker`, `tools`,
`wargame`, `web`; generated `wargame/v1` aside) are read from its syntax tree: those at module
level and those inside functions both count, since a function-level import only hides a
cycle until the function runs. Imports under `if TYPE_CHECKING:` do not count: they never
run, and the one kind of type cycle left is a value naming the cache it carries (the Game
of Battle's state keeps its `legal.Analysis`). Helpers that talk to their owner get a small
`Protocol` of what they may use of it (`cli_client/hooks.py`, `updates.Loop`) instead of
importing it back.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("cli_client", "engine_service", "matchmaker", "tools", "wargame", "web")
GENERATED = "wargame/v1/"


def _modules() -> dict[str, Path]:
    found = {}
    for root in PRODUCT:
        for path in sorted((ROOT / root).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative.as_posix().startswith(GENERATED):
                continue
            parts = relative.with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that runs, at any depth (`if TYPE_CHECKING:` blocks skipped)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if _type_checking(node):
            assert isinstance(node, ast.If)
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def imported(name: str, path: Path) -> set[str]:
    """The product modules that module `name` imports (`from package import module` names
    the module, not the package's `__init__`)."""
    out: set[str] = set()
    for node in _imports(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, *([node.module] if node.module else [])])
        submodules = {f"{base}.{alias.name}" for alias in node.names}
        if submodules <= MODULES.keys():
            out |= submodules
        else:
            out |= {base} | (submodules & MODULES.keys())
    return {module for module in out if module in MODULES and module != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or around (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_finder_sees_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    loop = tmp_path / "loop.py"
    loop.write_text("def later():\n    from cli_client.helper import x\n", "utf-8")
    helper = tmp_path / "helper.py"
    helper.write_text("from cli_client.loop import Loop\n", "utf-8")
    typed = tmp_path / "typed.py"
    typed.write_text("if TYPE_CHECKING:\n    from cli_client.helper import x\n", "utf-8")
    MODULES.update({"cli_client.loop": loop, "cli_client.helper": helper})
    try:
        assert imported("cli_client.loop", loop) == {"cli_client.helper"}
        assert imported("cli_client.typed", typed) == set()
        graph = {"cli_client.loop": {"cli_client.helper"}, "cli_client.helper": set()}
        graph["cli_client.helper"] = imported("cli_client.helper", helper)
        assert cycles(graph) == [["cli_client.helper", "cli_client.loop"]]
    finally:
        del MODULES["cli_client.loop"], MODULES["cli_client.helper"]


def test_no_product_module_imports_itself_back() -> None:
    graph = {name: imported(name, path) for name, path in MODULES.items()}
    assert len(graph) > 100 and graph["cli_client.play"] >= {"cli_client.updates"}
    found = cycles(graph)
    assert not found, "import cycles (each group imports itself back):\n" + "\n".join(
        " <-> ".join(group) for group in found
    )

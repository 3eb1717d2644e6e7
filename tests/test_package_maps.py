"""Every package's "Where things are" map names every file in its folder.

A package's map is its `__init__.py` docstring. It names each module and data file by its
file name (`position.py`, `board.json`, `commit.lua`) and each subpackage as a folder
(`napoleonic/`), so a reader finds a file's role from the folder's map, and a file added
without a line in the map fails here, naming the file and the map to add it to.
Generated code (`wargame/v1`) has no map. Files and documents that product docstrings
point at (`tests/...`, `docs/...`) exist.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("cli_client", "engine_service", "matchmaker", "tools", "wargame", "web")
GENERATED = {"wargame/v1"}
NOT_MAPPED = {"__init__.py", "py.typed", "__pycache__"}
CITED = re.compile(r"(?<![\w/.])(?:tests|docs)/[\w/.-]+\.(?:py|md|json|txt)\b")


def _packages() -> list[Path]:
    found = (init.parent for root in PRODUCT for init in (ROOT / root).rglob("__init__.py"))
    return sorted(p for p in found if p.relative_to(ROOT).as_posix() not in GENERATED)


def _map_of(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text("utf-8"))) or ""


def _entries(package: Path) -> list[str]:
    """The names a package's map must hold: files by name, folders as `name/`."""
    names = []
    for entry in sorted(package.iterdir()):
        if entry.name in NOT_MAPPED or entry.name.startswith(".") or entry.suffix == ".pyc":
            continue
        if entry.suffix == ".so":  # built here from a module the map names (setup.py: mypyc)
            continue
        names.append(entry.name + "/" if entry.is_dir() else entry.name)
    return names


def names(text: str, entry: str) -> bool:
    """Whether `text` names `entry` as a whole name (not as the tail of a path or word)."""
    end = "" if entry.endswith("/") else r"(?![\w])"
    return re.search(r"(?<![\w/.])" + re.escape(entry) + end, text) is not None


PACKAGES = _packages()


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_package_map_names_every_file_in_its_folder(package: Path) -> None:
    text = _map_of(package)
    where = (package / "__init__.py").relative_to(ROOT).as_posix()
    missing = [entry for entry in _entries(package) if not names(text, entry)]
    assert not missing, "\n".join(
        f"{where}: its map does not name {entry} (add it, with its role)" for entry in missing
    )


def test_every_file_product_docstrings_point_at_exists() -> None:
    missing = []
    for root in PRODUCT:
        for path in sorted((ROOT / root).rglob("*.py")):
            if any(path.relative_to(ROOT).as_posix().startswith(g) for g in GENERATED):
                continue
            for cited in sorted(set(CITED.findall(path.read_text("utf-8")))):
                if not (ROOT / cited).exists():
                    missing.append(f"{path.relative_to(ROOT)} points at {cited}: not there")
    assert not missing, "\n".join(missing)


def test_the_check_sees_a_missing_name() -> None:
    assert names("- `position.py`  the text", "position.py")
    assert not names("- `war/position.py`  the text", "position.py")
    assert not names("- `position.pyi`", "position.py")
    assert names("`napoleonic/` its map", "napoleonic/")
    assert not names("`ai/napoleonic/`", "napoleonic/")

"""The compiled hot path: which form of the rules runs, and the switch to the pure one.

`setup.py` can compile the rules' hot path (War's and Battle's move generation and play, and
the reading and writing of War's position texts) with mypyc into C extensions beside their
sources (`make setup` and the Docker image do where a C compiler is present), and Python
imports an extension before a source of the same name. With `WARGAME_PURE_PYTHON=1` a finder
placed first on `sys.meta_path` hands out every module of this package from its source instead,
so the same tests run against both forms (`make test`). Without the switch, or without a build,
it changes nothing.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from importlib.machinery import (
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    ModuleSpec,
    SourceFileLoader,
)
from types import ModuleType

PURE_PYTHON = os.environ.get("WARGAME_PURE_PYTHON") == "1"
# A module that is compiled whenever the hot path is (setup.py's COMPILED).
_WITNESS = "engine_service.rules.war.legal"


class SourceFirst:
    """Finds this package's modules among their sources only, never an extension."""

    @staticmethod
    def find_spec(
        name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not name.startswith("engine_service.") or not path:
            return None
        for folder in path:
            spec = FileFinder(folder, (SourceFileLoader, SOURCE_SUFFIXES)).find_spec(name)
            if spec is not None:
                return spec
        return None


def compiled(module: ModuleType) -> bool:
    """Whether `module` was loaded from a C extension (mypyc's modules name a file of their
    own in `__file__`; the loader is what tells)."""
    return isinstance(module.__loader__, ExtensionFileLoader)


def form() -> str:
    """'compiled' when the rules run from the mypyc extensions, else 'pure Python'."""
    return "compiled" if compiled(importlib.import_module(_WITNESS)) else "pure Python"


if PURE_PYTHON and not any(isinstance(finder, SourceFirst) for finder in sys.meta_path):
    sys.meta_path.insert(0, SourceFirst())

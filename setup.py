"""The compiled hot path: mypyc builds the rules cores and the conversion into the package.

    WARGAME_COMPILE=1 python setup.py build_ext --inplace     # beside the sources (make setup)
    WARGAME_COMPILE=1 pip wheel --no-build-isolation .        # into a wheel (deploy/Dockerfile)

Without WARGAME_COMPILE=1 (every ordinary install, `make dist`) nothing is compiled: the
package is pure Python. With it, mypyc (it comes with mypy, pinned in constraints.txt) turns
the modules of `COMPILED` into one C extension, `engine_service/hotpath__mypyc`, with a small
extension beside each module's source; Python then imports the extension before the source,
and the source stays as the fallback (`WARGAME_PURE_PYTHON=1` loads it, see
`engine_service/__init__.py`). `deploy/local/install.py` and the Dockerfile build it where a
C compiler is present and say so in one line.

The rest of pyproject.toml's settings apply unchanged; this adds only the extension.
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
# The rules cores and the conversion: pure, typed (mypy --strict), and where a request's
# time goes. The packages' __init__ modules (registries and re-exports) stay pure Python.
COMPILED = ("engine_service/rules", "engine_service/convert")
# The one shared library every compiled module's extension loads (inside the package).
GROUP = "engine_service.hotpath"
# Left pure: the class hierarchies other code extends. A compiled class takes no interpreted
# subclass (the tests' and docs/adding-a-game.md's games subclass `Ruleset` and
# `GameConverter`), and mypyc cannot compile a class attribute bound to a function
# (`BattleRuleset.play = play_as_method`); each game's ruleset and converter are thin layers
# over the compiled functions below them.
LEFT_PURE = {
    "engine_service/rules/base.py",
    "engine_service/rules/game.py",
    "engine_service/rules/war/ruleset.py",
    "engine_service/rules/battle/ruleset.py",
    "engine_service/rules/napoleonic/ruleset.py",
    "engine_service/convert/base.py",
    "engine_service/convert/war.py",
    "engine_service/convert/battle.py",
    "engine_service/convert/napoleonic.py",
}


def compiled_sources() -> list[str]:
    """The modules mypyc compiles, as paths relative to the repository root."""
    return sorted(
        str(path.relative_to(ROOT))
        for folder in COMPILED
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "__init__.py" and str(path.relative_to(ROOT)) not in LEFT_PURE
    )


def extensions() -> list[object]:
    """The C extensions to build: none unless WARGAME_COMPILE=1."""
    if os.environ.get("WARGAME_COMPILE") != "1":
        return []
    from mypyc.build import mypycify

    os.chdir(ROOT)
    # -O1 without debug information: what docs/throughput.md measured, and a build of less
    # CPU than mypyc's default -O3 on a small machine (gcc takes most of it).
    sources = compiled_sources()
    return list(mypycify(sources, opt_level="1", debug_level="0", group_name=GROUP))


setup(ext_modules=extensions())

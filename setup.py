"""The compiled hot path: mypyc builds the rules' hot path into the package.

    WARGAME_COMPILE=1 python setup.py build_ext --inplace     # beside the sources (make setup)
    WARGAME_COMPILE=1 pip wheel --no-build-isolation .        # into a wheel (deploy/Dockerfile)

Without WARGAME_COMPILE=1 (every ordinary install, `make dist`) nothing is compiled: the
package is pure Python. With it, mypyc (it comes with mypy, pinned in constraints.txt) turns
the modules of `COMPILED` into one C extension, `engine_service/hotpath__mypyc`, with a
small extension beside each module's source; Python then imports the extension before the
source, and the source stays as the fallback (`WARGAME_PURE_PYTHON=1` loads it, see
`engine_service/hotpath.py`). `deploy/local/install.py` and the Dockerfile build it where a
C compiler is present and say so in one line.

The rest of pyproject.toml's settings apply unchanged; this adds only the extension.
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
# The modules mypyc compiles: War's and Battle's move generation and play (Battle's chosen
# by profile: perft and the legal moves; its state too, so that `play` makes a native
# object), and the path of War's position texts, read and written on every request (the
# shared `rules/position.py`, War's `setup`, `start`, `position`, `state`, `pieces`, `board`,
# `actions`, `events`, `endings`, `notation`), each tested in both forms and measured
# (docs/throughput.md). The rest of the rules and the conversion stay pure until what mypyc
# cannot take is rewritten there (a whole build ran the conformance suite into each of
# these): `NapoleonicState.evolve` reads the instance `__dict__`; indexing `bytes` with a
# `slice` held in a tuple (War's consistency checks, which a text the engine tagged skips)
# raises TypeError; `Ruleset`, `GameConverter` and their games' classes are subclassed by
# interpreted code; and mypyc 2.4.1 stops on a loop over a `bytearray` (the compiled modules
# loop over `bytes`).
WAR = (
    *("men", "troops", "check", "legal", "play", "compulsion", "flying_machines"),
    *("pieces", "board", "state", "actions", "setup", "position", "start", "events"),
    *("endings", "notation"),
)
BATTLE = ("state", "movement", "artillery", "legal", "endings", "play")
COMPILED = (
    "engine_service/rules/position.py",
    *(f"engine_service/rules/war/{name}.py" for name in WAR),
    *(f"engine_service/rules/battle/{name}.py" for name in BATTLE),
)
# The one shared library every compiled module's extension loads (inside the package).
GROUP = "engine_service.hotpath"


def compiled_sources() -> list[str]:
    """The modules mypyc compiles, as paths relative to the repository root."""
    return list(COMPILED)


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

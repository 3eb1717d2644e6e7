"""The wargame rules engine: the three games' rules, their AI, and the gRPC servicer.

Stateless by construction: every request carries the whole `GameState`, so any replica
answers any request. The rules are pure Python with no I/O; protobuf appears only at the
edge (`convert/`).

Where things are:

- `main.py`        the `wargame-engine` command: serve, or count positions (perft)
- `workers.py`     one engine process per core, sharing one port (SO_REUSEPORT)
- `service.py`     the `wargame.v1.RulesEngine` servicer (one method per RPC); `handling.py`
                   wraps each with request ids, logs, metrics, limits and the error model
- `pool.py`        expensive calls (searches, long records) admitted to a bounded pool of
                   low-priority processes per worker, stopped when their caller leaves
- `convert/`       proto <-> core values: the shared part in `base.py`, one module per game,
                   boards and events in `describe.py`
- `ai/`            suggestions within a time budget: the search (`search.py`) with each
                   game's policy (`war.py`, `battle.py`), the Napoleonic turn planner
                   (`napoleonic/`), evaluation helpers (`evaluation.py`), the playing
                   strengths 1-5 (`levels.py`)
- `memo.py`        the bounded memory every cache in the engine uses
- `hotpath.py`     which form of the rules runs: compiled (mypyc, setup.py) or pure Python
- `rules/`         the games behind one `Ruleset` interface (`base.py`), registered once in
                   `rules/__init__.py` (`games()`); shared layer: `board.py` (cell graphs),
                   `options.py` (rulings as options), `draws.py` (repetition, no progress),
                   `game.py` (resignation and draws by agreement around any game),
                   `record.py` (game records), `errors.py` (refusal reasons)
- `rules/war/`, `rules/battle/`, `rules/napoleonic/`  one package per game, its modules
                   named by role, the same in every game (each package's docstring maps
                   them): `ruleset`, `options`, `pieces`, `board`, `state`, `actions`,
                   `setup` (set-up text), `start` (the initial state), `legal`, `explain`,
                   `play`/`phases`, `events`, `endings`, `notation`, `consistency`,
                   `describe`; then the game's own rules by section
"""

# Before any other module of this package: structlog loads without rich (see
# wargame.runtime.logs), and WARGAME_PURE_PYTHON=1 passes over the compiled hot path.
import engine_service.hotpath  # noqa: F401
import wargame.runtime.logs  # noqa: F401

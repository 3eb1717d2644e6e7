"""docs/adding-a-game.md, followed step by step: a fourth game added to a copy of the tree.

The guide is proved by doing what it says. `step_1_...` to `step_11_...` each do one of the
guide's numbered steps (their docstrings are its headings) to a copy of the repository,
adding *Toy Skirmish* (a 5x5 board, pawns and a chief a side), with the project's own
commands and pinned tools (`make proto`, `buf`, the golden and perft commands); then the
game-independent conformance suite, the conformance vectors' check and the package maps'
test run over the copy. The toy's code below is what a maintainer writes from the guide.

`test_the_test_takes_the_guides_steps` (cheap, in `make test`) keeps this file and the guide
in step: a step added to, dropped from or renamed in the guide fails it until the test
follows. Following the guide takes minutes of CPU, so it runs under `make test-slow`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "adding-a-game.md"
LEFT_OUT = shutil.ignore_patterns(
    ".git", ".venv", "run", "node_modules", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis"
)
STEP = re.compile(r"^## (Step \d+\. .+)$", re.MULTILINE)

TOY_PACKAGE = r'''"""Toy Skirmish: a five-by-five game with two kinds of men.

Where things are:

- `ruleset.py`  the rules, all in one module
"""

from engine_service.rules.base import GameEntry
from engine_service.rules.toy.ruleset import ToyRuleset

GAME = GameEntry(ruleset=ToyRuleset, converter="engine_service.convert.toy:ToyConverter", ai="")
'''

TOY_RULESET = r'''"""Toy Skirmish: the rules in one module (a real game splits them by role)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import ClassVar, NamedTuple

from engine_service.rules.base import (
    BoardDescription,
    CellInfo,
    CellShape,
    Event,
    EventKind,
    Outcome,
    OutcomeReason,
    PieceKind,
    PieceView,
    Ruleset,
    SideInfo,
    require_ongoing,
)
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import OptionKind, Options, OptionSpec

SIZE = 5
NAMES = tuple(f"{'abcde'[cell % SIZE]}{cell // SIZE + 1}" for cell in range(SIZE * SIZE))
INDEX = {name: cell for cell, name in enumerate(NAMES)}
SIDES = (SideInfo("south", "South", "blue"), SideInfo("north", "North", "red"))
LETTERS = {"pawn": "p", "chief": "c"}
KINDS = {letter: kind for kind, letter in LETTERS.items()}
START = "ppcpp/5/5/5/PPCPP S 0"
MOVE = re.compile(r"([a-e][1-5])[-x]([a-e][1-5])")
PAWN_STEPS = ((0, 1, False), (-1, 0, False), (1, 0, False), (-1, 1, True), (1, 1, True))
CHIEF_STEPS = tuple((dx, dy, None) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)


class Move(NamedTuple):
    """A man's step from one cell to another."""

    origin: int
    destination: int


@dataclass(frozen=True, slots=True)
class ToyState:
    """The board (a letter per cell, South's upper case, "" for empty), the side to move
    (0 South, 1 North) and the moves made so far."""

    board: tuple[str, ...]
    side: int
    turn: int
    options: Options


def owner(letter: str) -> int:
    """The side of a man's letter."""
    return 0 if letter.isupper() else 1


def targets(board: tuple[str, ...], cell: int) -> list[int]:
    """Where the man on `cell` may step: a pawn forward or sideways onto an empty cell, or
    diagonally forward onto an enemy; the chief one step any way, onto an empty cell or an
    enemy."""
    letter = board[cell]
    side = owner(letter)
    x, y = cell % SIZE, cell // SIZE
    ahead = 1 if side == 0 else -1
    found = []
    for dx, dy, capture in PAWN_STEPS if letter.lower() == "p" else CHIEF_STEPS:
        tx, ty = x + dx, y + dy * ahead
        if 0 <= tx < SIZE and 0 <= ty < SIZE:
            target = board[ty * SIZE + tx]
            enemy = bool(target) and owner(target) != side
            if (capture is None and (not target or enemy)) or (
                not target if capture is False else enemy
            ):
                found.append(ty * SIZE + tx)
    return found


def board_text(board: tuple[str, ...]) -> str:
    """Ranks 5 to 1, `/`-separated, a digit for a run of empty cells."""
    rows = []
    for y in reversed(range(SIZE)):
        row, empty = "", 0
        for letter in board[y * SIZE : (y + 1) * SIZE]:
            if letter:
                row += (str(empty) if empty else "") + letter
                empty = 0
            else:
                empty += 1
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def board_of(text: str) -> tuple[str, ...]:
    """The board of a `board_text`; INVALID_SETUP naming what is wrong."""
    rows = text.split("/")
    if len(rows) != SIZE:
        raise RuleError(Reason.INVALID_SETUP, f"setup: {len(rows)} ranks, not {SIZE}")
    board: list[str] = [""] * (SIZE * SIZE)
    for number, row in enumerate(rows):
        y, x = SIZE - 1 - number, 0
        for char in row:
            if char in "12345":
                x += int(char)
            elif char.lower() in KINDS and x < SIZE:
                board[y * SIZE + x] = char
                x += 1
            else:
                raise RuleError(Reason.INVALID_SETUP, f"setup: rank {y + 1}: {char!r} misplaced")
        if x != SIZE:
            raise RuleError(Reason.INVALID_SETUP, f"setup: rank {y + 1} has {x} cells")
    return tuple(board)


class ToyRuleset(Ruleset[ToyState, Move]):
    """Toy Skirmish: five pawns and a chief a side on five by five; take the chief."""

    id: ClassVar[str] = "toy"
    title: ClassVar[str] = "Toy Skirmish"
    sides: ClassVar[tuple[SideInfo, ...]] = SIDES
    option_specs: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "turn_limit",
            OptionKind.INT,
            "200",
            "moves after which the game is drawn",
            minimum=2,
            maximum=400,
        ),
    )

    def new_game(
        self, options: Options, setup: str | None = None, *, checked: bool = True
    ) -> ToyState:
        """The start, or the state a set-up text `<board> <S|N> <turn>` describes."""
        parts = (setup or START).split()
        if len(parts) != 3 or parts[1] not in ("S", "N") or not parts[2].isdigit():
            raise RuleError(Reason.INVALID_SETUP, "setup: write <board> <S|N> <moves made>")
        state = ToyState(board_of(parts[0]), "SN".index(parts[1]), int(parts[2]), options)
        problems = self.check_state(state) if checked else []
        if problems:
            raise RuleError(Reason.INVALID_SETUP, "setup: " + "; ".join(problems))
        return state

    def options_of(self, state: ToyState) -> Options:
        """The options the state carries."""
        return state.options

    def setup_text(self, state: ToyState) -> str:
        """The state as its set-up text."""
        return f"{board_text(state.board)} {'SN'[state.side]} {state.turn}"

    def to_act(self, state: ToyState) -> tuple[str, ...]:
        """The side to move, while the game goes on."""
        return () if self.outcome(state) else (SIDES[state.side].id,)

    def _moves(self, state: ToyState) -> list[Move]:
        return [
            Move(cell, target)
            for cell, letter in enumerate(state.board)
            if letter and owner(letter) == state.side
            for target in targets(state.board, cell)
        ]

    def legal_actions(self, state: ToyState) -> list[Move]:
        """Every move of the side to move."""
        return [] if self.outcome(state) else self._moves(state)

    def apply(self, state: ToyState, action: Move) -> tuple[ToyState, list[Event]]:
        """The state after a checked move, and what happened."""
        require_ongoing(self.outcome(state))
        letter = state.board[action.origin]
        side = SIDES[state.side].id
        if not letter or owner(letter) != state.side:
            raise RuleError(Reason.NO_PIECE, f"{side} has no man on {NAMES[action.origin]}")
        if action.destination not in targets(state.board, action.origin):
            raise RuleError(
                Reason.ILLEGAL_ACTION,
                f"a {KINDS[letter.lower()]} cannot step from {NAMES[action.origin]} to "
                f"{NAMES[action.destination]}",
            )
        taken = state.board[action.destination]
        text = self.format_action(state, action)
        kind = EventKind.CAPTURED if taken else EventKind.MOVED
        event = Event(kind, f"{side} plays {text}", side=side, piece=KINDS[letter.lower()])
        return self.play(state, action), [event]

    def play(self, state: ToyState, action: Move) -> ToyState:
        """The state after a legal move."""
        board = list(state.board)
        board[action.destination], board[action.origin] = board[action.origin], ""
        return replace(state, board=tuple(board), side=1 - state.side, turn=state.turn + 1)

    def actor(self, state: ToyState, action: Move) -> str:
        """The owner of the man that moves (the side to move for an empty cell)."""
        letter = state.board[action.origin]
        return SIDES[owner(letter) if letter else state.side].id

    def outcome(self, state: ToyState) -> Outcome | None:
        """A side without its chief, or without a move, has lost; the turn limit draws."""
        side, other = SIDES[state.side].id, SIDES[1 - state.side].id
        chief = "C" if state.side == 0 else "c"
        if chief not in state.board:
            return Outcome(other, OutcomeReason.NO_LEGAL_MOVE, f"{side} has lost its chief")
        if state.turn >= state.options["turn_limit"]:
            return Outcome(None, OutcomeReason.TURN_LIMIT, "drawn at the turn limit")
        if not self._moves(state):
            return Outcome(other, OutcomeReason.NO_LEGAL_MOVE, f"{side} has no move")
        return None

    def format_action(self, state: ToyState, action: Move) -> str:
        """`b1-b2`, or `b1xc2` for a capture."""
        mark = "x" if state.board[action.destination] else "-"
        return f"{NAMES[action.origin]}{mark}{NAMES[action.destination]}"

    def parse_action(self, state: ToyState, text: str, side: str | None = None) -> Move:
        """The move `b1-b2` (or `b1xc2`) names."""
        match = MOVE.fullmatch(text.strip().lower())
        if match is None:
            raise RuleError(
                Reason.NOTATION_INVALID, f"{text!r} is no move", accepted="b1-b2, b1xc2"
            )
        return Move(INDEX[match.group(1)], INDEX[match.group(2)])

    def check_state(self, state: ToyState) -> list[str]:
        """More men than a side has, a missing chief of the side that just moved, a turn
        beyond the limit."""
        problems = []
        for letter, most in (("P", 5), ("C", 1), ("p", 5), ("c", 1)):
            if state.board.count(letter) > most:
                problems.append(f"more than {most} of {letter!r}")
        if ("c" if state.side == 0 else "C") not in state.board:
            problems.append("the side that just moved has no chief")
        if state.turn > state.options["turn_limit"]:
            problems.append(f"turn {state.turn} is beyond the turn limit")
        return problems

    def pieces(self, state: ToyState) -> list[PieceView]:
        """Every man on the board."""
        return [
            PieceView(KINDS[letter.lower()], SIDES[owner(letter)].id, NAMES[cell])
            for cell, letter in enumerate(state.board)
            if letter
        ]

    def describe(self, options: Options) -> BoardDescription:
        """Twenty-five squares, two kinds of men."""
        cells = tuple(
            CellInfo(name, cell % SIZE + 0.5, cell // SIZE + 0.5, CellShape.SQUARE)
            for cell, name in enumerate(NAMES)
        )
        kinds = (
            PieceKind("pawn", "Pawn", "P", "\u265f", "steps forward or sideways, takes diagonally"),
            PieceKind("chief", "Chief", "C", "\u265a", "one step any way; lose it, lose the game"),
        )
        return BoardDescription(
            game=self.id,
            title=self.title,
            width=SIZE,
            height=SIZE,
            cells=cells,
            features=(),
            piece_kinds=kinds,
            sides=SIDES,
            summary="Take the enemy chief.",
            notation="b1-b2, b1xc2",
        )
'''

TOY_PROTO = r"""syntax = "proto3";

package wargame.v1;

// Toy Skirmish's part of a GameState: what the pieces do not show.
message ToyState {
  // The side to move: "south" or "north".
  string side_to_move = 1;
  // Moves made since the start (the game is drawn at the turn_limit option).
  uint32 turn = 2;
}

// A Toy Skirmish action.
message ToyAction {
  // What the side does.
  oneof kind {
    // Move one man.
    ToyMove move = 1;
  }
}

// One man's step (notation "b1-b2", or "b1xc2" for a capture).
message ToyMove {
  // The cell the man stands on, "a1".."e5".
  string origin = 1;
  // The cell it steps to.
  string destination = 2;
}
"""

TOY_CONVERTER = r'''"""Toy Skirmish's state detail and actions, to and from `wargame.v1`."""

from __future__ import annotations

from engine_service.convert.base import GameConverter, invalid_state
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options
from engine_service.rules.toy.ruleset import INDEX, LETTERS, NAMES, SIDES, Move, ToyState
from wargame.v1 import game_pb2

SIDE_IDS = tuple(info.id for info in SIDES)


class ToyConverter(GameConverter[ToyState, Move]):
    """`ToyState` <-> `GameState.pieces` + `ToyState` message; moves <-> `ToyAction`."""

    game = "toy"

    def detail_to_proto(self, state: ToyState, out: game_pb2.GameState) -> None:
        """Fill `out.toy`: the side to move and the moves made."""
        out.toy.side_to_move = SIDE_IDS[state.side]
        out.toy.turn = state.turn

    def state_from_proto(self, msg: game_pb2.GameState, options: Options) -> ToyState:
        """The state of `msg.pieces` and `msg.toy`; `invalid_state` naming the field."""
        if msg.toy.side_to_move not in SIDE_IDS:
            raise invalid_state("side_to_move is neither south nor north", "state.toy")
        board = [""] * len(NAMES)
        for number, piece in enumerate(msg.pieces):
            field = f"state.pieces[{number}]"
            if piece.cell not in INDEX or piece.kind not in LETTERS or piece.side not in SIDE_IDS:
                raise invalid_state("an unknown cell, kind or side", field)
            if board[INDEX[piece.cell]]:
                raise invalid_state(f"two pieces on {piece.cell}", field)
            letter = LETTERS[piece.kind]
            board[INDEX[piece.cell]] = letter.upper() if piece.side == "south" else letter
        side = SIDE_IDS.index(msg.toy.side_to_move)
        return ToyState(tuple(board), side, msg.toy.turn, options)

    def action_to_proto(self, action: Move, out: game_pb2.Action) -> None:
        """Fill `out.toy.move`."""
        out.toy.move.origin = NAMES[action.origin]
        out.toy.move.destination = NAMES[action.destination]

    def action_from_proto(self, msg: game_pb2.Action, state: ToyState) -> Move:
        """The move of `msg.toy.move`; UNKNOWN_CELL naming the field."""
        cells = []
        for name in ("origin", "destination"):
            value = getattr(msg.toy.move, name)
            if value not in INDEX:
                raise RuleError(
                    Reason.UNKNOWN_CELL, f"{value!r} is no cell", field=f"action.toy.move.{name}"
                )
            cells.append(INDEX[value])
        return Move(cells[0], cells[1])
'''

TOY_GOLDEN = r'''"""Toy Skirmish's golden scripts (see `tests/engine_service/rules/golden.py`)."""

from __future__ import annotations

from engine_service.rules import rulesets
from tests.engine_service.rules.golden import Script

RULESET = rulesets()["toy"]

SCRIPTS: dict[str, Script] = {
    "chief_taken": Script(
        options={},
        notes=("A pawn refused a backward step; a chief taken ends the game.",),
        setup="2c1p/5/1P3/5/2C2 S 0",
        lines=("! south b3-b2", "south b3-b4", "north e5-e4", "south b4xc5"),
    ),
}
'''


# --- the steps --------------------------------------------------------------------------------


def step_1_the_rules_package(tree: Path) -> None:
    """Step 1. The rules package"""
    write(tree / "engine_service/rules/toy/__init__.py", TOY_PACKAGE)
    write(tree / "engine_service/rules/toy/ruleset.py", TOY_RULESET)


def step_2_register_it(tree: Path) -> None:
    """Step 2. Register it"""
    path = tree / "engine_service/rules/__init__.py"
    text = edit(path.read_text("utf-8"), r"(from engine_service\.rules import [\w, ]+)", r"\1, toy")
    text = edit(text, r"(?s)(def games\(\).*?return \([^)]*)\)", r"\1, toy.GAME)")
    path.write_text(add_to_map(text, "- `toy/`  Toy Skirmish (its own map)"), "utf-8")


def step_3_the_contract(tree: Path) -> None:
    """Step 3. The contract"""
    write(tree / "proto/wargame/v1/toy.proto", TOY_PROTO)
    path = tree / "proto/wargame/v1/game.proto"
    text = path.read_text("utf-8")
    # "the first number above the last game's that neither message uses"
    used = {int(n) for name in ("GameState", "Action") for n in field_numbers(text, name)}
    detail = re.search(r"  oneof detail \{\n((?:    .*\n)*?)  \}", text)
    assert detail is not None
    number = max(map(int, re.findall(r"= (\d+);", detail.group(1)))) + 1
    while number in used:
        number += 1
    text = edit(
        text, r'((?:import "wargame/v1/\w+\.proto";\n)+)', r'\1import "wargame/v1/toy.proto";\n'
    )
    for oneof, member in (("detail", "ToyState"), ("kind", "ToyAction")):
        text = edit(
            text,
            rf"(  oneof {oneof} \{{\n(?:    .*\n)*?)(  \}})",
            rf"\1    // Toy Skirmish.\n    {member} toy = {number};\n\2",
        )
    path.write_text(text, "utf-8")
    run(tree, "make", "-o", "setup", "proto")  # `make proto`, the virtual environment as it is
    run(tree, ".venv/bin/buf", "lint")
    # `make breaking` compares with the released contract from git; the copy has no git, so
    # it is compared with this tree's contract (compatible with the released one).
    run(tree, ".venv/bin/buf", "breaking", "proto", "--against", str(ROOT / "proto"))
    assert (tree / "wargame/v1/toy_pb2.py").exists()


def step_4_the_converter(tree: Path) -> None:
    """Step 4. The converter"""
    write(tree / "engine_service/convert/toy.py", TOY_CONVERTER)
    path = tree / "engine_service/convert/__init__.py"
    line = "- `toy.py`         Toy Skirmish's state detail and actions"
    path.write_text(add_to_map(path.read_text("utf-8"), line), "utf-8")


def step_5_the_ai(tree: Path) -> None:
    """Step 5. The AI"""
    # Nothing to write: the package's GAME says `ai=""`, the generic search
    # (step 8's `test_every_layer_finds_the_game_in_the_registry` asks it to evaluate).
    assert 'ai=""' in (tree / "engine_service/rules/toy/__init__.py").read_text("utf-8")


def step_6_golden_transcripts(tree: Path) -> None:
    """Step 6. Golden transcripts"""
    write(tree / "tests/engine_service/rules/toy/__init__.py", '"""Toy Skirmish\'s tests."""\n')
    write(tree / "tests/engine_service/rules/toy/golden.py", TOY_GOLDEN)
    python(tree, "-m", "tests.engine_service.rules.golden", "--regenerate", "toy")
    transcript = tree / "tests/engine_service/rules/toy/golden/chief_taken.txt"
    assert "== outcome: north has lost its chief" in transcript.read_text("utf-8")


def step_7_perft_counts(tree: Path) -> None:
    """Step 7. Perft counts"""
    said = python(tree, "-m", "engine_service.main", "perft", "toy", "--depth", "3")
    counts = [int(n) for n in re.findall(r"^depth \d+: (\d+) nodes", said, re.MULTILINE)]
    assert len(counts) == 3, said
    start = {"name": "start", "setup": "ppcpp/5/5/5/PPCPP S 0", "options": {}}
    positions = [{**start, "counts": counts, "fast_depth": 3}]
    perft = {"about": "Toy Skirmish from the start", "positions": positions}
    write(tree / "tests/engine_service/rules/toy/perft.json", json.dumps(perft, indent=2))


def step_8_the_conformance_suite(tree: Path) -> None:
    """Step 8. The conformance suite"""
    said = pytest_in(tree, "tests/engine_service/rules/test_conformance.py", "-k", "toy")
    assert int(re.search(r"(\d+) passed", said).group(1)) >= 10, said  # type: ignore[union-attr]


def step_9_conformance_vectors(tree: Path) -> None:
    """Step 9. Conformance vectors"""
    # `make conformance` writes every game's vectors (minutes); the new game's alone here.
    python(
        tree,
        "-c",
        "from tools.conformance.generate import OUT, generate, quiet, write\n"
        "quiet(); write(OUT, generate(only=['toy']))",
    )
    assert len(list((tree / "tests/conformance/toy").glob("*.json"))) > 50
    vectors = "tests/conformance/test_vectors.py::test_the_vectors_are_current"
    pytest_in(tree, f"{vectors}[toy-sample]", f"{vectors}[toy-depth]")


def step_10_the_cli_and_the_matchmaker(tree: Path) -> None:
    """Step 10. The CLI and the matchmaker"""
    # Nothing to write: the CLI's renderer draws the board the engine describes.
    drawn = python(tree, "-c", DRAW_THE_BOARD)
    assert "1  P  P  C  P  P 1" in drawn and "5  p  p  c  p  p 5" in drawn, drawn


def step_11_write_it_down(tree: Path) -> None:
    """Step 11. Write it down"""
    with (tree / "docs/positions.md").open("a", encoding="utf-8") as docs:
        docs.write("\n## Toy Skirmish\n\n`<ranks 5 to 1> <S|N> <moves made>`\n")
    # The game's sources (not the bytecode a run beside them keeps in __pycache__).
    sources = (tree / "engine_service").rglob("toy*")
    new = [
        *(path for path in sources if "__pycache__" not in path.parts),
        tree / "tests/engine_service/rules/toy",
    ]
    run(tree, ".venv/bin/ruff", "check", *map(str, new))
    run(tree, ".venv/bin/ruff", "format", "--check", *map(str, new))
    pytest_in(tree, "tests/test_package_maps.py")


STEPS: tuple[Callable[[Path], None], ...] = (
    step_1_the_rules_package,
    step_2_register_it,
    step_3_the_contract,
    step_4_the_converter,
    step_5_the_ai,
    step_6_golden_transcripts,
    step_7_perft_counts,
    step_8_the_conformance_suite,
    step_9_conformance_vectors,
    step_10_the_cli_and_the_matchmaker,
    step_11_write_it_down,
)

DRAW_THE_BOARD = """\
from cli_client.render import Scene, Theme, draw_board
from engine_service.convert import conversions
from engine_service.convert.describe import describe
from engine_service.rules import rulesets
from engine_service.rules.game import Game
ruleset = rulesets()["toy"]
options = ruleset.resolve_options({})
state = conversions(rulesets()).game_to_proto(Game(ruleset, ruleset.new_game(options)))
for line in draw_board(Scene(describe(ruleset, options), state.pieces), Theme()):
    print(line.plain)
"""


# --- doing things in the copy -----------------------------------------------------------------


def write(path: Path, text: str) -> None:
    """A new file of the copy."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def edit(text: str, pattern: str, replacement: str) -> str:
    """`text` with the one match of `pattern` replaced; fails naming the pattern if the
    code no longer has the shape the guide describes."""
    changed, count = re.subn(pattern, replacement, text, count=1)
    assert count == 1, f"the guide's step no longer fits the code: no match for {pattern!r}"
    return changed


def add_to_map(module: str, line: str) -> str:
    """A module's text with `line` added at the end of its docstring (its map)."""
    end = module.index('"""', 3)
    return module[:end].rstrip("\n") + "\n" + line + "\n" + module[end:]


def field_numbers(proto: str, message: str) -> list[str]:
    """The field numbers a message of a .proto text uses or reserves."""
    body = re.search(rf"^message {message} \{{\n(.*?)^\}}", proto, re.MULTILINE | re.DOTALL)
    assert body is not None, message
    reserved = " ".join(re.findall(r"reserved ([^;]*);", body.group(1)))
    return re.findall(r"= (\d+);", body.group(1)) + re.findall(r"\d+", reserved)


def run(tree: Path, *command: str) -> str:
    """Run a command in the copy; its output, or a failure showing it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTHONPATH"] = str(tree)  # the copy's code, not the installed tree's
    done = subprocess.run(
        command, cwd=tree, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{said[-4000:]}"
    return said


def python(tree: Path, *args: str) -> str:
    """Run the project's Python in the copy."""
    return run(tree, sys.executable, *args)


def pytest_in(tree: Path, *args: str) -> str:
    """Run tests of the copy, in one process."""
    return python(tree, "-m", "pytest", *args, "-q", "-n", "0", "-p", "no:cacheprovider")


# --- the tests --------------------------------------------------------------------------------


def test_the_test_takes_the_guides_steps() -> None:
    headings = STEP.findall(GUIDE.read_text("utf-8"))
    taken = [(step.__doc__ or "").strip() for step in STEPS]
    assert headings == taken, "docs/adding-a-game.md and tests/test_adding_a_game.py differ"


# Minutes of CPU (a copy of the tree, `make proto`, the conformance suite and vectors of the
# toy): under `make test-slow` (CI's deeper run, a release), while the cheap test above keeps
# the guide and these steps in step in every `make test`.
@pytest.mark.system
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a_game_added_by_following_the_guide_passes_the_conformance_suite(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "wargame"
    shutil.copytree(ROOT, tree, ignore=LEFT_OUT, symlinks=True)
    (tree / ".venv").symlink_to(Path(sys.prefix))  # the pinned tools, used as they are
    page_tools = ROOT / "web" / "page" / "node_modules"  # protoc-gen-es, for `make proto`
    if page_tools.is_dir():
        (tree / "web" / "page" / "node_modules").symlink_to(page_tools)
    for step in STEPS:
        step(tree)

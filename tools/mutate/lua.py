"""Mutation testing of the matchmaker's Lua scripts, run through a real redis-server.

    python -m tools.mutate.lua [--script NAME]... [--workers N] [--run-dir run]
                               [--sample N [--seed S]] [--resume | --survivors | --report]

mutmut mutates Python only; the scripts (`matchmaker/scripts/*.lua`) are the atomic core of
the matchmaker, so they get mutants of their own here. Each mutant changes one token of
one script outside its comments and strings: a comparison (`<` and `<=`, `>` and `>=`,
`==` and `~=`), an arithmetic operator (binary `+` and `-`, `*` and `/`), `and` and `or`,
a dropped `not`, `true` and `false`, `math.min` and `math.max`, `math.floor` and
`math.ceil`, an integer n made n + 1. A mutant is judged by the tests of its script only
(`scopes.LUA_TESTS`), in a pytest of its own that loads the mutated text in place of the
script (`lua_switch.py`) and talks to its own redis-server: a failing test kills it, a run
past its time limit counts as a timeout (killed, as in mutmut's report). Before the
mutants, each script's tests run once unmutated and must pass.

Results are kept in `run/mutate/lua/results.json` (`--resume` tests only mutants without a
result, `--survivors` tests again those not killed), each under its mutant's name (script,
line, column) and carried to the new name when an edit above moves it (`carried`); the
report (`report.txt`, and `survivors.txt` with each survivor's line) counts the mutants of
`equivalent.txt` apart and gives every kill rate with its 95 % Wilson interval.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tools.mutate.report import equivalent_mutants
from tools.mutate.scopes import LUA_TESTS

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "matchmaker" / "scripts"
LUA_SCOPE = "matchmaker/scripts"  # `make mutate SCOPE=matchmaker/scripts` runs these mutants
PYTEST_ARGS = (
    *("-x", "-q", "-n", "0", "-m", "not slow"),
    *("-p", "no:cacheprovider", "-p", "no:randomly", "-p", "tools.mutate.lua_switch"),
)

# One token of Lua outside comments and strings (comments and strings are matched first and
# left alone): long brackets, comments, quoted strings, names, numbers, operators.
TOKEN = re.compile(
    r"""(?P<skip>--\[(?P<eq1>=*)\[.*?\](?P=eq1)\]|--[^\n]*|\[(?P<eq2>=*)\[.*?\](?P=eq2)\]
        |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
      |(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)
      |(?P<number>0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
      |(?P<op>==|~=|<=|>=|\.\.\.|\.\.|[-+*/%^#<>=(){}\[\];:,.])
      |(?P<space>\s+)""",
    re.VERBOSE | re.DOTALL,
)
SWAPS = {
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "~=",
    "~=": "==",
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "and": "or",
    "or": "and",
    "true": "false",
    "false": "true",
    "not": "",
    "math.min": "math.max",
    "math.max": "math.min",
    "math.floor": "math.ceil",
    "math.ceil": "math.floor",
}
# After these a `-` or `+` is binary (else `-` is unary: `-x` has no `+x` in Lua).
OPERAND_END = re.compile(r"[A-Za-z0-9_)\]]$")


@dataclass(frozen=True)
class Mutant:
    """One token of one script replaced."""

    script: str  # the script's name ("limit")
    line: int
    column: int
    start: int  # offset of the token in the source
    original: str
    replacement: str

    @property
    def name(self) -> str:
        """The mutant's name in results and `equivalent.txt`."""
        return f"matchmaker.scripts.{self.script}.lua:{self.line}:{self.column}"

    def apply(self, source: str) -> str:
        """The script's text with this mutant's change."""
        end = self.start + len(self.original)
        return source[: self.start] + self.replacement + source[end:]

    def describe(self, source: str) -> str:
        """The original line and the mutated one."""
        lines = source.splitlines()
        before = lines[self.line - 1]
        after = self.apply(source).splitlines()[self.line - 1]
        return f"-{before}\n+{after}"


def mutants_of(script: str, source: str) -> Iterator[Mutant]:
    """Every mutant of one script's text, in order."""
    previous = ""
    for match in TOKEN.finditer(source):
        kind, text = match.lastgroup, match.group()
        if kind in ("skip", "space") or kind is None:
            continue
        if match.group("skip") is not None:
            continue
        replacement = None
        if kind == "number" and text.isdigit():
            replacement = str(int(text) + 1)
        elif text in SWAPS:
            binary = OPERAND_END.search(previous) is not None
            if text not in ("-", "+") or binary:
                replacement = SWAPS[text]
        if replacement is not None:
            line = source.count("\n", 0, match.start()) + 1
            column = match.start() - (source.rfind("\n", 0, match.start()) + 1) + 1
            yield Mutant(script, line, column, match.start(), text, replacement)
        previous = text


def carried(
    results: dict[str, dict[str, str]], every: dict[str, list[Mutant]], sources: dict[str, str]
) -> dict[str, dict[str, str]]:
    """The results kept, with those of mutants a script's edit moved under their new names.

    A mutant is named by its line and column, so lines added or taken out above it rename
    it: a result whose name no script of `every` has now goes to the one mutant of its script
    that makes the very same change of the very same line (its `change`), when there is
    exactly one such mutant and it has no result of its own; else it is dropped. The results
    of scripts not in `every` are kept as they are."""
    current = {m.name for ms in every.values() for m in ms}
    by_change: dict[tuple[str, str], list[Mutant]] = {}
    for script, mutants in every.items():
        for mutant in mutants:
            key = (script, mutant.describe(sources[script]))
            by_change.setdefault(key, []).append(mutant)
    kept: dict[str, dict[str, str]] = {}
    moved: dict[str, dict[str, str]] = {}
    for name, result in results.items():
        script = name.partition(":")[0].removeprefix("matchmaker.scripts.").removesuffix(".lua")
        if name in current or script not in every:
            kept[name] = result
            continue
        same = by_change.get((script, result.get("change", "")), [])
        if len(same) == 1 and same[0].name not in results:
            moved[same[0].name] = result
    return kept | moved


def is_lua(scope: str) -> bool:
    """Whether a `make mutate` scope is the scripts' folder or one script."""
    return scope == LUA_SCOPE or (scope.startswith(LUA_SCOPE + "/") and scope.endswith(".lua"))


def scripts(chosen: Sequence[str]) -> list[str]:
    """The scripts to mutate: those named, or every one of `LUA_TESTS`."""
    names = list(chosen) or sorted(LUA_TESTS)
    unknown = [n for n in names if n not in LUA_TESTS or not (SCRIPTS / f"{n}.lua").is_file()]
    if unknown:
        raise SystemExit(f"no script (or no tests for it in scopes.LUA_TESTS): {unknown}")
    return names


def run_tests(script: str, mutated: Path | None, limit: float, folder: Path) -> tuple[str, float]:
    """Run a script's tests with `mutated` in its place (None: unmutated): the outcome
    ("killed", "survived", "timeout") and the seconds taken."""
    env = {**os.environ, "TMPDIR": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("WARGAME_LUA_MUTANT", None)
    if mutated is not None:
        env["WARGAME_LUA_MUTANT"] = f"{script}={mutated}"
    command = [sys.executable, "-m", "pytest", *PYTEST_ARGS, *LUA_TESTS[script]]
    start = time.monotonic()
    with subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as process:
        try:
            code = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
            return "timeout", time.monotonic() - start
    return ("survived" if code == 0 else "killed"), time.monotonic() - start


def wilson(killed: int, judged: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson interval of a kill rate of `killed` of `judged`."""
    if not judged:
        return 0.0, 1.0
    rate = killed / judged
    shrink = 1 + z * z / judged
    centre = (rate + z * z / (2 * judged)) / shrink
    half = z * math.sqrt(rate * (1 - rate) / judged + z * z / (4 * judged * judged)) / shrink
    return max(0.0, centre - half), min(1.0, centre + half)


def report(results: dict[str, dict[str, str]], every: dict[str, list[Mutant]]) -> str:
    """The table per script and in all: killed, timeout, survived, equivalent, unchecked."""
    equivalent = equivalent_mutants()
    columns = ("killed", "timeout", "survived", "equivalent", "unchecked")
    head = f"{'script':<38} " + " ".join(f"{c:>10}" for c in columns)
    head += f" {'kill rate':>10} {'95 % interval':>14}"
    lines = [head, "-" * len(head)]
    total: Counter[str] = Counter()
    for script, mutants in every.items():
        counts: Counter[str] = Counter()
        for mutant in mutants:
            outcome = results.get(mutant.name, {}).get("outcome", "unchecked")
            counts["equivalent" if mutant.name in equivalent else outcome] += 1
        total.update(counts)
        lines.append(_row(f"matchmaker/scripts/{script}.lua", counts, columns))
    lines += ["-" * len(head), _row("[matchmaker/scripts]", total, columns)]
    return "\n".join(lines) + "\n"


def _row(label: str, counts: Counter[str], columns: Sequence[str]) -> str:
    killed = counts["killed"] + counts["timeout"]
    judged = killed + counts["survived"]
    cells = " ".join(f"{counts[c]:>10}" for c in columns)
    if not judged:
        return f"{label:<38} {cells} {'-':>10}"
    low, high = wilson(killed, judged)
    rate = f"{100 * killed / judged:.1f} %"
    return f"{label:<38} {cells} {rate:>10} {f'{100 * low:.0f}-{100 * high:.0f} %':>14}"


def run(
    chosen: Sequence[str],
    run_dir: Path,
    workers: int,
    *,
    sample_size: int = 0,
    seed: int = 0,
    resume: bool = False,
    survivors: bool = False,
    report_only: bool = False,
) -> str:
    """Mutate the scripts `chosen` (every one when empty), run each mutant's tests, write the
    report under `run_dir/mutate/lua/`; returns it."""
    folder = run_dir / "mutate" / "lua"
    folder.mkdir(parents=True, exist_ok=True)
    stored = folder / "results.json"
    results: dict[str, dict[str, str]] = (
        json.loads(stored.read_text(encoding="utf-8"))
        if (resume or survivors or report_only) and stored.exists()
        else {}
    )
    names = scripts(chosen)
    sources = {n: (SCRIPTS / f"{n}.lua").read_text(encoding="utf-8") for n in names}
    every = {n: list(mutants_of(n, sources[n])) for n in names}
    results = carried(results, every, sources)
    equivalent = equivalent_mutants()
    todo = [
        m
        for n in names
        for m in every[n]
        if m.name not in equivalent
        and (
            results.get(m.name, {}).get("outcome") == "survived"
            if survivors
            else m.name not in results
        )
    ]
    if sample_size:
        todo = random.Random(seed).sample(todo, min(sample_size, len(todo)))
    if report_only:
        todo = []
    needed = sorted({m.script for m in todo})
    print(f"== mutate lua: {len(todo)} mutants of {', '.join(needed) or 'no script'}", flush=True)
    limits: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        for script in needed:
            outcome, seconds = run_tests(script, None, 1800, Path(tmp))
            if outcome != "survived":  # its mutants cannot be judged: left unchecked
                print(f"   {script}: its tests fail unmutated ({outcome}), skipped", flush=True)
                continue
            limits[script] = 60 + 5 * seconds
            print(f"   {script}: tests pass unmutated in {seconds:.0f} s", flush=True)
        todo = [m for m in todo if m.script in limits]

        def judge(mutant: Mutant) -> tuple[Mutant, str, float]:
            file = Path(tmp) / f"{mutant.name}.lua"
            file.write_text(mutant.apply(sources[mutant.script]), encoding="utf-8")
            outcome, seconds = run_tests(mutant.script, file, limits[mutant.script], Path(tmp))
            return mutant, outcome, seconds

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for done, (mutant, outcome, seconds) in enumerate(pool.map(judge, todo), 1):
                change = mutant.describe(sources[mutant.script])
                results[mutant.name] = {"outcome": outcome, "change": change}
                stored.write_text(json.dumps(results, indent=1, sort_keys=True), encoding="utf-8")
                said = f"   [{done}/{len(todo)}] {mutant.name} {outcome} ({seconds:.0f} s)"
                print(said, flush=True)
    current = {m.name for ms in every.values() for m in ms}
    text = report({k: v for k, v in results.items() if k in current}, every)
    not_killed = [
        f"# {m.name}\n{results[m.name]['change']}\n"
        for ms in every.values()
        for m in ms
        if results.get(m.name, {}).get("outcome") == "survived" and m.name not in equivalent
    ]
    (folder / "report.txt").write_text(text, encoding="utf-8")
    (folder / "survivors.txt").write_text("\n".join(not_killed), encoding="utf-8")
    return text + f"report: {folder / 'report.txt'}, survivors: {folder / 'survivors.txt'}\n"


def main() -> None:
    """The command line of `run`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", action="append", default=[], help="default: every script")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--run-dir", type=Path, default=ROOT / "run")
    parser.add_argument("--sample", type=int, default=0, help="test only N mutants drawn at random")
    parser.add_argument("--seed", type=int, default=0, help="which sample --sample draws")
    parser.add_argument("--resume", action="store_true", help="keep earlier results")
    parser.add_argument(
        "--survivors", action="store_true", help="keep earlier results, test the survivors again"
    )
    parser.add_argument(
        "--report", action="store_true", help="only the report of the results stored so far"
    )
    args = parser.parse_args()
    text = run(
        args.script,
        args.run_dir.resolve(),
        args.workers,
        sample_size=args.sample,
        seed=args.seed,
        resume=args.resume,
        survivors=args.survivors,
        report_only=args.report,
    )
    print(text, end="")


if __name__ == "__main__":
    main()

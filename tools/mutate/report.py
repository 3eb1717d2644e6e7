"""The mutation report: killed, timed-out and surviving mutants per file, and kill rates.

Reads mutmut's per-file results (`mutants/<file>.meta`) of every scope run under
`run/mutate/work/`, the newest result winning when two scopes covered one file. Mutants
listed in `equivalent.txt` (they cannot change behaviour; each with its reason) are
counted apart, never as killed. Where only a sample of a file's mutants was checked
(`--sample`), the kill rate's 95 % interval stands beside it. Below the table, the
functions mutmut never mutates (decorated ones) are named by file: the kill rates leave
them out. Writes `report.txt` (the table) and `survivors.txt` (each surviving mutant's
diff) to `run/mutate/`, and prints it.

    python -m tools.mutate.report [--run-dir run]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import math
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENT = Path(__file__).with_name("equivalent.txt")
# mutmut's exit codes, grouped as the report counts them (the rest: "suspicious").
KILLED = {1, 3}
TIMEOUT = {36, -24, 24, 152, 255}
SURVIVED = {0}
NO_TESTS = {5, 33}
NOT_CHECKED = {None, 2}
# The only decorators mutmut mutates under (alone): it skips every other decorated function.
PLAIN_DECORATORS = ("staticmethod", "classmethod")
COLUMNS = ("killed", "timeout", "survived", "no tests", "other", "equivalent", "unchecked")


@dataclass
class FileResult:
    """The mutants of one source file and how each fared."""

    path: str
    work: Path  # the scope folder whose run this is
    outcome: dict[str, str] = field(default_factory=dict)  # mutant name -> column

    def counts(self) -> Counter[str]:
        """How many mutants fell in each column."""
        return Counter(self.outcome.values())


def equivalent_mutants(path: Path = EQUIVALENT) -> dict[str, str]:
    """Mutant name -> why it cannot change behaviour, from `equivalent.txt`."""
    found: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            name, _, why = line.partition(" ")
            found[name] = why.strip()
    return found


def column(exit_code: int | None) -> str:
    """The report column of one of mutmut's exit codes."""
    if exit_code in KILLED:
        return "killed"
    if exit_code in TIMEOUT:
        return "timeout"
    if exit_code in SURVIVED:
        return "survived"
    if exit_code in NO_TESTS:
        return "no tests"
    if exit_code in NOT_CHECKED:
        return "unchecked"
    return "other"


def results(run_dir: Path, equivalent: dict[str, str]) -> list[FileResult]:
    """The newest result of every mutated file over all scope runs."""
    newest: dict[str, tuple[float, FileResult]] = {}
    for work in sorted((run_dir / "mutate" / "work").glob("*")):
        mutants = work / "mutants"
        for meta in mutants.rglob("*.py.meta"):
            path = meta.relative_to(mutants).as_posix().removesuffix(".meta")
            when = meta.stat().st_mtime
            if path in newest and newest[path][0] >= when:
                continue
            codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
            result = FileResult(path, work)
            for name, code in codes.items():
                result.outcome[name] = "equivalent" if name in equivalent else column(code)
            newest[path] = (when, result)
    return [result for _, result in sorted(newest.values(), key=lambda item: item[1].path)]


def package(path: str) -> str:
    """The package a file is reported under: each game's rules, shared rules, convert, ..."""
    parts = path.split("/")
    if parts[:2] == ["engine_service", "rules"] and len(parts) > 3:
        return "/".join(parts[:3])
    return "/".join(parts[:-1])


def kill_rate(counts: Counter[str]) -> str:
    """Killed or timed out, of every mutant checked and not equivalent."""
    judged = sum(counts[c] for c in COLUMNS if c not in ("equivalent", "unchecked"))
    if not judged:
        return "-"
    return f"{100 * (counts['killed'] + counts['timeout']) / judged:.1f} %"


def interval(counts: Counter[str]) -> str:
    """The 95 % (Wilson) interval of the kill rate where only a sample was checked, else ""."""
    judged = sum(counts[c] for c in COLUMNS if c not in ("equivalent", "unchecked"))
    if not judged or not counts["unchecked"]:
        return ""
    rate, n, z = (counts["killed"] + counts["timeout"]) / judged, judged, 1.96
    shrink = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / shrink
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / shrink
    return f"{100 * max(0.0, centre - half):.0f}-{100 * min(1.0, centre + half):.0f} %"


def table(found: list[FileResult]) -> str:
    """The per-file table, with a subtotal per package and per top-level scope."""
    width = max([len(r.path) for r in found] + [40])
    head = f"{'file':<{width}} " + " ".join(f"{c:>10}" for c in COLUMNS)
    head += f" {'kill rate':>10} {'sampled':>10}"
    lines = [head, "-" * len(head)]

    def row(name: str, counts: Counter[str]) -> str:
        cells = " ".join(f"{counts[c]:>10}" for c in COLUMNS)
        return f"{name:<{width}} {cells} {kill_rate(counts):>10} {interval(counts):>10}".rstrip()

    totals: dict[str, Counter[str]] = {}
    for result in found:
        counts = result.counts()
        lines.append(row(result.path, counts))
        for name in _groups(result.path):
            totals.setdefault(name, Counter()).update(counts)
    lines += ["-" * len(head)]
    lines += [row(f"[{name}]", counts) for name, counts in sorted(totals.items())]
    return "\n".join(lines) + "\n"


def _groups(path: str) -> Iterator[str]:
    """Every subtotal a file counts in: its package, and the scope above it."""
    own = package(path)
    yield own
    for top in ("engine_service/rules", "engine_service/convert", "matchmaker"):
        if own != top and own.startswith(top + "/"):
            yield top


def not_mutated(source: str) -> list[str]:
    """The functions of a source text mutmut never mutates: it leaves every decorated
    function alone but those under a lone @staticmethod or @classmethod (decorators run
    when a function is defined, and its trampolines cannot carry them). Bodies with
    nothing to mutate (a docstring, `...`) are not named."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.decorator_list:
            first, *rest = node.decorator_list
            plain = not rest and isinstance(first, ast.Name) and first.id in PLAIN_DECORATORS
            if not plain and not _empty(node.body):
                names.append(node.name)
    return names


def _empty(body: list[ast.stmt]) -> bool:
    """Only a docstring, `...` or `pass`."""
    return all(
        isinstance(stmt, ast.Pass)
        or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        for stmt in body
    )


def unmutated(found: list[FileResult], root: Path = ROOT) -> str:
    """The lines naming, file by file, the functions the kill rates above leave out."""
    lines = []
    for result in found:
        source = root / result.path
        names = not_mutated(source.read_text(encoding="utf-8")) if source.is_file() else []
        if names:
            lines.append(f"{result.path}: {', '.join(names)}")
    if not lines:
        return ""
    head = "not mutated (decorated functions, which mutmut skips; the kill rates leave them out):"
    return "\n".join(["", head, *lines]) + "\n"


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def survivors(found: list[FileResult]) -> str:
    """Every surviving (or untested, or suspicious) mutant with its diff, by file."""
    from mutmut.configuration import reset_config
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    out: list[str] = []
    for result in found:
        names = sorted(
            name for name, c in result.outcome.items() if c in ("survived", "no tests", "other")
        )
        if not names:
            continue
        out.append(f"## {result.path}: {len(names)} not killed\n")
        with _inside(result.work):
            reset_config()
            for name in names:
                out.append(f"# {name}: {result.outcome[name]}\n")
                try:
                    diff = get_diff_for_mutant(name, path=result.path).rstrip()
                except FileNotFoundError:
                    # A later run narrowed with --only left this file unmutated in mutants/:
                    # its results stand, its diffs come back when the file is mutated again.
                    diff = "(no diff: the file is not mutated in the latest run of its scope)"
                out.append(diff + "\n\n")
    return "".join(out)


def write(run_dir: Path) -> str:
    """Write report.txt and survivors.txt under `run_dir/mutate`; returns the table."""
    found = results(run_dir, equivalent_mutants())
    if not found:
        raise SystemExit(f"no mutation results under {run_dir / 'mutate' / 'work'}")
    text = table(found) + unmutated(found)
    folder = run_dir / "mutate"
    (folder / "report.txt").write_text(text, encoding="utf-8")
    (folder / "survivors.txt").write_text(survivors(found), encoding="utf-8")
    return text


def main() -> None:
    """Print the report (and write it under the run folder)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, default=Path("run"))
    run_dir = parser.parse_args().run_dir.resolve()
    print(write(run_dir), end="")
    print(f"written: {run_dir / 'mutate' / 'report.txt'}, {run_dir / 'mutate' / 'survivors.txt'}")


if __name__ == "__main__":
    main()

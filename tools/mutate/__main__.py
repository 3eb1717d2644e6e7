"""`make mutate`: run mutmut over one or more scopes, then print the report.

    python -m tools.mutate [--scope DIR]... [--only FILE]... [--tests FILE]... [--workers N]
                           [--run-dir run] [--resume | --survivors] [--sample N [--seed S]]
                           [--function NAME]...

Each scope runs in its own folder `run/mutate/work/<scope>/`, which links the package and
the tests and carries the project's pyproject.toml with `[tool.mutmut]` narrowed to the
scope. A fresh run starts from scratch; `--resume` keeps earlier results and tests only
new or changed mutants; `--survivors` keeps them too and tests again every mutant not
killed yet (after adding tests for them). `--only` narrows a scope to some of its files
or folders (a whole scope takes hours on a busy machine: its most important files first)
and keeps the scope's folder, tests and earlier results. `--tests FILE` (repeatable) judges
by those tests only: while writing tests for a file, its mutants against its own tests in
minutes (in another `--run-dir`: what they miss, the whole scope may kill). `--sample N`
tests N of the scope's mutants drawn at random (the same N for the same `--seed`): the kill
rate of a whole package in minutes, reported with its 95 % interval. `--function NAME`
(repeatable) tests only the mutants of the functions or methods so named (a part of a big
file: the engine's limits in `service.py`), with `--sample` too. Tests start their own
redis-server (tests/servers.py); those of a mutant stopped for its time limit are ended
here afterwards, found by their folder.

The scope `matchmaker/scripts` (or one script, `matchmaker/scripts/limit.lua`) is the
matchmaker's Lua, which mutmut cannot mutate: `lua.py` mutates it and runs each mutant
through a real redis-server (with `--sample`, `--seed`, `--resume`, `--survivors`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

from tools.mutate import lua, report
from tools.mutate.scopes import (
    DEFAULT_SCOPES,
    PACKAGES,
    normalise,
    only_mutate,
    slug,
    tests_for,
    within,
)

ROOT = Path(__file__).resolve().parents[2]
# Copied whole by mutmut into `mutants/`: the tests, this tool (its pytest plugin runs in
# the mutated copy) and the documents whose examples tests check (pyproject's `also_copy`).
COPIED = ("tests", "tools", "docs")
# Linked into each scope's folder: the packages and what mutmut copies from there.
LINKED = (*PACKAGES, *COPIED)


def mutmut_section(scope: str, only: Sequence[str] = (), tests: Sequence[str] = ()) -> str:
    """The `[tool.mutmut]` table for a scope: the project's, narrowed to the scope (and to
    the files `only` names in it, when given), judged by the scope's tests (or `tests`)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    settings = dict(project["tool"]["mutmut"])
    settings["source_paths"] = [Path(scope).parts[0]]
    settings["only_mutate"] = [p for part in only or [scope] for p in only_mutate(part, ROOT)]
    settings["pytest_add_cli_args_test_selection"] = list(tests) or tests_for(scope, ROOT)
    lines = ["[tool.mutmut]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def narrowed_pyproject(scope: str, only: Sequence[str] = (), tests: Sequence[str] = ()) -> str:
    """pyproject.toml with its `[tool.mutmut]` table replaced by the scope's."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index("[tool.mutmut]\n")
    end = text.find("\n[", start + 1)
    rest = text[end + 1 :] if end >= 0 else ""
    return text[:start] + mutmut_section(scope, only, tests) + ("\n" + rest if rest else "")


def prepare(
    scope: str, work: Path, resume: bool, only: Sequence[str] = (), tests: Sequence[str] = ()
) -> None:
    """The scope's working folder: links to the code and tests, its pyproject.toml."""
    if not resume and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        link = work / name
        if not link.is_symlink():
            link.symlink_to(ROOT / name, target_is_directory=True)
    settings = work / "pyproject.toml"
    before = settings.read_text(encoding="utf-8") if settings.exists() else ""
    settings.write_text(narrowed_pyproject(scope, only, tests), encoding="utf-8")
    if before != settings.read_text(encoding="utf-8"):
        # mutmut maps tests to the functions they call only while those are mutated: with
        # other files mutated now, or other tests judging, the map is gathered again (else
        # mutants would read "no tests", or be judged by tests no longer chosen).
        (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    (work / "tmp").mkdir(exist_ok=True)
    forget_plain_copies(work)
    refresh_copies(work)


def forget_plain_copies(work: Path) -> None:
    """Remove the unmutated copies an earlier run left in `mutants/`, so that they are mutated.

    mutmut copies a file it does not mutate (one outside a narrower `--only`) after the
    source, so a later run takes the newer copy for a finished mutation and skips the
    file: its mutants could not be switched on and would all read "no tests". A mutated
    file always differs from its source; its results live in the `.meta` beside it and
    are kept when the file is mutated again.
    """
    mutants = work / "mutants"
    for package in PACKAGES:
        for copy in (mutants / package).rglob("*.py") if (mutants / package).is_dir() else ():
            source = work / copy.relative_to(mutants)
            if source.is_file() and copy.read_bytes() == source.read_bytes():
                copy.unlink()


def refresh_copies(work: Path) -> None:
    """Bring mutmut's copies of what it never mutates up to date with the source.

    mutmut copies the tests, this tool, the documents and the packages' other files (the
    matchmaker's Lua scripts) into `mutants/` once and keeps them: a later run would test
    today's code with yesterday's tests and scripts. The copies of `COPIED` are removed
    (mutmut copies them again); the other files are copied afresh where they differ.
    """
    mutants = work / "mutants"
    for name in COPIED:
        shutil.rmtree(mutants / name, ignore_errors=True)
    for package in PACKAGES:
        if not (mutants / package).is_dir():
            continue
        for source in (work / package).rglob("*"):
            if not source.is_file() or source.suffix in (".py", ".pyc"):
                continue
            copy = mutants / source.relative_to(work)
            if not copy.exists() or copy.read_bytes() != source.read_bytes():
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)


def end_leftover_servers(work: Path) -> None:
    """End the redis-servers that tests of killed mutants left behind.

    redis-server rewrites its command line, so it is known by its working folder: tests
    start it with `--dir` inside their temporary folder, which lies in the scope's folder.
    """
    ours = work / "tmp"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            name = (proc / "comm").read_text().strip()
            cwd = Path(os.readlink(proc / "cwd"))
        except OSError:
            continue
        if name == "redis-server" and cwd.is_relative_to(ours):
            os.kill(int(proc.name), signal.SIGTERM)


# Makes the mutants of the folder it runs in without testing any: the first steps of
# mutmut's `run` (mutmut 3.8), so that a sample can be drawn from their names.
GENERATE = """
import os, sys
import mutmut.__main__ as m
m.set_mutant_under_test("mutant_generation")
os.makedirs("mutants", exist_ok=True)
m.copy_src_dir()
m.copy_also_copy_files()
m.setup_source_paths()
m.store_lines_covered_by_tests()
m.create_mutants(int(sys.argv[1]))
"""


def generate(work: Path, env: dict[str, str], workers: int) -> None:
    """Make the mutants of the scope's folder (`mutants/`, with their names in `.meta`)."""
    subprocess.run(
        [sys.executable, "-c", GENERATE, str(workers)],
        cwd=work,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def draw(work: Path, size: int, seed: int, functions: Sequence[str] = ()) -> list[str]:
    """`size` of the scope's mutants drawn at random (all when fewer; every one when `size`
    is 0), the same for one seed; only those of `functions` when given."""
    mutated = {p.removesuffix(".py") for p in only_mutated(work)}
    names = sorted(
        name
        for meta in (work / "mutants").rglob("*.py.meta")
        if meta.relative_to(work / "mutants").as_posix().removesuffix(".py.meta") in mutated
        for name in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        if not functions or function_of(name) in functions
    )
    return random.Random(seed).sample(names, min(size or len(names), len(names)))


def function_of(mutant: str) -> str:
    """The function or method a mutmut mutant name lies in
    ("engine_service.service.xǁRulesEngineǁ_seconds__mutmut_3" -> "_seconds")."""
    stem = mutant.rsplit("__mutmut_", 1)[0].rsplit(".", 1)[-1]
    return stem.rsplit("ǁ", 1)[-1] if "ǁ" in stem else stem.removeprefix("x_")


def only_mutated(work: Path) -> list[str]:
    """The files the scope's folder mutates (its `only_mutate` patterns, expanded)."""
    settings = tomllib.loads((work / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = settings["tool"]["mutmut"]["only_mutate"]
    return sorted(
        p.relative_to(work).as_posix()
        for pattern in patterns
        for p in work.glob(pattern.replace("/*", "/**/*.py") if pattern.endswith("/*") else pattern)
    )


def not_killed(work: Path, only: Sequence[str] = ()) -> list[str]:
    """The mutants of an earlier run of the scope that no test killed (in `only`'s files)."""
    found = report.results(work.parent.parent.parent, report.equivalent_mutants())
    return sorted(
        name
        for result in found
        if result.work == work and (not only or any(within(result.path, f) for f in only))
        for name, column in result.outcome.items()
        if column in ("survived", "no tests", "other")
    )


def run_scope(
    scope: str,
    run_dir: Path,
    workers: int,
    resume: bool,
    survivors: bool,
    *,
    only: Sequence[str] = (),
    tests: Sequence[str] = (),
    sample_size: int = 0,
    seed: int = 0,
    functions: Sequence[str] = (),
) -> int:
    """Run mutmut over one scope (or `only` some of its files); returns its exit code."""
    work = run_dir / "mutate" / "work" / slug(scope)
    names = not_killed(work, only) if survivors and work.exists() else []
    if survivors and not names:
        print(f"== mutate {scope}: no survivors to test again", flush=True)
        return 0
    prepare(scope, work, resume or survivors, only, tests)
    print(f"== mutate {scope}: tests {' '.join(tests or tests_for(scope, ROOT))}", flush=True)
    # Temporary folders (and so the tests' redis-servers) live inside the scope's folder; the
    # mutants are edits of the source, so the rules run from it, not from a compiled build.
    env = {
        **os.environ,
        "TMPDIR": str(work / "tmp"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "WARGAME_PURE_PYTHON": "1",
    }
    mutmut = Path(sys.executable).with_name("mutmut")
    if sample_size or functions:
        generate(work, env, workers)
        names = draw(work, sample_size, seed, functions)
        print(f"== mutate {scope}: {len(names)} mutants (seed {seed})", flush=True)
        if not names:
            return 0
    try:
        return subprocess.run(
            [str(mutmut), "run", "--max-children", str(workers), *names],
            cwd=work,
            env=env,
            check=False,
        ).returncode
    finally:
        end_leftover_servers(work)


def main() -> None:
    """Mutate the scopes given (or the default ones), then report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scope", action="append", help=f"default: {' '.join(DEFAULT_SCOPES)}")
    parser.add_argument(
        "--only", action="append", default=[], help="only these files of the scope (one scope)"
    )
    parser.add_argument(
        "--tests",
        action="append",
        default=[],
        help="judge by these test files only: a quick check while writing tests "
        "(use another --run-dir; the full scope may kill what these miss)",
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--run-dir", type=Path, default=ROOT / "run")
    parser.add_argument("--resume", action="store_true", help="keep earlier results")
    parser.add_argument(
        "--survivors", action="store_true", help="keep earlier results, test the survivors again"
    )
    parser.add_argument("--sample", type=int, default=0, help="test only N mutants drawn at random")
    parser.add_argument("--seed", type=int, default=0, help="which sample --sample draws")
    parser.add_argument(
        "--function", action="append", default=[], help="only the mutants of these functions"
    )
    args = parser.parse_args()
    if (args.sample or args.function) and args.survivors:
        parser.error("--sample and --function choose mutants; --survivors tests those not killed")
    try:
        scopes = [normalise(s, ROOT) for s in args.scope or DEFAULT_SCOPES]
        only = [normalise(f, ROOT) for f in args.only]
    except ValueError as error:
        parser.error(str(error))
    missing = [t for t in args.tests if not (ROOT / t).exists() or Path(t).parts[0] != "tests"]
    if missing:
        parser.error(f"--tests names no test file or folder: {', '.join(missing)}")
    if only and (len(scopes) != 1 or not all(within(f, scopes[0]) for f in only)):
        parser.error("--only names files of the one scope given")
    run_dir = args.run_dir.resolve()
    scripts = [s for s in scopes if lua.is_lua(s)]
    if scripts:
        chosen = [] if lua.LUA_SCOPE in scripts else [Path(s).stem for s in scripts]
        print(
            lua.run(
                chosen,
                run_dir,
                args.workers,
                sample_size=args.sample,
                seed=args.seed,
                resume=args.resume,
                survivors=args.survivors,
            ),
            end="",
        )
        if len(scripts) == len(scopes):
            return
    failed = [
        s
        for s in scopes
        if not lua.is_lua(s)
        if run_scope(
            s,
            run_dir,
            args.workers,
            args.resume,
            args.survivors,
            only=only,
            tests=args.tests,
            sample_size=args.sample,
            seed=args.seed,
            functions=args.function,
        )
        != 0
    ]
    print(report.write(run_dir), end="")
    print(f"report: {run_dir / 'mutate' / 'report.txt'}, diffs of survivors: survivors.txt")
    if failed:
        raise SystemExit(f"mutmut failed for {', '.join(failed)}")


if __name__ == "__main__":
    main()

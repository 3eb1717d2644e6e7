"""`make setup`'s first step: the virtual environment and the pinned packages, step by step.

    python3 deploy/local/install.py [--venv .venv] [--for play|dev]

Creates the virtual environment if it is missing, then installs the project (editable) with
its pinned packages (pyproject.toml, constraints.txt): for `play` the client and the servers
(`make play`, `make run`: the `server` extra), for `dev` the developers' tools as well
(`make test`, `make lint`: `server` and `dev`); then compiles the bytecode of them all, and
for `dev` the rules' hot path with mypyc where a C compiler is present (setup.py) and the
tests as pytest runs them (`cache_test_bytecode`). Each step prints one line; on a terminal
the long ones show their progress in place. pip's own output stays out of sight unless pip
fails: then it is shown whole, less the notes about package folders that a machine's pip
configuration names but that do not exist (they say nothing about this project).

Standard library only: it runs with the system's Python before the environment exists.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIP = "pip==26.3"
MINIMUM_PYTHON = (3, 11)
# The project's packages (an editable install runs them from here), compiled with the rest.
PACKAGES = ("wargame", "engine_service", "matchmaker", "cli_client")
# Where the environment's modules sit (pure and platform-specific: the same folder in a venv).
SITE_PACKAGES = (
    "import sysconfig\nfor folder in {sysconfig.get_path(n) for n in ('purelib', 'platlib')}:\n"
    "    print(folder)"
)
# pip's notes about a configured index or links folder that does not exist on this machine.
MACHINE_NOISE = re.compile(r"^WARNING: (Location|Url) '[^']*' is ignored")
# The lines where pip takes up one package: from an index or already there, or a local wheel.
PACKAGE_LINE = re.compile(
    r"^(?:Collecting|Requirement already satisfied:) ([A-Za-z0-9._-]+)"
    r"|^Processing \S*/([A-Za-z0-9_.]+)-\d"
)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class Step:
    """One step's line: updated in place on a terminal, printed once when not."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.detail = ""
        self.started = time.monotonic()
        self.live = sys.stdout.isatty()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True)
        if self.live:
            self._ticker.start()
        else:
            print(f"setup: {title} ...", flush=True)

    def update(self, detail: str) -> None:
        """Say what the step is doing now (shown on a terminal)."""
        with self._lock:
            self.detail = detail

    def _tick(self) -> None:
        frame = 0
        while not self._done.wait(0.1):
            frame += 1
            self._draw(SPINNER[frame % len(SPINNER)])

    def _draw(self, mark: str) -> None:
        with self._lock:
            seconds = time.monotonic() - self.started
            text = f"{mark} setup: {self.title}  {seconds:3.0f} s  {self.detail}".rstrip()
            width = shutil.get_terminal_size((100, 20)).columns - 1
            sys.stdout.write("\r\x1b[K" + text[:width])
            sys.stdout.flush()

    def finish(self, summary: str) -> None:
        """End the step with its one-line summary."""
        self._done.set()
        if self.live:
            self._ticker.join()
            sys.stdout.write("\r\x1b[K")
        print(f"setup: {summary} ({time.monotonic() - self.started:.0f} s)", flush=True)

    def fail(self) -> None:
        """Stop drawing (the caller prints what went wrong)."""
        self._done.set()
        if self.live:
            self._ticker.join()
            sys.stdout.write("\r\x1b[K")
            sys.stdout.flush()


def run(step: Step, argv: Sequence[str], on_line: Callable[[str], None] | None = None) -> list[str]:
    """Run a command, feeding each output line to `on_line`; on failure show it all and exit."""
    process = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        cwd=ROOT,
    )
    assert process.stdout is not None
    kept: list[str] = []
    for raw in process.stdout:
        line = raw.rstrip()
        if not line or MACHINE_NOISE.match(line):
            continue
        kept.append(line)
        if on_line is not None:
            on_line(line)
    if process.wait() != 0:
        step.fail()
        sys.stderr.write("\n".join(kept) + "\n")
        sys.stderr.write(
            f"setup: {step.title} failed: `{' '.join(argv)}` exited with status "
            f"{process.returncode}; its output is above\n"
        )
        raise SystemExit(1)
    return kept


def pinned_packages() -> int:
    """How many packages constraints.txt pins for a dev install (the project itself comes on
    top): not those marked "# ladder", which only the optional extra `ladder` installs."""
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return sum(1 for line in lines if line.strip() and "#" not in line)


def create_venv(venv: Path) -> None:
    """The virtual environment, with the pinned pip."""
    python = venv / "bin" / "python"
    if not python.exists():
        version = ".".join(map(str, sys.version_info[:3]))
        step = Step(f"creating the virtual environment in {venv.name} (Python {version})")
        run(step, [sys.executable, "-m", "venv", str(venv)])
        step.update(f"installing {PIP}")
        run(step, [str(python), "-m", "pip", "install", "--disable-pip-version-check", PIP])
        step.finish(f"created the virtual environment in {venv.name} (Python {version}, {PIP})")
        return
    current = subprocess.run(
        [str(python), "-m", "pip", "--version"], capture_output=True, text=True, check=False
    ).stdout
    if not current.startswith(f"pip {PIP.partition('==')[2]} "):
        step = Step(f"installing {PIP}")
        run(step, [str(python), "-m", "pip", "install", "--disable-pip-version-check", PIP])
        step.finish(f"installed {PIP}")


EXTRAS = {"play": "server", "dev": "server,dev"}  # what each kind of setup installs


def install_packages(venv: Path, purpose: str = "dev") -> None:
    """The project (editable) with the pinned packages `purpose` (EXTRAS) needs."""
    total = pinned_packages() + 1
    what = f"{total} pinned packages" if purpose == "dev" else "the pinned packages to play"
    step = Step(f"installing {what}")
    seen: set[str] = set()
    shown: list[str] = []

    def follow(line: str) -> None:
        found = PACKAGE_LINE.match(line)
        if found:
            name = (found.group(1) or found.group(2)).lower().replace("_", "-")
            seen.add(name)
            step.update(f"{len(seen)}/{total} {name}" if purpose == "dev" else name)
        elif line.startswith("Building editable"):
            step.update("building the project's editable install")
        elif line.startswith("Installing collected packages"):
            step.update(f"unpacking {line.partition(':')[2].count(',') + 1} packages")
        elif line.startswith(("WARNING", "DEPRECATION", "ERROR")):
            shown.append(line)  # anything pip warns about that is not this machine's noise

    run(
        step,
        [
            str(venv / "bin" / "python"), "-m", "pip", "install",
            "--disable-pip-version-check", "--progress-bar", "off", "--no-compile",
            "-c", "constraints.txt", "-e", f".[{EXTRAS[purpose]}]",
        ],
        follow,
    )  # fmt: skip
    count = f"{len(seen)} pinned packages" if purpose != "dev" else what
    step.finish(f"installed {count} into {venv.name}")
    for line in shown:
        print(f"setup: pip says: {line}")


def compile_bytecode(venv: Path) -> None:
    """Every module installed, compiled now: a start then reads bytecode, whatever the
    machine's PYTHONDONTWRITEBYTECODE says (with it set, nothing compiled at a start is
    kept, and every start compiled each module it imports again). pip installs with
    `--no-compile`: compileall compiles on every core at once, and skips what is current."""
    python = str(venv / "bin" / "python")
    step = Step("compiling the bytecode of the project and its packages")
    folders = run(step, [python, "-c", SITE_PACKAGES])
    run(step, [python, "-m", "compileall", "-q", "-j", "0", *folders, *PACKAGES])
    step.finish("compiled the bytecode of the project and its packages")


def cache_test_bytecode(venv: Path) -> None:
    """The tests compiled now as pytest runs them (their asserts rewritten), once, where
    each of a run's test workers would rewrite every test module again (seconds of CPU
    each); pytest keeps them beside the tests and rewrites only what changes (`make test`
    lets it, whatever the machine's PYTHONDONTWRITEBYTECODE says). A failure leaves the
    work to the first run, which will show it."""
    step = Step("compiling the tests as pytest runs them")
    env = {name: value for name, value in os.environ.items()
           if name != "PYTHONDONTWRITEBYTECODE"}  # fmt: skip
    done = subprocess.run(
        [str(venv / "bin" / "pytest"), "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode:
        step.finish("left the tests' compiling to their first run (collecting them failed)")
        return
    step.finish("compiled the tests as pytest runs them")


# How long the hot path's build may take (a busy 2-core machine needs minutes); past it the
# rules run as pure Python.
HOT_PATH_BUILD_SECONDS = 1200


def hot_path_sources(extensions: list[Path]) -> set[Path]:
    """What the extensions are built from: setup.py, the source beside each extension and
    every module of the project those import, directly or not (mypy reads them to type the
    compiled code, and mypyc builds their constants in)."""
    todo = [path.with_name(path.name.split(".", 1)[0] + ".py") for path in extensions]
    sources = {ROOT / "setup.py"}
    while todo:
        source = todo.pop()
        if source in sources or not source.is_file():
            continue
        sources.add(source)
        for node in ast.walk(ast.parse(source.read_bytes(), str(source))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
                modules = [node.module, *names]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                base = ROOT.joinpath(*module.split("."))
                todo += [base.with_suffix(".py"), base / "__init__.py"]
    return sources


def hot_path_is_current() -> bool:
    """Whether the hot path's extensions are built and newer than every source they are
    built from (an extension older than its source would shadow the new rules)."""
    extensions = list((ROOT / "engine_service").rglob("*.so"))
    if not extensions:
        return False
    built = min(path.stat().st_mtime for path in extensions)
    return built > max(path.stat().st_mtime for path in hot_path_sources(extensions))


def compile_hot_path(venv: Path) -> None:
    """The compiled hot path (setup.py): mypyc builds the rules' hot path into C extensions
    beside their sources, where a C compiler and mypyc (the developers' tools)
    are present. One line either way; without it, or if it fails, the rules run as pure
    Python from the same sources, and nothing else changes."""
    python = str(venv / "bin" / "python")
    for stale in (ROOT / "engine_service").rglob("*.so"):
        stale.unlink()
    compiler = sysconfig.get_config_var("CC") or "cc"
    if not shutil.which(compiler.split()[0]):
        print(f"setup: the rules run as pure Python (no C compiler `{compiler.split()[0]}`)")
        return
    probe = subprocess.run([python, "-c", "import mypyc.build"], capture_output=True, check=False)
    if probe.returncode != 0:
        print("setup: the rules run as pure Python (mypyc comes with the developers' tools)")
        return
    step = Step("compiling the rules' hot path with mypyc")
    argv = [python, "setup.py", "--quiet", "build_ext", "--inplace"]
    env = {**os.environ, "WARGAME_COMPILE": "1"}
    try:
        built = subprocess.run(
            argv, cwd=ROOT, env=env, capture_output=True, text=True, errors="replace",
            timeout=HOT_PATH_BUILD_SECONDS, check=False,
        )  # fmt: skip
        failure = "" if built.returncode == 0 else built.stderr.strip().rpartition("\n")[2]
    except subprocess.TimeoutExpired:
        failure = f"not done in {HOT_PATH_BUILD_SECONDS} s"
    if failure:
        for partial in (ROOT / "engine_service").rglob("*.so"):
            partial.unlink()
        step.fail()
        print(f"setup: the rules run as pure Python (compiling them failed: {failure[:200]})")
        return
    modules = sum(1 for _ in (ROOT / "engine_service").rglob("*.so")) - 1  # less the shared lib
    step.finish(f"compiled the rules' hot path ({modules} modules) with mypyc")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--venv", default=".venv", type=Path)
    parser.add_argument(
        "--for",
        dest="purpose",
        choices=sorted(EXTRAS),
        default="dev",
        help="play: the client and the servers; dev: the developers' tools too",
    )
    parser.add_argument(
        "--only",
        choices=["hot-path"],
        help="hot-path: only compile the rules again, if their sources changed (make test)",
    )
    args = parser.parse_args(argv)
    if sys.version_info < MINIMUM_PYTHON:
        wanted = ".".join(map(str, MINIMUM_PYTHON))
        print(
            f"setup: wargame needs Python {wanted} or later; {sys.executable} is "
            f"{sys.version.split()[0]} (run `make setup PYTHON=python{wanted}`)",
            file=sys.stderr,
        )
        return 1
    venv = args.venv if args.venv.is_absolute() else ROOT / args.venv
    if args.only != "hot-path":
        create_venv(venv)
        install_packages(venv, args.purpose)
        compile_bytecode(venv)
    if args.purpose == "dev" and not (args.only == "hot-path" and hot_path_is_current()):
        compile_hot_path(venv)
    if args.purpose == "dev" and args.only != "hot-path":
        cache_test_bytecode(venv)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`make test-paired`: the default suite beside others on a busy machine.

    python -m tools.paired [--ref main] [--runs 2] [--hogs 1] [--run-dir run] [--keep]

Clones `--ref` of this repository into `--runs` temporary folders, sets each up (its own
virtual environment and Node packages; nothing is linked into ~/.local/bin), then runs
`make test` in all of them at once while `--hogs` processes spin on the CPU. Each run's
exit status, wall time and pytest's last line are reported, and its whole output is kept
under `<run-dir>/paired/<time>/<n>.log`. The exit status is 0 only when every run passed.

The suite promises to pass on a busy machine (tests assert what the code promises and wait
for conditions, not durations): this is how that promise is checked (docs/developing.md). It takes
the machine for the length of a few suites: run it on a machine of its own, not a shared
one. The clones are removed afterwards unless `--keep`. Each `make test` runs in a process
group of its own: stopped early (Ctrl-C, SIGTERM), the tool kills each group whole, the
servers its tests started with it.

Where things are: `main` (arguments, the order of the steps), `_clone` and `_setup` (one
clone ready to test), `_hog` (a CPU spinner), `_stop` (SIGTERM as Ctrl-C), `_report` (the
table).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    """One `make test` in one clone: its folder, log, process and result."""

    number: int
    folder: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    seconds: float = 0.0
    status: int | None = None

    def last_line(self) -> str:
        """pytest's summary line ("... passed ... in ...s"), or the log's last line."""
        lines = [line for line in self.log.read_text(errors="replace").splitlines() if line]
        summary = [
            line for line in lines if " in " in line and ("passed" in line or "failed" in line)
        ]
        return (summary or lines or ["(no output)"])[-1].strip("= ")


def _clone(ref: str, folder: Path) -> None:
    subprocess.run(["git", "clone", "--quiet", "--branch", ref, str(ROOT), str(folder)], check=True)


def _setup(folder: Path, log: Path) -> None:
    """The clone's virtual environment and Node packages, before the clock starts: `make
    proto-check` needs `setup` and, unlike a `make setup` goal, links nothing into
    ~/.local/bin."""
    with log.open("ab") as out:
        subprocess.run(
            ["make", "proto-check"], cwd=folder, stdout=out, stderr=subprocess.STDOUT, check=True
        )


def _hog() -> None:
    """Spin on a core until killed."""
    while True:
        pass


def _stop(signum: int, frame: object) -> None:
    """SIGTERM ends the tool as Ctrl-C does: through `main`'s clean-up."""
    raise SystemExit(128 + signum)


def _report(runs: list[Run], hogs: int) -> int:
    print(f"\n{len(runs)} paired runs of `make test` beside {hogs} CPU hog(s):")
    for run in runs:
        verdict = "passed" if run.status == 0 else f"FAILED (status {run.status})"
        print(f"  run {run.number}: {verdict} in {run.seconds / 60:.1f} min — {run.last_line()}")
        print(f"         log: {run.log}")
    return 0 if all(run.status == 0 for run in runs) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools.paired", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="main", help="the branch or tag to clone (main)")
    parser.add_argument("--runs", type=int, default=2, help="make test runs at once (2)")
    parser.add_argument("--hogs", type=int, default=1, help="CPU-spinning processes (1)")
    parser.add_argument("--run-dir", type=Path, default=ROOT / "run", help="where logs go")
    parser.add_argument("--keep", action="store_true", help="keep the clones")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)

    logs = args.run_dir / "paired" / time.strftime("%Y%m%d-%H%M%S")
    logs.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="wargame-paired-"))
    runs = [Run(n, work / f"clone-{n}", logs / f"{n}.log") for n in range(1, args.runs + 1)]
    hogs: list[multiprocessing.Process] = []
    try:
        for run in runs:
            print(f"cloning {args.ref} into {run.folder} and setting it up...", flush=True)
            _clone(args.ref, run.folder)
            _setup(run.folder, run.log)
        hogs = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(args.hogs)]
        for hog in hogs:
            hog.start()
        for run in runs:
            out = run.log.open("ab")
            run.started = time.monotonic()
            run.process = subprocess.Popen(
                ["make", "test"],
                cwd=run.folder,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        print(f"running make test in {len(runs)} clones beside {len(hogs)} hog(s)...", flush=True)
        for run in runs:
            assert run.process is not None
            run.status = run.process.wait()
            run.seconds = time.monotonic() - run.started
            print(f"  run {run.number} ended: status {run.status}", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.join()
        for run in runs:
            if run.process is not None and run.process.poll() is None:
                os.killpg(run.process.pid, signal.SIGKILL)
                run.process.wait()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return _report(runs, len(hogs))


if __name__ == "__main__":
    sys.exit(main())

"""Put this checkout's commands on the user's PATH, the way pipx does.

    .venv/bin/python deploy/local/user_commands.py [--bin-dir ~/.local/bin]

Links `wargame`, `wargame-engine`, `wargame-matchmaker` and `wargame-web` from the virtual
environment into the user's bin folder (~/.local/bin, where pip --user and pipx put commands)
and, when new shells would not find that folder, adds it to their PATH in the shell's
start-up files with `userpath`, the library behind `pipx ensurepath`. Prints one line saying
what changed, and nothing when everything was in place. A link into another checkout's
virtual environment is moved to this one (the last `make setup` wins); any other file of the
same name is left alone with a warning.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

COMMANDS = ("wargame", "wargame-engine", "wargame-matchmaker", "wargame-web")


def _home_relative(path: Path) -> str:
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def link_commands(venv_bin: Path, bin_dir: Path) -> tuple[list[str], dict[str, str]]:
    """Link every command; returns the names linked, and why others were not."""
    changed: list[str] = []
    warnings: dict[str, str] = {}
    for name in COMMANDS:
        target, link = venv_bin / name, bin_dir / name
        if link.is_symlink():
            current = os.readlink(link)
            if current == str(target):
                continue
            if not current.endswith(f"/.venv/bin/{name}"):
                warnings[name] = f"{_home_relative(link)} points to {current}: left alone"
                continue
            link.unlink()
        elif link.exists():
            warnings[name] = f"{_home_relative(link)} exists and is not a link: left alone"
            continue
        bin_dir.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        changed.append(name)
    return changed, warnings


def _shells() -> list[str]:
    """The user's login shell and bash (what `make` and most terminals run)."""
    from userpath.shells import SHELLS

    login = Path(os.environ.get("SHELL", "")).name
    return [shell for shell in dict.fromkeys([login, "bash"]) if shell in SHELLS]


def ensure_on_path(bin_dir: Path) -> tuple[list[str], bool]:
    """Make new shells find `bin_dir`: (start-up files changed, whether new shells find it)."""
    import userpath
    from userpath.interface import Interface

    location = str(bin_dir)
    if userpath.in_current_path(location):
        return [], True
    shells = _shells()
    if userpath.in_new_path(location, shells=shells):
        return [], True
    files = [
        Path(file) for shell in Interface(shells=shells).shells for file in shell.config(location)
    ]
    before = {file: file.read_bytes() if file.exists() else None for file in files}
    found = bool(userpath.append(location, "wargame's make setup", shells=shells))
    changed = [
        _home_relative(file)
        for file in files
        if (file.read_bytes() if file.exists() else None) != before[file]
    ]
    return changed, found


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--bin-dir", type=Path, default=Path.home() / ".local" / "bin")
    args = parser.parse_args(argv)
    bin_dir: Path = args.bin_dir.expanduser()
    venv_bin = Path(sys.executable).parent  # .venv/bin (not resolved: python is a symlink)
    where = _home_relative(bin_dir)
    try:
        linked, warnings = link_commands(venv_bin, bin_dir)
        startup_files, found = ensure_on_path(bin_dir)
    except OSError as error:  # a home we may not write: the game works without the link
        print(
            f"setup: warning: could not put wargame into {where} ({error.strerror or error}); "
            f"run {venv_bin / 'wargame'} instead",
            file=sys.stderr,
        )
        return 0
    shell_path = f"$HOME/{bin_dir.relative_to(Path.home())}" if where.startswith("~/") else where
    for name, warning in warnings.items():
        print(f"setup: warning: {warning}; run {venv_bin / name} instead", file=sys.stderr)
    if not found:
        print(
            f"setup: warning: new shells do not find {where}: add it to PATH in your shell's "
            f'start-up file (export PATH="{shell_path}:$PATH")',
            file=sys.stderr,
        )
    news = [f"linked {', '.join(linked)} into {where}"] if linked else []
    if startup_files:
        news.append(
            f"put {where} on PATH in {', '.join(startup_files)}: open a new shell to use "
            f'`wargame` (or here: export PATH="{shell_path}:$PATH")'
        )
    if news:
        print("setup: " + "; ".join(news))
    return 0


if __name__ == "__main__":
    sys.exit(main())

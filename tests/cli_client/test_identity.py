"""The identity file: private, per matchmaker, with secrets kept until the reveal."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cli_client.errors import ClientError
from cli_client.identity import Identity, Store, home_directory


def test_home_directory_prefers_the_flag_then_wargame_home_then_xdg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WARGAME_HOME", str(tmp_path / "wh"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert home_directory(str(tmp_path / "flag")) == tmp_path / "flag"
    assert home_directory() == tmp_path / "wh"
    monkeypatch.delenv("WARGAME_HOME")
    assert home_directory() == tmp_path / "xdg" / "wargame"


def test_identities_are_kept_per_matchmaker_in_a_private_file(tmp_path: Path) -> None:
    store = Store(tmp_path / "home")
    assert store.identity("a:1") is None
    store.set_identity("a:1", Identity("p1", "secret-1", "t1", "alice"))
    store.set_identity("b:2", Identity("p2", "secret-2", "t2", "alice"))
    assert store.identity("a:1") == Identity("p1", "secret-1", "t1", "alice")
    assert store.identity("b:2") is not None and store.identity("b:2").token == "secret-2"  # type: ignore[union-attr]
    mode = stat.S_IMODE(store.path.stat().st_mode)
    assert mode == 0o600
    assert [p.name for p in store.directory.iterdir()] == [
        "identity.json"
    ]  # no temporary files left


def test_last_game_and_secrets(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.set_last_game("a:1", "g42")
    assert store.last_game("a:1") == "g42" and store.last_game("b:2") == ""
    store.set_secret("a:1/g42/red", {"array": "a2=A", "salt": "00" * 32})
    assert store.secret("a:1/g42/red") == {"array": "a2=A", "salt": "00" * 32}
    store.set_secret("a:1/g42/red", None)
    assert store.secret("a:1/g42/red") is None


def test_an_unreadable_file_is_one_error_line(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.path.write_text("{not json")
    with pytest.raises(ClientError) as caught:
        store.load()
    assert str(store.path) in caught.value.message

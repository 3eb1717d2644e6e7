"""The player's identity: a guest registered on first use, its token kept in a private file.

The file is `$WARGAME_HOME/identity.json` when WARGAME_HOME (or `--home`) is set, else
`$XDG_CONFIG_HOME/wargame/identity.json` (`~/.config/wargame/...`). It is written with mode
0600 and holds one identity per matchmaker address (each matchmaker has its own players),
the last game played, and the secrets of Attack-at-Dawn deployments until they are revealed.
"""

from __future__ import annotations

import getpass
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_client.connection import Connection
from cli_client.errors import ClientError

FILE_NAME = "identity.json"
MAX_NAME = 32


def home_directory(explicit: str = "") -> Path:
    """The folder of the identity file."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("WARGAME_HOME"):
        return Path(os.environ["WARGAME_HOME"]).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "wargame"


def default_name() -> str:
    """A display name for a new guest: the login name, or "guest"."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    cleaned = "".join(ch for ch in name if ch.isprintable()).strip()[:MAX_NAME]
    return cleaned or "guest"


@dataclass
class Identity:
    """A registered player at one matchmaker."""

    player_id: str
    token: str
    token_id: str
    display_name: str


class Store:
    """The identity file: read on demand, rewritten atomically with mode 0600."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / FILE_NAME

    def load(self) -> dict[str, Any]:
        """The file's content ({} when it does not exist)."""
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise ClientError(f"cannot read {self.path}: {error}") from None
        return data if isinstance(data, dict) else {}

    def save(self, data: dict[str, Any]) -> None:
        """Write the file atomically, readable by the user only."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".identity-")
            try:
                with os.fdopen(handle, "w") as out:
                    json.dump(data, out, indent=2, sort_keys=True)
                    out.write("\n")
                os.chmod(temporary, 0o600)
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as error:
            raise ClientError(f"cannot write {self.path}: {error}") from None

    def identity(self, matchmaker: str) -> Identity | None:
        """The identity kept for a matchmaker address, if any."""
        entry = self.load().get("identities", {}).get(matchmaker)
        if not isinstance(entry, dict):
            return None
        try:
            return Identity(
                str(entry["player_id"]),
                str(entry["token"]),
                str(entry.get("token_id", "")),
                str(entry.get("display_name", "")),
            )
        except KeyError:
            return None

    def set_identity(self, matchmaker: str, identity: Identity) -> None:
        """Keep an identity for a matchmaker address."""
        data = self.load()
        data.setdefault("identities", {})[matchmaker] = identity.__dict__.copy()
        self.save(data)

    def last_game(self, matchmaker: str) -> str:
        """The id of the last game played at a matchmaker ("" if none)."""
        value = self.load().get("last_game", {}).get(matchmaker, "")
        return str(value)

    def set_last_game(self, matchmaker: str, game_id: str) -> None:
        """Remember the last game played at a matchmaker."""
        data = self.load()
        data.setdefault("last_game", {})[matchmaker] = game_id
        self.save(data)

    def bot_level(self) -> int:
        """The bot's level the player last asked for (0: never asked)."""
        value = self.load().get("bot_level", 0)
        return value if isinstance(value, int) else 0

    def set_bot_level(self, level: int) -> None:
        """Remember the bot's level the player asked for, for the next game."""
        data = self.load()
        data["bot_level"] = level
        self.save(data)

    def secret(self, key: str) -> dict[str, str] | None:
        """A kept secret (an Attack-at-Dawn array and salt) by key."""
        value = self.load().get("secrets", {}).get(key)
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None

    def set_secret(self, key: str, value: dict[str, str] | None) -> None:
        """Keep (or with None, forget) a secret."""
        data = self.load()
        secrets = data.setdefault("secrets", {})
        if value is None:
            secrets.pop(key, None)
        else:
            secrets[key] = value
        self.save(data)


def ensure_identity(
    store: Store,
    connection: Connection,
    name: str = "",
    ask: Callable[[str], str] | None = None,
) -> tuple[Identity, bool]:
    """The player's identity at the connection's matchmaker, registering a guest if needed.

    Returns the identity and whether it was registered just now. A kept token the
    matchmaker no longer knows (its Redis was emptied) is replaced by a new registration.
    Registering without a `name`, `ask` (given the default) asks the player for one.
    """
    address = connection.addresses.matchmaker
    kept = store.identity(address)
    if kept is not None:
        connection.token = kept.token
        try:
            connection.get_player()
            return kept, False
        except ClientError as error:
            if error.reason not in {"TOKEN_INVALID", "TOKEN_MISSING", "PLAYER_NOT_FOUND"}:
                raise
        connection.token = ""
    if not name and ask is not None:
        name = "".join(ch for ch in ask(default_name()) if ch.isprintable()).strip()
    reply = connection.register((name or default_name())[:MAX_NAME])
    identity = Identity(reply.player.id, reply.token, reply.token_id, reply.player.display_name)
    store.set_identity(address, identity)
    connection.token = identity.token
    return identity, True

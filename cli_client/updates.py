"""What the watcher reports, taken into the game on the screen: new versions, notices, the
connection lost and back, the opponent's answer to a draw offer.

`live.Watcher` follows the game in its own thread; `Updates` drains what it collected, on
the loop's thread, between typed lines. A player's disconnection (and the abandonment
warning that follows it) is said only when it is not back within NOTICE_GRACE_SECONDS (a
stream reopened, a matchmaker restarted, a player paired from the queue whose stream opens
after the matchmaker first looked). A
version announced without its view (the matchmaker sends only the actions when a view is
large) is fetched once the drain is over.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from rich.text import Text

from cli_client import chat, notices
from cli_client.connection import Connection
from cli_client.display import Display
from cli_client.errors import ClientError
from cli_client.live import Ended, Failed, Lost, Reconnected, Update, Watcher, transient
from cli_client.session import GameSession
from wargame.v1 import game_pb2, matchmaker_pb2

CATCH_UP_SECONDS = 2.0
NOTICE_GRACE_SECONDS = 5.0  # a disconnection is said only if the player is not back by then


def draw_answer(
    session: GameSession, offer: str, message: matchmaker_pb2.WatchGameResponse
) -> str | None:
    """How the opponent (the bot too) answered the player's draw `offer`, if `message` (already
    taken into the session) is that answer; None otherwise."""
    if not offer or offer != session.your_side:
        return None
    if not message.side or message.side == session.your_side:
        return None
    who = session.seat_name(message.side)
    outcome = session.outcome
    if outcome is not None and outcome.reason == game_pb2.OUTCOME_REASON_AGREEMENT:
        return f"{who} accepts your draw offer."
    if any(event.kind == game_pb2.EVENT_KIND_DRAW_DECLINED for event in message.events):
        return f"{who} declines your draw offer: play on."
    return None


def lost_line(reason: str, *, my_turn: bool) -> str:
    """The warning when the stream to the matchmaker is lost."""
    line = f"lost connection to the matchmaker ({reason}); reconnecting…"
    if my_turn:  # the open stream is the player's presence
        line += " While you are away on your turn, the game may end as abandoned."
    return line


class Loop(Protocol):
    """What the updates may use of the loop (`play.Play`)."""

    connection: Connection
    session: GameSession
    spectator: bool
    watcher: Watcher | None
    display: Display
    chat_muted: bool  # `mute`: chat lines that arrive are not shown

    def note(self, text: str) -> None:
        """Say a line of information."""

    def warn(self, text: str) -> None:
        """Say a warning as one line."""

    def error(self, text: str) -> None:
        """Say an error as one line."""

    def changed(self) -> None:
        """The session moved on: show it."""

    def show_actions(
        self, side: str, notations: Sequence[str], events: Sequence[game_pb2.Event]
    ) -> None:
        """Actions played by `side` and what they did."""


class Updates:
    """The watcher's reports for one game, shown through the loop (`play.Play`)."""

    def __init__(self, play: Loop) -> None:
        self.play = play
        self.rematch_offered = ""  # the game the opponent offers as a rematch
        self._pending_version = 0
        self._notices: set[tuple[object, ...]] = set()
        self._chat_seen: set[tuple[object, ...]] = set()  # chat lines shown (a stream resumed)
        # Disconnections not said yet, with the warnings that followed them, by side: a
        # player back within NOTICE_GRACE_SECONDS (a client restarting its stream, the
        # matchmaker restarting, a stream opening after the pairing) never left for the others.
        self._held: dict[str, tuple[list[notices.Said], float]] = {}

    @property
    def session(self) -> GameSession:
        """The game."""
        return self.play.session

    def drain(self, watcher: Watcher) -> bool:
        """Show what arrived; True when watching cannot go on."""
        play = self.play
        changed = False
        for item in watcher.drain():
            if isinstance(item, Update):
                changed |= self._update(item.message)
            elif isinstance(item, Lost):
                session = self.session  # (a game against the bot alone is never abandoned)
                awaited = session.my_turn and session.keeps_others_waiting
                play.warn(lost_line(item.reason, my_turn=awaited))
            elif isinstance(item, Reconnected):
                play.note("reconnected to the matchmaker; catching up with the game")
            elif isinstance(item, Ended):
                pass
            elif isinstance(item, Failed):
                play.error(item.error.message)
                return True
        now = time.monotonic()
        for side, (held, since) in list(self._held.items()):
            if now - since >= NOTICE_GRACE_SECONDS:
                del self._held[side]
                for said in held:
                    play.warn(said.text)
        if self._pending_version > self.session.version:
            self._refresh()
            changed = True
        if changed:
            play.changed()
        return False

    def _update(self, message: matchmaker_pb2.WatchGameResponse) -> bool:
        if message.HasField("notice"):
            return self._notice(message)
        if message.HasField("chat"):
            self.show_chat(message.chat)
            return False
        session = self.session
        if message.version <= session.version and not message.resync:
            return False
        offer = session.state.draw_offer
        if message.resync:
            self.play.note("(some updates are no longer kept; showing the game as it stands)")
        elif message.taken_back:
            who = session.seat_name(message.side)
            self.play.note(f"{who} takes back: {', '.join(message.taken_back)}")
        elif message.notations or message.events:
            self.play.show_actions(message.side, list(message.notations), list(message.events))
        session.note_events(message.events)
        if message.HasField("game"):
            session.update(message.game)
            answer = None if self.play.spectator else draw_answer(session, offer, message)
            if answer is not None:
                self.play.note(answer)
        else:
            self._pending_version = max(self._pending_version, int(message.version))
        return True

    def show_chat(self, line: matchmaker_pb2.ChatLine) -> None:
        """A chat line, shown safely unless the chat is muted; each shown once."""
        key = (line.side, line.at.seconds, line.at.nanos, line.text)
        if key in self._chat_seen:
            return
        self._chat_seen.add(key)
        if self.play.chat_muted:
            return
        session = self.session
        you = line.side == session.your_side and not self.play.spectator
        speaker = "You" if you else f"{session.name(line.side)} ({line.name})"
        self.play.display.say(Text(chat.line_text(line, speaker)))

    def _notice(self, message: matchmaker_pb2.WatchGameResponse) -> bool:
        """Who left, who is back, who is warned, a rematch offered; each said once, and the
        board not drawn again for it (the side panel of the full-screen view reads the
        session as it is)."""
        notice = message.notice
        key = (message.version, notice.kind, notice.side, message.at.seconds, message.at.nanos)
        if key in self._notices:
            return False
        self._notices.add(key)
        session = self.session
        session.note_notice(notice)
        if message.HasField("game"):
            session.refresh(message.game)
        mine = notice.side == session.your_side
        if notice.kind == matchmaker_pb2.NOTICE_KIND_REMATCH_OFFERED and not mine:
            self.rematch_offered = notice.game_id
        said = notices.words(notice, session)
        if said is None:
            return False
        if notice.kind == matchmaker_pb2.NOTICE_KIND_DISCONNECTED:
            self._held[notice.side] = ([said], time.monotonic())
            return False
        held = self._held.get(notice.side)
        if notice.kind == matchmaker_pb2.NOTICE_KIND_RECONNECTED and held is not None:
            del self._held[notice.side]
            return False  # back at once: none of it is news
        if notice.kind == matchmaker_pb2.NOTICE_KIND_ABANDON_WARNING and held is not None:
            held[0].append(said)  # said after the disconnection, if the player stays away
            return False
        if held is not None:  # another notice of that side: what was held comes first
            del self._held[notice.side]
            for line in held[0]:
                self.play.warn(line.text)
        (self.play.warn if said.warning else self.play.note)(said.text)
        return False

    def _refresh(self) -> None:
        try:
            self.session.update(self.play.connection.get_game(self.session.game_id))
        except ClientError as error:
            if not transient(error):
                raise
        self._pending_version = 0

    def catch_up(self) -> None:
        """Bring the session to the matchmaker's version, showing what happened meanwhile."""
        play = self.play
        target = play.connection.get_game(self.session.game_id)
        deadline = time.monotonic() + CATCH_UP_SECONDS
        while (
            play.watcher is not None
            and self.session.version < target.version
            and time.monotonic() < deadline
        ):
            self.drain(play.watcher)
            time.sleep(0.05)
        self.session.update(target)

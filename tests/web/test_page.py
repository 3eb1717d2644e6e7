"""The page in a real browser (the system's Chromium under Playwright) against the real stack.

A person registers as a guest in the lobby and plays the bot in each game to the end by
clicking a man and then its target (legal targets from ListLegalActions) and the phase
buttons; a player in the terminal client plays a person in the page while a second page
watches; a game is joined from the lobby's list and its clocks tick, a draw is declined, the
game resigned and a rematch opened from the page; a page follows its game across a restart
of the web service; a refused move shows its reason. Each board is photographed
(`screenshots`). The whole games from the standard start, moves typed as the engine
suggests them, are in the slow suite, as the CLI's are.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from cli_client.details import state_tags, terrain_tags
from tests.system.cli_support import (
    BATTLE_CITADEL,
    NAPOLEONIC_GUARDS,
    WAR_CITADEL,
    Cli,
    clients,
    game_id_of,
    run,
)
from tests.web.conftest import Stack
from tests.web.connect_client import ENGINE, MATCHMAKER, ConnectClient
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2, matchmaker_pb2, matchmaker_pb2_grpc

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("web")]
__all__ = ["clients"]  # a fixture used by name
WAIT_MS = 120_000  # a busy machine may take long; every wait is for a condition


class Person:
    """Someone in a browser tab of their own (own storage: own token)."""

    def __init__(self, browser: Any, stack: Stack, name: str = "", width: int = 1000) -> None:
        self.stack = stack
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(WAIT_MS)
        self.page.goto(stack.url + "/")
        if name:
            self.page.fill("#guest-name", name)
            self.page.click("#register button")
            self.page.wait_for_selector("#play-bot")

    @property
    def token(self) -> str:
        """The guest's token, as the page keeps it."""
        return str(self.page.evaluate("localStorage.getItem('wargame.token')"))

    def api(self) -> ConnectClient:
        """The web service's API as this person."""
        return self.stack.client(self.token)

    def open(self, game_id: str) -> None:
        """Open a game's page and wait for its board."""
        self.page.goto(f"{self.stack.url}/g/{game_id}")
        self.page.wait_for_selector("#board [data-cell]")

    def wait_turn(self) -> None:
        """Wait until the page says it is this person's move."""
        self.page.locator("#status", has_text=re.compile("^Your move")).wait_for()

    def click_move(self, origin: str, target: str) -> None:
        """Click a man, wait for its targets, click the target."""
        self.page.click(f'#board [data-cell="{origin}"]')
        self.page.wait_for_selector(f'#board .target[data-cell="{target}"]')
        self.page.click(f'#board [data-cell="{target}"]')

    def wait_finished(self) -> str:
        """Wait for the game's end; the status line."""
        self.page.wait_for_selector('#status[data-status="GAME_STATUS_FINISHED"]')
        return str(self.page.text_content("#status"))

    def wait_version(self, version: int) -> None:
        """Wait until the board shows the game at `version` or later."""
        # Polled from here: the page's policy (no eval) keeps wait_for_function out.
        deadline = time.monotonic() + WAIT_MS / 1000
        while int(self.page.get_attribute("#board", "data-version") or 0) < version:
            assert time.monotonic() < deadline, f"the board never showed version {version}"
            time.sleep(0.05)

    def photograph(self, folder: Path, name: str) -> Path:
        """A screenshot of the page."""
        path = folder / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        """Close the tab."""
        self.context.close()


@pytest.fixture
def people(browser: Any, stack: Stack):
    """Make people with browser tabs; closed after the test."""
    made: list[Person] = []

    def make(name: str = "", width: int = 1000) -> Person:
        person = Person(browser, stack, name, width)
        made.append(person)
        return person

    yield make
    for person in made:
        person.close()


def bot_game(person: Person, game: str, side: str, setup: str = "", **options: str) -> str:
    """A game against the bot at level 1 from `setup` (the game's own start when empty),
    created with the person's token."""
    reply = person.api().unary(
        MATCHMAKER + "CreateGame",
        matchmaker_pb2.CreateGameRequest(
            game=game,
            side=side,
            setup=setup,
            options=options,
            opponent=matchmaker_pb2.SEAT_KIND_BOT,
            bot_level=1,
        ),
        matchmaker_pb2.CreateGameResponse(),
    )
    return reply.game.id


def shown_game(person: Person) -> matchmaker_pb2.GameView:
    """The game the person's page shows, as the matchmaker has it now."""
    reply = person.api().unary(
        MATCHMAKER + "GetGame",
        matchmaker_pb2.GetGameRequest(game_id=person.page.url.rsplit("/", 1)[1]),
        matchmaker_pb2.GetGameResponse(),
    )
    return reply.game


def assert_drawn_as_described(person: Person) -> None:
    """The page's board has each cell, cell tag (stations, Citadels, river banks, fords, the
    bridge, terrain) and feature (the river) that DescribeGame gives for the game, with the
    tags the game's state decides in place of the board's (a set-up's Citadels, Napoleonic
    hills and redoubts), as the CLI draws them."""
    view = shown_game(person)
    board = (
        person.api()
        .unary(
            ENGINE + "DescribeGame",
            engine_pb2.DescribeGameRequest(game=view.game, options=view.state.options),
            engine_pb2.DescribeGameResponse(),
        )
        .board
    )
    decided, from_state = state_tags(view.state), terrain_tags(view.state)
    expected = {
        cell.name: [tag for tag in cell.tags if tag not in decided]
        + list(from_state.get(cell.name, ()))
        for cell in board.cells
    }
    drawn: list[list[str]] = person.page.locator("#board [data-cell]").evaluate_all(
        "els => els.map(e => [e.dataset.cell, e.getAttribute('class'),"
        " e.querySelector('.citadel') ? 'citadel' : '',"
        " e.querySelector('.station') ? 'station' : ''])"
    )
    assert sorted(name for name, *_ in drawn) == sorted(expected)
    for name, classes, *marks in drawn:
        tags = expected[name]
        css = {"tag-" + re.sub(r"[^a-z0-9]+", "-", tag, flags=re.IGNORECASE) for tag in tags}
        assert {c for c in classes.split() if c.startswith("tag-")} == css, (name, classes)
        assert {mark for mark in marks if mark} == {"citadel", "station"} & set(tags), name
    features = [feature for feature in board.features if feature.points]
    assert person.page.locator("#board .features .feature").count() == len(features)


def test_the_lobby_plays_the_bot_and_shows_the_board(people, screenshots: Path):
    person = people("Lobbyist", width=360)  # a phone's width
    person.page.select_option("#bot-game", "war")
    person.page.select_option("#bot-level", "2")
    person.page.click("#play-bot button")
    person.page.wait_for_url("**/g/*")
    person.page.wait_for_selector("#board [data-cell]")
    assert person.page.locator("#board [data-cell]").count() == 100
    assert_drawn_as_described(person)
    assert person.page.locator("#seats li").filter(has_text="bot level 2").count() == 1
    person.wait_turn()
    width = person.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360  # nothing wider than the phone
    person.photograph(screenshots, "war-360px")


def test_a_game_of_war_against_the_bot_to_the_end_by_clicks(people, screenshots: Path):
    person = people("Wanda")
    person.open(bot_game(person, "war", "south", WAR_CITADEL))
    person.wait_turn()
    assert_drawn_as_described(person)  # the set-up's Citadels, a1 and j10
    person.click_move("j1", "j10")
    person.page.wait_for_selector('#moves li:has-text("Mj1xj10")')
    person.photograph(screenshots, "war")
    status = person.wait_finished()
    assert "Citadel" in status
    assert person.page.locator("#rematch").count() == 1


def test_a_game_of_battle_against_the_bot_to_the_end_by_clicks(people, screenshots: Path):
    person = people("Bertha")
    person.open(bot_game(person, "battle", "attacker", BATTLE_CITADEL))
    person.wait_turn()  # after the bot's (the defender's) move
    assert person.page.locator("#board polyline.river").count() == 1
    assert_drawn_as_described(person)
    person.photograph(screenshots, "battle")
    person.click_move("34", "19")
    status = person.wait_finished()
    assert "Citadel" in status


def test_napoleonic_against_the_bot_to_the_end_through_its_phases(people, screenshots: Path):
    person = people("Napoleon")
    person.open(bot_game(person, "napoleonic", "red", NAPOLEONIC_GUARDS, first_player="black"))
    assert_drawn_as_described(person)
    declared: list[str] = []
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        person.page.locator("#status", has_text=re.compile("^(Your move|Game over)")).wait_for()
        if person.page.get_attribute("#status", "data-status") == "GAME_STATUS_FINISHED":
            break
        version = int(person.page.get_attribute("#board", "data-version") or 0)
        view = shown_game(person)
        legal = {
            action.notation
            for action in person.api()
            .unary(
                "/wargame.v1.RulesEngine/ListLegalActions",
                engine_pb2.ListLegalActionsRequest(state=view.state),
                engine_pb2.ListLegalActionsResponse(),
            )
            .actions
        }
        attack = next(
            (a for a in ("attack h7>h8", "attack g8>h8") if a in legal and a not in declared), ""
        )
        if attack:
            origin, target = attack.removeprefix("attack ").split(">")
            person.click_move(origin, target)
            declared.append(attack)
            if len(declared) == 1:
                person.photograph(screenshots, "napoleonic")
        else:
            person.page.click('#actions button.action:text-is("end")')
        person.wait_version(version + 1)
    status = person.wait_finished()
    assert "Guards" in status
    assert declared == ["attack h7>h8", "attack g8>h8"]


def test_a_cli_player_and_a_browser_player_with_a_spectator_page(
    people, stack: Stack, clients: list[Cli], tmp_path: Path
):
    # The terminal client (`wargame`, in a pseudo-terminal) talks gRPC to the matchmaker and
    # the engine; the pages talk Connect to the web service in front of them.
    backends = {
        "WARGAME_ENGINE": stack.engine.address,
        "WARGAME_MATCHMAKER": stack.matchmaker.address,
    }
    args = ["play", "war", "--invite", "--side", "south", "--name", "Terminal"]
    cli = run(clients, args, tmp_path / "terminal", None, env=backends)
    cli.expect(r"Invite code: (\S+) ")
    code, game_id = cli.child.match.group(1), game_id_of(cli)
    browser_player = people("Browser")
    spectator = people()
    browser_player.page.fill("#invite-code", code)
    browser_player.page.click("#join-code button")
    browser_player.page.wait_for_url(f"**/g/{game_id}")
    browser_player.page.wait_for_selector("#board [data-cell]")
    spectator.open(game_id)
    moves = spectator.page.locator("#moves li")
    for cli_move, (origin, target) in (("a3-a4", ("a8", "a7")), ("c3-c4", ("e8", "e7"))):
        cli.expect(r"South > ")
        cli.send(cli_move)
        cli.expect_text(f"You: {cli_move}")
        spectator.page.locator("#moves li", has_text=cli_move).wait_for()
        browser_player.wait_turn()
        browser_player.click_move(origin, target)
        cli.expect_text(f"North: {origin}-{target}")  # the terminal shows the page's move
        spectator.page.locator(f'#board .last[data-cell="{target}"]').wait_for()
    assert moves.all_text_contents() == ["a3-a4", "a8-a7", "c3-c4", "e8-e7"]
    # Presence: both players watch the game (here); once the terminal is closed, its
    # player is shown away.
    presence = {
        side: spectator.page.locator(f'#seats li[data-side="{side}"] .presence')
        for side in ("north", "south")
    }
    assert [presence[side].text_content() for side in ("north", "south")] == [" ●", " ●"]
    cli.close()
    spectator.page.locator('#seats li[data-side="south"] .presence', has_text="○").wait_for()
    assert presence["north"].text_content() == " ●"


def test_a_game_found_in_the_lobby_with_ticking_clocks_a_draw_declined_resigned_and_rematched(
    people, stack: Stack
):
    host = stack.player("Lobby host")
    created = host.unary(
        MATCHMAKER + "CreateGame",
        matchmaker_pb2.CreateGameRequest(
            game="war",
            side="south",
            visibility=matchmaker_pb2.VISIBILITY_PUBLIC,
            time_control=matchmaker_pb2.TimeControl(base=duration_pb2.Duration(seconds=600)),
        ),
        matchmaker_pb2.CreateGameResponse(),
    )
    person = people("Guest")  # registered: the lobby lists the open games with their seats
    entry = person.page.locator("#games li", has_text="Lobby host")
    entry.get_by_role("button", name="join as north").click()
    person.page.wait_for_url(f"**/g/{created.game.id}")
    person.page.wait_for_selector("#board [data-cell]")
    # South's clock runs and the page counts it down by itself, between updates.
    clock = person.page.locator('#seats .clock.running[data-side="south"]')
    shown = str(clock.text_content())
    person.page.locator(
        '#seats .clock.running[data-side="south"]',
        has_text=re.compile("^(?!" + re.escape(shown) + "$)"),
    ).wait_for()
    assert person.page.locator('#seats .clock[data-side="north"]').text_content() == "10:00"
    # The host offers a draw; the page answers it with its buttons.
    host.unary(
        MATCHMAKER + "OfferDraw",
        matchmaker_pb2.OfferDrawRequest(game_id=created.game.id),
        matchmaker_pb2.OfferDrawResponse(),
    )
    person.page.click("#decline-draw")
    person.page.wait_for_selector("#offer-draw")
    # Resigning asks first; then the result, and a rematch opens a new game.
    person.page.once("dialog", lambda dialog: dialog.accept())
    person.page.click("#resign")
    assert "south wins" in person.wait_finished().lower()
    person.page.click("#rematch")
    person.page.wait_for_url(re.compile(r".*/g/(?!" + created.game.id + r"$)[^/]+$"))
    person.page.wait_for_selector("#board [data-cell]")


def test_a_page_follows_its_game_across_a_restart_of_the_web_service(people, stack: Stack):
    person = people("Steady")
    opponent = stack.player("Opponent")
    created = opponent.unary(
        MATCHMAKER + "CreateGame",
        matchmaker_pb2.CreateGameRequest(game="war", side="south"),
        matchmaker_pb2.CreateGameResponse(),
    )
    joined = person.api().unary(
        MATCHMAKER + "JoinGame",
        matchmaker_pb2.JoinGameRequest(invite_code=created.invite_code),
        matchmaker_pb2.JoinGameResponse(),
    )
    person.open(joined.game.id)
    stack.restart_web()
    moved = opponent.unary(
        MATCHMAKER + "SubmitActions",
        matchmaker_pb2.SubmitActionsRequest(
            game_id=joined.game.id,
            expected_version=joined.game.version,
            actions=[game_pb2.Action(side="south", notation="e3-e4")],
        ),
        matchmaker_pb2.SubmitActionsResponse(),
    )
    person.wait_version(moved.game.version)  # the page reconnected by itself
    person.wait_turn()
    assert person.page.locator("#moves li").all_text_contents() == ["e3-e4"]


def test_a_game_of_three_is_created_with_its_scenario_and_its_seats_taken_in_pages(people):
    host = people("Host")
    host.page.select_option("#friend-game", "napoleonic")
    host.page.fill("#friend-options", "scenario=three_way")
    host.page.click("#play-friend button")
    host.page.wait_for_url("**/g/*")
    host.page.wait_for_selector("#seats li")
    seats = host.page.locator("#seats li")
    assert seats.count() == 3
    assert seats.filter(has_text="Host").count() == 1
    code = str(host.page.text_content("#status")).rsplit("invite code ", 1)[1].strip()
    for name in ("Second", "Third"):
        guest = people(name)
        guest.page.fill("#invite-code", code)
        guest.page.click("#join-code button")
        guest.page.wait_for_url(host.page.url)
        host.page.locator("#seats li", has_text=name).wait_for()
    host.page.wait_for_selector('#status[data-status="GAME_STATUS_RUNNING"]')


def test_a_move_made_with_the_keyboard_alone(people):
    person = people("Keys")
    person.open(bot_game(person, "war", "south", WAR_CITADEL))
    person.wait_turn()
    person.page.focus('#board [data-cell="j1"]')
    person.page.keyboard.press("Enter")
    person.page.wait_for_selector('#board .target[data-cell="j10"]')
    person.page.focus('#board [data-cell="j10"]')
    person.page.keyboard.press("Space")
    person.page.wait_for_selector('#moves li:has-text("Mj1xj10")')
    assert "Citadel" in person.wait_finished()


def test_a_refused_move_shows_its_reason(people):
    person = people("Clumsy")
    person.open(bot_game(person, "war", "south", WAR_CITADEL))
    person.wait_turn()
    person.page.fill("#notation", "a1-a5")
    person.page.press("#notation", "Enter")
    notice = person.page.locator("#notice")
    notice.filter(has_text="ILLEGAL").wait_for()
    assert person.page.get_attribute("#notice", "data-kind") == "error"
    # Nothing was played: the move list is empty and it is still the person's move.
    assert person.page.locator("#moves li").count() == 0
    person.wait_turn()


# --- whole games from the standard start (the slow suite, as the CLI's) --------------------

GAMES = {
    "war": ("south", {}),
    "battle": ("attacker", {}),
    "napoleonic": ("red", {"turn_limit": "40", "adjudicate_by_material": "true"}),
}


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("game", list(GAMES))
def test_a_whole_game_against_the_bot_at_level_1_typed_in_the_page(
    people, stack: Stack, screenshots: Path, game: str
):
    side, options = GAMES[game]
    person = people(f"Whole {game}")
    game_id = bot_game(person, game, side, **options)
    person.open(game_id)
    with grpc.insecure_channel(stack.engine.address) as channel:
        engine = engine_pb2_grpc.RulesEngineStub(channel)
        with grpc.insecure_channel(stack.matchmaker.address) as mm:
            matchmaker = matchmaker_pb2_grpc.MatchmakerStub(mm)
            metadata = (("authorization", f"Bearer {person.token}"),)
            typed = 0
            while True:
                view = matchmaker.GetGame(
                    matchmaker_pb2.GetGameRequest(game_id=game_id),
                    metadata=metadata,
                    timeout=30,
                ).game
                if view.status == matchmaker_pb2.GAME_STATUS_FINISHED:
                    break
                if side not in view.state.to_act:
                    time.sleep(0.05)
                    continue
                person.wait_version(view.version)
                person.page.fill("#notation", suggested(engine, view.state, side))
                person.page.press("#notation", "Enter")
                person.wait_version(view.version + 1)
                typed += 1
    person.wait_finished()
    person.photograph(screenshots, f"{game}-whole-game-end")
    assert typed > 0


def suggested(engine: Any, state: game_pb2.GameState, side: str) -> str:
    """The engine's suggestion for `side` (a search of 0.1 s), asked again after the time it
    names while it is refused as busy: its searches run niced, and one that a busy machine
    keeps from finishing in time is stopped and refused (ENGINE_BUSY, with a RetryInfo)."""
    request = engine_pb2.SuggestActionRequest(
        state=state, side=side, time_budget=duration_pb2.Duration(nanos=100_000_000)
    )
    while True:
        try:
            return str(engine.SuggestAction(request, timeout=60).notation)
        except grpc.RpcError as error:
            details = error_details(error)
            if details.reason != "ENGINE_BUSY":
                raise
            time.sleep(details.retry_after or 0.1)


def piece_heights(person: Person) -> dict[str, float]:
    """Each side's mean height on the screen (pixels from the top) of its men on the board,
    read once every man is laid out (a board being drawn again has men of no size yet)."""
    found: list[list[Any]] = []
    deadline = time.monotonic() + 30
    while not found or not all(height > 0 for _, _, height in found):
        assert time.monotonic() < deadline, "the board's men were never laid out"
        found = person.page.locator("#board [data-piece]").evaluate_all(
            "els => els.map(e => [e.dataset.piece.split(':')[0],"
            " e.getBoundingClientRect().y, e.getBoundingClientRect().height])"
        )
    heights: dict[str, list[float]] = {}
    for side, y, _ in found:
        heights.setdefault(side, []).append(float(y))
    return {side: sum(ys) / len(ys) for side, ys in heights.items()}


def test_a_player_seated_north_sees_their_own_army_at_the_bottom(people, screenshots: Path):
    # The engine draws south at the bottom; north's page turns the board round, as the CLI
    # does, and a spectator's keeps the engine's drawing.
    player = people("Northerner")
    game_id = bot_game(player, "war", "north")
    player.open(game_id)
    assert player.page.get_attribute("#board", "data-turns") == "2"
    heights = piece_heights(player)
    assert heights["north"] > heights["south"], heights
    spectator = people()
    spectator.open(game_id)
    assert spectator.page.get_attribute("#board", "data-turns") == "0"
    heights = piece_heights(spectator)
    assert heights["south"] > heights["north"], heights
    player.photograph(screenshots, "war-seated-north")


# Attack at Dawn arrays (the CLI's test_cli_attack_at_dawn.py): 2xA 4xC 1xG 8xI each.
RED_ARRAY = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
BLACK_ARRAY = "a7=A b7=C c7=C e7=G f7=C g7=C h7=A a6=I b6=I c6=I d6=I e6=I f6=I g6=I h6=I"


def pieces_of(person: Person, side: str) -> int:
    """How many men of `side` the person's board shows."""
    return person.page.locator(f'#board [data-piece^="{side}:"]').count()


def test_a_secret_deployment_is_shown_to_its_owner_and_never_to_the_others(
    people, screenshots: Path
):
    red, black, spectator = people("Red"), people("Black"), people()
    created = red.api().unary(
        MATCHMAKER + "CreateGame",
        matchmaker_pb2.CreateGameRequest(
            game="napoleonic", side="red", options={"deployment": "attack_at_dawn"}
        ),
        matchmaker_pb2.CreateGameResponse(),
    )
    black.api().unary(
        MATCHMAKER + "JoinGame",
        matchmaker_pb2.JoinGameRequest(invite_code=created.invite_code),
        matchmaker_pb2.JoinGameResponse(),
    )
    game_id = created.game.id
    for person in (red, black, spectator):
        person.open(game_id)
    # Red writes its array (a click on a square of its rows starts an item) and commits.
    red.wait_turn()
    red.page.click('#board [data-cell="a2"]')
    assert red.page.input_value("#array") == "a2="
    red.page.fill("#array", RED_ARRAY)
    red.page.locator("#array-note", has_text="all placed").wait_for()
    assert pieces_of(red, "red") == 15  # drawn for its owner as it is written
    red.page.click("#commit-array")
    red.page.locator("#array-note", has_text="only its digest was sent").wait_for()
    committed = (
        red.api()
        .unary(
            MATCHMAKER + "GetGame",
            matchmaker_pb2.GetGameRequest(game_id=game_id),
            matchmaker_pb2.GetGameResponse(),
        )
        .game
    )
    for person in (red, black, spectator):
        person.wait_version(committed.version)
    red.photograph(screenshots, "napoleonic-secret-array-its-owner")
    black.photograph(screenshots, "napoleonic-secret-array-the-opponent")
    # Its owner still sees it; the opponent and the spectator see no red man, nor its text.
    assert pieces_of(red, "red") == 15
    assert "a2=A" in str(
        red.page.evaluate("localStorage.getItem('wargame.secret." + game_id + ".red')")
    )
    for other in (black, spectator):
        assert pieces_of(other, "red") == 0
        assert "h2=A" not in other.page.content()
    # Black types it as the CLI's `commit <array>`: only the digest leaves the page too.
    black.wait_turn()
    black.page.fill("#notation", f"commit {BLACK_ARRAY}")
    black.page.press("#notation", "Enter")
    # Both pages reveal by themselves; then every page shows both armies.
    deadline = time.monotonic() + WAIT_MS / 1000
    while pieces_of(spectator, "red") < 15 or pieces_of(spectator, "black") < 15:
        shown = [p.page.text_content("#notice") for p in (red, black, spectator)]
        assert time.monotonic() < deadline, f"the arrays were never revealed: {shown}"
        time.sleep(0.1)
    moves = spectator.page.locator("#moves li").all_text_contents()
    assert not any("salt" in move or "=" in move for move in moves[:2]), moves
    assert red.page.evaluate("localStorage.getItem('wargame.secret." + game_id + ".red')") is None


def test_two_pages_meet_by_quick_match_and_play(people, stack: Stack, screenshots: Path):
    first, second = people("Early"), people("Late")
    for person in (first, second):
        person.page.select_option("#quick-game", "battle")
        person.page.click("#quick-match button")
    for person in (first, second):
        person.page.wait_for_url(re.compile(r".*/g/[^/]+$"))
        person.page.wait_for_selector("#board [data-cell]")
    assert first.page.url == second.page.url
    game_id = first.page.url.rsplit("/", 1)[1]
    views = {
        person: person.api()
        .unary(
            MATCHMAKER + "GetGame",
            matchmaker_pb2.GetGameRequest(game_id=game_id),
            matchmaker_pb2.GetGameResponse(),
        )
        .game
        for person in (first, second)
    }
    assert {view.your_side for view in views.values()} == {"attacker", "defender"}
    # Whoever is to move plays a legal move typed in its page; the other page sees it.
    mover = next(p for p, view in views.items() if view.your_side in view.state.to_act)
    other = second if mover is first else first
    legal = stack.client().unary(
        ENGINE + "ListLegalActions",
        engine_pb2.ListLegalActionsRequest(state=views[mover].state),
        engine_pb2.ListLegalActionsResponse(),
    )
    move = next(action.notation for action in legal.actions if action.notation != "end")
    mover.wait_turn()
    mover.page.fill("#notation", move)
    mover.page.press("#notation", "Enter")
    other.wait_version(views[mover].version + 1)
    assert other.page.locator("#moves li").all_text_contents() == [move]
    other.photograph(screenshots, "battle-quick-match")

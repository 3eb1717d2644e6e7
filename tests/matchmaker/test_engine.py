"""The matchmaker's client of the rules engine: what a caller learns when the engine is out
of reach or answers with a reason this matchmaker does not know, and when its channels are
opened anew for renewed TLS files."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import structlog

import matchmaker.engine
from matchmaker.engine import Engine, EngineError, EngineFailure, backoff, refusal_status
from matchmaker.settings import Settings
from tests.matchmaker.helpers import captured_logs, legal_actions, serving_engine
from tests.tls_support import Authority
from wargame.runtime.refusal import Reason, Refusal
from wargame.runtime.status import ErrorDetails, rich_status
from wargame.runtime.tls import ClientTLS
from wargame.v1 import board_pb2, engine_pb2, engine_pb2_grpc, game_pb2, war_pb2


def test_an_unknown_reason_is_our_bug_and_says_so() -> None:
    refusal = EngineError(
        ErrorDetails(grpc.StatusCode.FAILED_PRECONDITION, "no such thing", "NOT_A_REASON")
    )
    status = refusal_status(refusal, stored_session=True)
    assert isinstance(status, EngineFailure)
    assert (status.code, status.reason) == (grpc.StatusCode.INTERNAL, Reason.INTERNAL_ERROR)
    assert status.message == "the rules engine answered with an unknown reason"
    assert status.engine == "FAILED_PRECONDITION NOT_A_REASON: no such thing"


@pytest.mark.parametrize(
    ("code", "reason", "stored_session", "expected_code"),
    [
        # Against a stored session the caller's state is not the one that was judged: an
        # illegal action is a failed precondition, whatever code the engine used ...
        (grpc.StatusCode.INVALID_ARGUMENT, Reason.ILLEGAL_ACTION, True, "FAILED_PRECONDITION"),
        # ... while a malformed request stays an invalid argument.
        (grpc.StatusCode.FAILED_PRECONDITION, Reason.NOTATION_INVALID, True, "INVALID_ARGUMENT"),
        # A caller's own state (no stored session) keeps the engine's code.
        (grpc.StatusCode.INVALID_ARGUMENT, Reason.ILLEGAL_ACTION, False, "INVALID_ARGUMENT"),
        (grpc.StatusCode.NOT_FOUND, Reason.UNKNOWN_GAME, True, "NOT_FOUND"),
    ],
)
def test_an_engine_refusal_keeps_its_reason_and_message_under_the_sessions_code(
    code: grpc.StatusCode, reason: Reason, stored_session: bool, expected_code: str
) -> None:
    refusal = EngineError(
        ErrorDetails(code, "not now", reason, fields=(("actions", "bad"),), metadata={"k": "v"})
    )
    status = refusal_status(refusal, stored_session=stored_session)
    assert not isinstance(status, EngineFailure)
    assert (status.code, status.reason, status.message) == (
        getattr(grpc.StatusCode, expected_code),
        reason,
        "not now",
    )
    assert status.fields == (("actions", "bad"),)
    assert status.metadata == {"k": "v"}


@pytest.mark.parametrize(
    "code", [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION]
)
def test_a_stored_game_the_engine_calls_invalid_is_our_bug_and_says_so(
    code: grpc.StatusCode,
) -> None:
    """The matchmaker stored the state the engine now calls invalid: INTERNAL, with the
    engine's words kept for the log, not the caller's fault."""
    refusal = EngineError(ErrorDetails(code, "no such position", Reason.INVALID_STATE))
    status = refusal_status(refusal, stored_session=True)
    assert isinstance(status, EngineFailure)
    assert (status.code, status.reason) == (grpc.StatusCode.INTERNAL, Reason.INTERNAL_ERROR)
    assert status.message == "the stored game was refused by the engine"
    assert status.engine == f"{code.name} INVALID_STATE: no such position"


def test_an_engine_failing_with_another_code_is_our_bug_named_by_its_request_id() -> None:
    """An engine that crashed (UNKNOWN, with no reason at all): our bug, logged with the
    engine's code, "-" for its missing reason, and its message."""
    refusal = EngineError(ErrorDetails(grpc.StatusCode.UNKNOWN, "Exception calling application"))
    structlog.contextvars.bind_contextvars(request_id="req-9")
    try:
        status = refusal_status(refusal, stored_session=False)
    finally:
        structlog.contextvars.clear_contextvars()
    assert isinstance(status, EngineFailure)
    assert (status.code, status.reason) == (grpc.StatusCode.INTERNAL, Reason.INTERNAL_ERROR)
    assert status.message == "the rules engine failed (request id req-9)"
    assert status.engine == "UNKNOWN -: Exception calling application"


def test_an_unreachable_engine_is_unavailable_with_a_retry_hint(nowhere: str) -> None:
    settings = Settings(engine_retries=2, engine_timeout=5.0, retry_hint=0.75)

    async def call() -> EngineFailure:
        engine = Engine(nowhere, settings)
        try:
            with pytest.raises(EngineFailure) as failed:
                await engine.games()
            return failed.value
        finally:
            await engine.close()

    failure = asyncio.run(call())
    assert (failure.code, failure.reason) == (
        grpc.StatusCode.UNAVAILABLE,
        Reason.ENGINE_UNAVAILABLE,
    )
    assert failure.message == "the rules engine cannot be reached; retry in 0.75 s"
    assert failure.metadata == {"retry_after_ms": "750"}
    assert failure.retry_after == 0.75
    assert failure.engine.startswith("ListGames: UNAVAILABLE")


def _client_tls(tmp_path: Path) -> tuple[Authority, ClientTLS, Settings]:
    """A client certificate of a test authority in the files the engine client reads."""
    authority = Authority.create(tmp_path)
    first = authority.issue("first", [], server=False, client=True)
    shutil.copy(first.cert_file, tmp_path / "client.crt")
    shutil.copy(first.key_file, tmp_path / "client.key")
    tls = ClientTLS(
        str(authority.ca_file), str(tmp_path / "client.crt"), str(tmp_path / "client.key")
    )
    return authority, tls, Settings(engine_tls=tls, bot_max_time=0.1, engine_timeout=0.1)


def _renew(authority: Authority, tmp_path: Path) -> None:
    """Renew the client's certificate and key on disk, each file replaced in one step."""
    renewed = authority.issue("renewed", [], server=False, client=True)
    shutil.copy(renewed.key_file, tmp_path / "new.key")
    shutil.copy(renewed.cert_file, tmp_path / "new.crt")
    (tmp_path / "new.crt").replace(tmp_path / "client.crt")
    (tmp_path / "new.key").replace(tmp_path / "client.key")


def _assert_calls_keep_the_channels(engine: Engine) -> None:
    """Two calls go out on the channels the client holds, and no TLS files are reloaded."""
    opened = engine.channels
    with captured_logs() as logs:
        engine._stub()
        engine._stub()
    assert engine.channels is opened
    assert not [entry for entry in logs if "reloaded" in entry["event"]]


def test_channels_are_opened_anew_only_when_the_tls_files_change(
    nowhere: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client looks at its TLS files on every call here (no interval): while they are
    the files it read, it keeps its channels; once one is replaced, it opens new ones."""
    monkeypatch.setattr(matchmaker.engine, "TLS_LOOK_INTERVAL", 0.0)
    authority, _, settings = _client_tls(tmp_path)

    async def scenario() -> None:
        engine = Engine(nowhere, settings)
        try:
            opened = engine.channels
            _assert_calls_keep_the_channels(engine)
            _renew(authority, tmp_path)
            with captured_logs() as logs:
                engine._stub()
                renewed_channels = engine.channels
                engine._stub()
            assert renewed_channels is not opened and engine.channels is renewed_channels
            assert [entry["event"] for entry in logs] == ["engine TLS files reloaded"]
        finally:
            await engine.close()

    asyncio.run(scenario())


def test_new_channels_keep_their_tls_files_for_the_look_interval(
    nowhere: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client looks at its TLS files once per `TLS_LOOK_INTERVAL` (an hour here), the
    first time one interval after opening its channels: files renewed just after they were
    opened are not looked at by the calls that follow."""
    monkeypatch.setattr(matchmaker.engine, "TLS_LOOK_INTERVAL", 3600.0)
    authority, tls, settings = _client_tls(tmp_path)

    async def scenario() -> None:
        engine = Engine(nowhere, settings)
        try:
            _renew(authority, tmp_path)
            assert tls.signature() != engine._tls_signature  # renewed on disk
            _assert_calls_keep_the_channels(engine)
        finally:
            await engine.close()

    asyncio.run(scenario())


def test_actions_are_applied_to_the_compact_form_unless_a_view_is_asked_for(
    engine_address: str, engine_stub: Any
) -> None:
    """The matchmaker stores the compact state (the position): the engine draws the view
    (the pieces) only when the caller asks for it."""

    async def scenario() -> tuple[game_pb2.GameState, game_pb2.GameState]:
        engine = Engine(engine_address, Settings())
        try:
            state = await engine.new_game("war", {}, "", "")
            action = legal_actions(engine_stub, state)[0].action
            plain = await engine.apply(state, [action])
            drawn = await engine.apply(state, [action], view=True)
            return plain.state, drawn.state
        finally:
            await engine.close()

    plain, drawn = asyncio.run(scenario())
    assert plain.position and plain.position == drawn.position
    assert not plain.pieces and drawn.pieces


def test_the_retry_backoff_doubles_on_every_attempt_and_the_jitter_stretches_it() -> None:
    """50 ms after the first failed attempt, doubled after each further one; the jitter (0
    to 1) stretches a wait by up to as much again."""
    assert [backoff(attempt, 0.0) for attempt in range(4)] == pytest.approx([0.05, 0.1, 0.2, 0.4])
    assert backoff(1, 1.0) == pytest.approx(0.2)
    assert backoff(2, 0.5) == pytest.approx(0.3)


class _Warming(engine_pb2_grpc.RulesEngineServicer):
    """An engine still starting: UNAVAILABLE to its first `unavailable` ListGames calls, then
    one game; DescribeGame refused as an unknown game. It notes every call's request id
    and the time its caller gave it."""

    def __init__(self, unavailable: int) -> None:
        self.unavailable = unavailable
        self.calls: list[tuple[str, str, float | None]] = []

    def _note(self, method: str, context: grpc.ServicerContext) -> None:
        metadata = dict(context.invocation_metadata())
        self.calls.append((method, str(metadata.get("x-request-id", "")), context.time_remaining()))

    def ListGames(
        self, request: engine_pb2.ListGamesRequest, context: grpc.ServicerContext
    ) -> engine_pb2.ListGamesResponse:
        self._note("ListGames", context)
        if len(self.calls) <= self.unavailable:
            context.abort(grpc.StatusCode.UNAVAILABLE, "warming up")
        return engine_pb2.ListGamesResponse(games=[board_pb2.GameInfo(id="war")])

    def DescribeGame(
        self, request: engine_pb2.DescribeGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.DescribeGameResponse:
        self._note("DescribeGame", context)
        context.abort_with_status(
            rich_status(grpc.StatusCode.NOT_FOUND, "UNKNOWN_GAME", f"no game {request.game}")
        )
        raise AssertionError("aborted")


@pytest.fixture
def warming() -> Iterator[tuple[_Warming, str]]:
    """An engine UNAVAILABLE to its first two ListGames calls, and its address."""
    servicer = _Warming(unavailable=2)  # type: ignore[abstract]  # only two methods are called
    with serving_engine(servicer) as address:
        yield servicer, address


def _games(address: str, settings: Settings) -> list[str]:
    async def call() -> list[str]:
        engine = Engine(address, settings)
        try:
            structlog.contextvars.bind_contextvars(request_id="req-17")
            return list(await engine.games())
        finally:
            structlog.contextvars.clear_contextvars()
            await engine.close()

    return asyncio.run(call())


def test_an_unavailable_engine_is_tried_again_as_often_as_configured(
    warming: tuple[_Warming, str],
) -> None:
    """Three attempts outlast an engine unavailable twice; each carries the request id of
    the call it serves and the engine deadline."""
    servicer, address = warming
    assert _games(address, Settings(engine_retries=3, engine_timeout=4.0)) == ["war"]
    assert [(method, rid) for method, rid, _ in servicer.calls] == [("ListGames", "req-17")] * 3
    for _, _, remaining in servicer.calls:
        # gRPC rounds the timeout it sends up to a few significant digits (to keep the
        # header compressible), so the engine may see a few milliseconds more than 4 s.
        assert remaining is not None and 0 < remaining <= 4.0 * 1.01


@pytest.mark.parametrize("attempts", [1, 2])
def test_an_engine_unavailable_on_every_attempt_is_relayed_with_its_message(
    warming: tuple[_Warming, str], attempts: int
) -> None:
    servicer, address = warming
    with pytest.raises(EngineFailure) as failed:
        _games(address, Settings(engine_retries=attempts))
    assert failed.value.reason == Reason.ENGINE_UNAVAILABLE
    assert failed.value.engine == "ListGames: UNAVAILABLE warming up"
    assert len(servicer.calls) == attempts


def test_a_refusal_by_the_engine_is_not_retried_and_keeps_its_reason(
    warming: tuple[_Warming, str],
) -> None:
    servicer, address = warming

    async def call() -> EngineError:
        engine = Engine(address, Settings(engine_retries=3))
        try:
            with pytest.raises(EngineError) as refused:
                await engine.describe("chess", {})
            return refused.value
        finally:
            await engine.close()

    details = asyncio.run(call()).details
    assert (details.code, details.reason, details.message) == (
        grpc.StatusCode.NOT_FOUND,
        "UNKNOWN_GAME",
        "no game chess",
    )
    assert [(method, rid) for method, rid, _ in servicer.calls] == [("DescribeGame", "")]


TROOP = game_pb2.Piece(kind="troop", side="south", cell="e5")
SIDES_ASKED = ("south", "north", "east")


class _Drawing(engine_pb2_grpc.RulesEngineServicer):
    """An engine of one made-up board: NewGame draws any position as one troop on e5
    (UNAVAILABLE to its first `unavailable` calls, refusing the position "refused" as an
    invalid state); DescribeGame refuses any options. It notes what it was asked to draw."""

    def __init__(self, unavailable: int = 0) -> None:
        self.unavailable = unavailable
        self.asked: list[tuple[str, str]] = []

    def NewGame(
        self, request: engine_pb2.NewGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.NewGameResponse:
        self.asked.append((request.game, request.position))
        if len(self.asked) <= self.unavailable:
            context.abort(grpc.StatusCode.UNAVAILABLE, "warming up")
        if request.position == "refused":
            context.abort_with_status(
                rich_status(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_STATE", "no such position")
            )
        return engine_pb2.NewGameResponse(
            state=game_pb2.GameState(
                game=request.game,
                position=request.position,
                options={"v": "1"},
                pieces=[TROOP],
                war=war_pb2.WarState(side_to_move="north"),
            )
        )

    def DescribeGame(
        self, request: engine_pb2.DescribeGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.DescribeGameResponse:
        if request.options:
            context.abort_with_status(
                rich_status(grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTION_VALUE", "no options")
            )
        cells = [
            board_pb2.Cell(name="e1", tags=["deployment:south"]),
            board_pb2.Cell(name="e5"),
            board_pb2.Cell(name="e9", tags=["home", "deployment:north"]),
            board_pb2.Cell(name="a1", tags=["deployment:south"]),
        ]
        return engine_pb2.DescribeGameResponse(
            board=board_pb2.BoardDescription(game=request.game, cells=cells)
        )


@pytest.fixture
def drawing() -> Iterator[tuple[_Drawing, str]]:
    """An engine of one made-up board, UNAVAILABLE to its first NewGame call."""
    servicer = _Drawing(unavailable=1)  # type: ignore[abstract]  # two methods are called
    with serving_engine(servicer) as address:
        yield servicer, address


def test_a_sides_deployment_squares_are_the_cells_tagged_for_it_in_board_order(
    drawing: tuple[_Drawing, str],
) -> None:
    """The squares a side deploys on are the board's cells tagged `deployment:<side>`; a
    stored game whose description the engine refuses (its options, say) is refused as a
    failed precondition with the engine's reason and message, not as a crash."""
    _, address = drawing
    war = game_pb2.GameState(game="war")
    odd = game_pb2.GameState(game="war", options={"size": "0"})

    async def call() -> tuple[list[tuple[str, ...]], Refusal]:
        engine = Engine(address, Settings(engine_retries=1))
        try:
            squares = [await engine.deployment_squares(war, side) for side in SIDES_ASKED]
            with pytest.raises(Refusal) as refused:
                await engine.deployment_squares(odd, "south")
            return squares, refused.value
        finally:
            await engine.close()

    squares, refusal = asyncio.run(call())
    assert squares == [("e1", "a1"), ("e9",), ()]
    assert not isinstance(refusal, EngineFailure)
    assert (refusal.code, refusal.reason, refusal.message) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        Reason.INVALID_OPTION_VALUE,
        "no options",
    )


def test_a_positions_view_is_asked_once_and_asked_again_only_after_a_failed_call(
    drawing: tuple[_Drawing, str],
) -> None:
    """The view of a position (options, pieces and the game's detail) is drawn by the
    engine once and shared, by later callers and by callers at the same moment; a call
    that failed is not kept: the next caller asks again. A position the engine calls
    invalid is our bug (the matchmaker stored it)."""
    servicer, address = drawing
    first = game_pb2.GameState(game="war", position="p1")
    second = game_pb2.GameState(game="war", position="p2")

    async def scenario() -> list[game_pb2.GameState]:
        engine = Engine(address, Settings(engine_retries=1))
        try:
            with pytest.raises(EngineFailure) as failed:
                await engine.drawn(first)
            assert failed.value.reason == Reason.ENGINE_UNAVAILABLE
            assert servicer.asked == [("war", "p1")]
            views = [await engine.drawn(first), await engine.drawn(first)]
            views += await asyncio.gather(engine.drawn(second), engine.drawn(second))
            # A state drawn already, or one of the structured form (no position), is
            # drawn as it is, without asking.
            structured = game_pb2.GameState(game="war")
            assert await engine.drawn(views[0]) is views[0]
            assert await engine.drawn(structured) is structured
            with pytest.raises(EngineFailure) as invalid:
                await engine.drawn(game_pb2.GameState(game="war", position="refused"))
            assert (invalid.value.code, invalid.value.message) == (
                grpc.StatusCode.INTERNAL,
                "the stored game was refused by the engine",
            )
            return views
        finally:
            await engine.close()

    views = asyncio.run(scenario())
    assert servicer.asked == [("war", "p1"), ("war", "p1"), ("war", "p2"), ("war", "refused")]
    for view, state in zip(views, [first, first, second, second], strict=True):
        assert (view.game, view.position) == (state.game, state.position)
        assert list(view.pieces) == [TROOP] and dict(view.options) == {"v": "1"}
        assert view.WhichOneof("detail") == "war" and view.war.side_to_move == "north"


def test_only_the_views_of_the_positions_asked_last_are_kept(
    drawing: tuple[_Drawing, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for three views, a fourth position drops the one asked least recently
    (asking a kept one again counts as asking it): only that one is drawn again."""
    servicer, address = drawing
    servicer.unavailable = 0
    monkeypatch.setattr(matchmaker.engine, "VIEWS_KEPT", 3)

    async def scenario() -> None:
        engine = Engine(address, Settings())
        try:
            for position in ("p1", "p2", "p3", "p1", "p4", "p1", "p3", "p4", "p2"):
                await engine.drawn(game_pb2.GameState(game="war", position=position))
        finally:
            await engine.close()

    asyncio.run(scenario())
    assert [position for _, position in servicer.asked] == ["p1", "p2", "p3", "p4", "p2"]

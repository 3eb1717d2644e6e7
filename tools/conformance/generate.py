"""Write the conformance vectors (tests/conformance/<game>/*.json) from the engine itself.

Every vector is one call to the RulesEngine servicer, run in this process, and the answer
it gave: `{"name", "rpc", "request", "response"}` in proto3 canonical JSON, or `"error":
{"code", "reason"}` for a refusal; perft tables are vectors of the kind `"rpc": "perft"`.
The games, options, presets and scenarios come from the engine's registry (ListGames), so a
game or scenario added there is covered on the next run without a change here.

    python -m tools.conformance.generate [--out DIR]     (`make conformance`)

The output depends only on the engine: random games use fixed seeds, and answers that
are not the same from one call to the next (sealed deployments, encrypted under a random
nonce) are left out. tests/conformance/README.md describes the vectors for implementers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from engine_service.rules import rulesets
from engine_service.service import RulesEngine
from wargame.runtime.logs import configure_logging
from wargame.v1 import board_pb2, engine_pb2, game_pb2

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "conformance"
SEAL_KEY = bytes(range(32))
POSITION = engine_pb2.STATE_VIEW_POSITION
PERFT_DEPTH = 3
# A sample's perft (`Vectors.perft_turn`): every position to this depth, one to PERFT_DEPTH.
SAMPLED_PERFT_DEPTH = 2
# Random games: seeds per game under the defaults, how long they may run, how often the
# read-only RPCs are asked along the way, and how far each option's alternative is played.
DEFAULT_SEEDS = (1, 2)
MAX_PLIES = 90
PROBE_EVERY = 6
ALTERNATIVE_PLIES = 4
STATES_UP_TO = 30  # ReplayRecord with every state only for records this short
Played = list[tuple[str, str]]  # (side, notation) in order
NOT_A_VALUE = "not-a-value"
# Reasons of the engine no vector gives, and why (tests/conformance/README.md lists them;
# the reasons from TOKEN_MISSING to TOO_MANY_WATCHERS are the matchmaker's).
NOT_IN_VECTORS = {
    "SEAL_KEY_UNAVAILABLE": "needs an engine started without a seal key",
    "MALFORMED_REQUEST": "bytes that are no message, or a ply beyond the engine's limit",
    "REQUEST_TOO_LARGE": "depends on the engine's configured limits",
    "TOO_MANY_ACTIONS": "depends on the engine's configured limits",
    "RECORD_TOO_LONG": "depends on the engine's configured limits",
    "DEADLINE_TOO_LONG": "depends on the engine's configured limits",
    "RESPONSE_TOO_LARGE": "depends on the engine's configured limits",
    "ENGINE_BUSY": "depends on the engine's load",
    "INTERNAL_ERROR": "a defect, never an answer",
}


class RefusedError(Exception):
    """The servicer refused the call (the status it would have sent)."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(status.details)
        self.status = status


class _Context:
    """What the servicer asks of a grpc.ServicerContext when it runs calls in-process."""

    def invocation_metadata(self) -> tuple[()]:
        return ()

    def time_remaining(self) -> None:
        return None

    def is_active(self) -> bool:
        return True

    def abort_with_status(self, status: grpc.Status) -> None:
        raise RefusedError(status)


def canonical(message: Message) -> dict[str, Any]:
    """proto3 canonical JSON of a message (camelCase names, enum names, 64-bit integers as
    strings, default values left out), without the states' `positionTag`: the engine's
    integrity tag, made under its own key, is no part of the rules' answer."""
    return _untagged(json_format.MessageToDict(message))


def _untagged(value: dict[str, Any]) -> dict[str, Any]:
    def strip(item: Any) -> Any:
        if isinstance(item, dict):
            return _untagged(item)
        return [strip(each) for each in item] if isinstance(item, list) else item

    return {key: strip(item) for key, item in value.items() if key != "positionTag"}


@dataclass(frozen=True)
class Answer:
    """A response, or the refusal's code and ErrorInfo reason."""

    response: Any = None
    code: str = ""
    reason: str = ""


def _refusal(status: grpc.Status) -> Answer:
    reason = ""
    for key, value in status.trailing_metadata or ():
        if key == "grpc-status-details-bin":
            details = status_pb2.Status.FromString(value)
            for detail in details.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    reason = info.reason
    return Answer(code=status.code.name, reason=reason)


class Engine:
    """The RulesEngine servicer, called directly."""

    def __init__(self) -> None:
        self.servicer = RulesEngine(rulesets(SEAL_KEY))

    def call(self, rpc: str, request: Message) -> Answer:
        try:
            return Answer(response=getattr(self.servicer, rpc)(request, _Context()))
        except RefusedError as refused:
            return _refusal(refused.status)


@dataclass
class Vectors:
    """The vectors of every game, in the order they were made. With a `perft_turn`, a
    sample's perft: one position of each game's (number `perft_turn` modulo their count) to
    PERFT_DEPTH, the others to SAMPLED_PERFT_DEPTH (their vectors say so in "depth")."""

    engine: Engine
    cases: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    perft_turn: int | None = None

    def add(
        self, game: str, name: str, rpc: str, request: Message, answer: Answer | None = None
    ) -> Answer:
        """Call the engine (unless its `answer` is given) and keep the call with its answer
        as a vector."""
        answer = answer or self.engine.call(rpc, request)
        case: dict[str, Any] = {"name": name, "rpc": rpc, "request": canonical(request)}
        if answer.code:
            case["error"] = {"code": answer.code, "reason": answer.reason}
        else:
            case["response"] = canonical(answer.response)
        self.keep(game, case)
        return answer

    def keep(self, game: str, case: dict[str, Any]) -> None:
        """Keep a case made elsewhere (perft); names are unique within a game."""
        cases = self.cases.setdefault(game, {})
        if case["name"] in cases:
            raise ValueError(f"two vectors named {case['name']!r} in {game}")
        cases[case["name"]] = case


def state_of(game: str, position: str) -> game_pb2.GameState:
    """A request's state: the game and its position text, nothing else."""
    return game_pb2.GameState(game=game, position=position)


def alternatives(option: board_pb2.OptionInfo) -> list[str]:
    """Every value an option can take worth a vector: all for bool, enum and list options;
    the default, "off" and the next integers for integer ones; the default for text."""
    kind = option.kind
    if kind == board_pb2.OPTION_KIND_BOOL:
        return ["false", "true"]
    if kind in (board_pb2.OPTION_KIND_ENUM, board_pb2.OPTION_KIND_LIST):
        values = list(option.allowed)
        if kind == board_pb2.OPTION_KIND_LIST and len(values) > 1:
            values.append(",".join(values))
        return values
    if kind == board_pb2.OPTION_KIND_INT:
        values = [option.default_value]
        if "off" in option.allowed_text:
            values.append("off")
        if option.default_value.isdigit():
            values += [str(int(option.default_value) + step) for step in (1, 2)]
        return list(dict.fromkeys(values))
    return [option.default_value]


# -- random games -------------------------------------------------------------------------


def _choose(
    engine: Engine, state: game_pb2.GameState, rng: random.Random
) -> game_pb2.Action | None:
    """A random legal action of the state (from ListLegalActions), None at the end."""
    listed = engine.call("ListLegalActions", engine_pb2.ListLegalActionsRequest(state=state))
    if listed.code or not listed.response.actions:
        return None
    action = game_pb2.Action()
    action.CopyFrom(rng.choice(listed.response.actions).action)
    return action


def play(
    vectors: Vectors,
    game: str,
    label: str,
    start: game_pb2.GameState,
    *,
    seed: int,
    plies: int,
    probes: bool,
) -> None:
    """A seeded random game from `start`: each action an ApplyActions vector (sent as
    notation and as structured action in turn); with `probes`, every few plies the
    read-only RPCs, and the game's record written and replayed at the end."""
    engine = vectors.engine
    rng = random.Random(f"{game}/{label}/{seed}")
    state = state_of(game, start.position)
    initial = state
    played: list[game_pb2.Action] = []
    for ply in range(plies):
        action = _choose(engine, state, rng)
        if action is None:
            break
        if probes and ply % PROBE_EVERY == 0:
            _probe(vectors, game, f"{label}/ply{ply:03d}", state, action)
        notation = engine.call(
            "FormatAction", engine_pb2.FormatActionRequest(state=state, action=action)
        )
        sent = action
        if ply % 2 == 0:
            sent = game_pb2.Action(side=action.side, notation=notation.response.notation)
        request = engine_pb2.ApplyActionsRequest(state=state, actions=[sent], view=POSITION)
        once = engine.call("ApplyActions", request)
        if once.code:
            raise RuntimeError(f"{game} {label}: a listed action was refused: {once.reason}")
        if once.response != engine.call("ApplyActions", request).response:
            break  # hidden information under a random nonce: not reproducible, left out
        vectors.add(game, f"{label}/ply{ply:03d}/ApplyActions", "ApplyActions", request, once)
        played.append(action)
        state = state_of(game, once.response.state.position)
    if probes and played:
        _records(vectors, game, label, initial, played, states=len(played) <= STATES_UP_TO)


def _probe(
    vectors: Vectors, game: str, label: str, state: game_pb2.GameState, action: game_pb2.Action
) -> None:
    vectors.add(
        game,
        f"{label}/ListLegalActions",
        "ListLegalActions",
        engine_pb2.ListLegalActionsRequest(state=state),
    )
    vectors.add(
        game,
        f"{label}/ValidateAction",
        "ValidateAction",
        engine_pb2.ValidateActionRequest(state=state, action=action),
    )
    formatted = vectors.add(
        game,
        f"{label}/FormatAction",
        "FormatAction",
        engine_pb2.FormatActionRequest(state=state, action=action),
    )
    vectors.add(
        game,
        f"{label}/ParseAction",
        "ParseAction",
        engine_pb2.ParseActionRequest(
            state=state, text=formatted.response.notation, side=action.side
        ),
    )


def _records(
    vectors: Vectors,
    game: str,
    label: str,
    initial: game_pb2.GameState,
    played: Sequence[game_pb2.Action],
    *,
    states: bool,
) -> None:
    written = vectors.add(
        game,
        f"{label}/WriteRecord",
        "WriteRecord",
        engine_pb2.WriteRecordRequest(
            initial_state=initial, actions=played, tags={"Event": "conformance"}, view=POSITION
        ),
    )
    if written.code:
        return
    vectors.add(
        game,
        f"{label}/ReplayRecord",
        "ReplayRecord",
        engine_pb2.ReplayRecordRequest(record=written.response.record, view=POSITION),
    )
    if states:
        vectors.add(
            game,
            f"{label}/ReplayRecord/states",
            "ReplayRecord",
            engine_pb2.ReplayRecordRequest(
                record=written.response.record, include_states=True, view=POSITION
            ),
        )


# -- the sections -------------------------------------------------------------------------


def catalogue(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """ListGames; DescribeGame under the defaults, each preset and each option value."""
    game = info.id
    vectors.add(game, "catalogue/ListGames", "ListGames", engine_pb2.ListGamesRequest())
    vectors.add(
        game, "catalogue/DescribeGame", "DescribeGame", engine_pb2.DescribeGameRequest(game=game)
    )
    for preset in info.presets:
        vectors.add(
            game,
            f"catalogue/preset={preset.name}/DescribeGame",
            "DescribeGame",
            engine_pb2.DescribeGameRequest(game=game, preset=preset.name, view=POSITION),
        )


def options(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """Each option with each of its values: NewGame, the legal actions at the start and a
    few random plies; a value it does not take; an option the game does not have."""
    game = info.id
    for option in info.options:
        for value in alternatives(option):
            label = f"options/{option.name}={value}"
            started = vectors.add(
                game,
                f"{label}/NewGame",
                "NewGame",
                engine_pb2.NewGameRequest(game=game, options={option.name: value}, view=POSITION),
            )
            if started.code:
                continue
            state = state_of(game, started.response.state.position)
            play(vectors, game, label, state, seed=0, plies=ALTERNATIVE_PLIES, probes=False)
        if option.kind != board_pb2.OPTION_KIND_TEXT:
            vectors.add(
                game,
                f"options/{option.name}={NOT_A_VALUE}/NewGame",
                "NewGame",
                engine_pb2.NewGameRequest(game=game, options={option.name: NOT_A_VALUE}),
            )
    vectors.add(
        game,
        "options/no_such_option/NewGame",
        "NewGame",
        engine_pb2.NewGameRequest(game=game, options={"no_such_option": "1"}),
    )


def presets(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """Each preset started and played a little; a preset the game does not have."""
    game = info.id
    for preset in info.presets:
        label = f"presets/{preset.name}"
        started = vectors.add(
            game,
            f"{label}/NewGame",
            "NewGame",
            engine_pb2.NewGameRequest(game=game, preset=preset.name, view=POSITION),
        )
        if not started.code:
            play(vectors, game, label, started.response.state, seed=7, plies=24, probes=True)
    vectors.add(
        game,
        "presets/no_such_preset/NewGame",
        "NewGame",
        engine_pb2.NewGameRequest(game=game, preset="no_such_preset"),
    )


def random_games(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """Seeded random games under the defaults, probed along the way."""
    game = info.id
    start = vectors.engine.call("NewGame", engine_pb2.NewGameRequest(game=game, view=POSITION))
    for seed in DEFAULT_SEEDS:
        label = f"random/seed{seed}"
        play(vectors, game, label, start.response.state, seed=seed, plies=MAX_PLIES, probes=True)


def worked_examples(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """The scripted games of the rules' worked examples (the golden transcripts of
    tests/engine_service/rules/<game>/golden.py): each line an ApplyActions vector, the
    refused ones with their reason."""
    from tests.engine_service.rules.golden import scripts_of

    game = info.id
    try:
        scripts = scripts_of(game).SCRIPTS
    except ModuleNotFoundError:
        return
    for name, script in scripts.items():
        label = f"examples/{name}"
        started = vectors.add(
            game,
            f"{label}/NewGame",
            "NewGame",
            engine_pb2.NewGameRequest(
                game=game, options=script.options, setup=script.setup or "", view=POSITION
            ),
        )
        if started.code:
            continue
        state = state_of(game, started.response.state.position)
        for number, raw in enumerate(script.lines, 1):
            side, _sep, text = raw.removeprefix("! ").partition(" ")
            request = engine_pb2.ApplyActionsRequest(
                state=state, actions=[game_pb2.Action(side=side, notation=text)], view=POSITION
            )
            applied = vectors.engine.call("ApplyActions", request)
            if (
                not applied.code
                and applied.response != vectors.engine.call("ApplyActions", request).response
            ):
                break  # a sealed deployment: the rest of the script is not reproducible
            vector = f"{label}/{number:03d}/ApplyActions"
            vectors.add(game, vector, "ApplyActions", request, applied)
            if not applied.code:
                state = state_of(game, applied.response.state.position)


def book_cases(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """Napoleonic Chess's worked example and its 47 required cases (spec 13, data in
    napoleonic_chess_scenarios.json): the case's set-up as NewGame, then each of its
    protocol actions as one atomic ApplyActions of its small actions; a refusal ends the
    case, as it ends the case in the book."""
    if info.id != "napoleonic":
        return
    from engine_service.rules.errors import RuleError
    from engine_service.rules.game import Game, Resign
    from tests.engine_service.rules.napoleonic.helpers import (
        RULESET,
        all_cases,
        case_options,
        case_state,
        setup_text_of,
        small_actions,
    )

    game = info.id
    for case in all_cases():
        label = f"book/{case['id']}"
        request = engine_pb2.NewGameRequest(
            game=game,
            options=case_options(case),
            setup=setup_text_of(case["position"]),
            view=POSITION,
        )
        started = vectors.add(game, f"{label}/NewGame", "NewGame", request)
        if started.code:
            continue
        state = state_of(game, started.response.state.position)
        local = Game(RULESET, case_state(case))
        for index, entry in enumerate(case["actions"]):
            side = entry["player"]
            if entry["action"] == "surrender":
                actions = [game_pb2.Action(side=side, resign=game_pb2.Resign())]
                steps: list[tuple[str, Any]] = [(side, Resign(side))]
            else:
                steps = [(side, small) for small in small_actions(local.state, entry)]
                actions, probe = [], local
                for _side, small in steps:  # each written in the state it is played in
                    actions.append(game_pb2.Action(side=side, notation=probe.format(small)))
                    # Where the book's batch is refused, the later actions are written as
                    # they stand.
                    with contextlib.suppress(RuleError):
                        probe, _ = probe.apply(side, small)
            request_apply = engine_pb2.ApplyActionsRequest(
                state=state, actions=actions, view=POSITION
            )
            applied = vectors.add(
                game, f"{label}/{index:02d}/ApplyActions", "ApplyActions", request_apply
            )
            if applied.code:
                break
            state = state_of(game, applied.response.state.position)
            local, _ = local.apply_all(steps)


def book_examples(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """The worked examples of the game's book (tests/engine_service/rules/<game>/book.py):
    the position as NewGame (full view) with its legal actions, then each variation line
    by line: an action played (ApplyActions, then the legal actions after it), an action
    refused (ApplyActions and ValidateAction), or the legal actions from a cell. Stops with
    an error when the engine does not accept or refuse what the book says."""
    from tests.engine_service.rules.book import book_of, read_line

    book = book_of(info.id)
    if book is None:
        return
    game = info.id
    for name, example in book.EXAMPLES.items():
        label = f"book/{name}"
        started = vectors.add(
            game,
            f"{label}/NewGame",
            "NewGame",
            engine_pb2.NewGameRequest(game=game, options=example.options, setup=example.setup),
        )
        if started.code:
            raise RuntimeError(f"{game} {label}: the position is refused: {started.reason}")
        start = state_of(game, started.response.state.position)

        def listing(at: str, state: game_pb2.GameState, cell: str = "") -> None:
            request = engine_pb2.ListLegalActionsRequest(state=state, cell=cell)
            vectors.add(game, f"{at}/ListLegalActions", "ListLegalActions", request)

        listing(label, start)
        for cell in example.cells:
            listing(f"{label}/cell={cell}", start, cell)
        for variation, lines in example.variations.items():
            state = start
            for number, raw in enumerate(lines, 1):
                line, at = read_line(raw), f"{label}/{variation}/{number:02d}"
                if line.kind == "list":
                    listing(at, state, line.text)
                    continue
                action = game_pb2.Action(side=line.side, notation=line.text)
                applied = vectors.add(
                    game,
                    f"{at}/ApplyActions",
                    "ApplyActions",
                    engine_pb2.ApplyActionsRequest(state=state, actions=[action], view=POSITION),
                )
                verdict = "refuse" if applied.code else "play"
                if (verdict, applied.reason) != (line.kind, line.reason):
                    said = applied.reason or "accepted"
                    raise RuntimeError(f"{game} {at}: the book says {raw!r}, the engine {said}")
                if applied.code:
                    vectors.add(
                        game,
                        f"{at}/ValidateAction",
                        "ValidateAction",
                        engine_pb2.ValidateActionRequest(state=state, action=action),
                    )
                    continue
                state = state_of(game, applied.response.state.position)
                listing(at, state)


def reasons(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """Every ErrorReason the engine gives for this game: the rule reasons of
    tests/engine_service/test_service_reasons.py (ApplyActions refuses, ValidateAction
    answers as data) and the service's own."""
    from tests.engine_service.test_service_reasons import RULE_CASES

    game = info.id
    engine = vectors.engine
    for case in RULE_CASES:
        if case.game != game:
            continue
        label = f"reasons/{case.reason}"
        started = engine.call(
            "NewGame",
            engine_pb2.NewGameRequest(
                game=game, options=case.options, setup=case.setup, view=POSITION
            ),
        )
        state = state_of(game, started.response.state.position)
        for side, text in case.prelude:
            after = engine.call(
                "ApplyActions",
                engine_pb2.ApplyActionsRequest(
                    state=state, actions=[game_pb2.Action(side=side, notation=text)], view=POSITION
                ),
            )
            state = state_of(game, after.response.state.position)
        action = game_pb2.Action(side=case.side, notation=case.action)
        vectors.add(
            game,
            f"{label}/ApplyActions",
            "ApplyActions",
            engine_pb2.ApplyActionsRequest(state=state, actions=[action], view=POSITION),
        )
        vectors.add(
            game,
            f"{label}/ValidateAction",
            "ValidateAction",
            engine_pb2.ValidateActionRequest(state=state, action=action),
        )
    start = engine.call("NewGame", engine_pb2.NewGameRequest(game=game, view=POSITION)).response
    state = state_of(game, start.state.position)
    side = start.state.to_act[0]
    service = [
        ("UNKNOWN_GAME", "NewGame", engine_pb2.NewGameRequest(game=f"{game}_unknown")),
        ("MISSING_FIELD", "NewGame", engine_pb2.NewGameRequest()),
        ("MISSING_FIELD", "ListLegalActions", engine_pb2.ListLegalActionsRequest()),
        ("MISSING_FIELD", "ApplyActions", engine_pb2.ApplyActionsRequest(state=state)),
        ("INVALID_SETUP", "NewGame", engine_pb2.NewGameRequest(game=game, setup="@@@")),
        (
            "INVALID_STATE",
            "ListLegalActions",
            engine_pb2.ListLegalActionsRequest(state=state_of(game, "@@@")),
        ),
        ("INVALID_RECORD", "ReplayRecord", engine_pb2.ReplayRecordRequest(record="@@@")),
        (
            "NOTATION_INVALID",
            "ParseAction",
            engine_pb2.ParseActionRequest(state=state, text="@@@", side=side),
        ),
        (
            "NOTATION_INVALID",
            "ApplyActions",
            engine_pb2.ApplyActionsRequest(
                state=state, actions=[game_pb2.Action(side=side, notation="@@@")]
            ),
        ),
        (
            "ILLEGAL_ACTION",
            "ApplyActions",
            engine_pb2.ApplyActionsRequest(
                state=state, actions=[game_pb2.Action(side="nobody", notation="@@@")]
            ),
        ),
        (
            "GAME_OVER",
            "SuggestAction",
            engine_pb2.SuggestActionRequest(state=_resigned(engine, state, side)),
        ),
    ]
    for reason, given, prelude, (side, text) in _more_reasons().get(game, []):
        started = engine.call(
            "NewGame", engine_pb2.NewGameRequest(game=game, options=given, view=POSITION)
        )
        state = state_of(game, started.response.state.position)
        for before in prelude:
            after = engine.call(
                "ApplyActions",
                engine_pb2.ApplyActionsRequest(
                    state=state,
                    actions=[game_pb2.Action(side=before[0], notation=before[1])],
                    view=POSITION,
                ),
            )
            state = state_of(game, after.response.state.position)
        if side:
            vectors.add(
                game,
                f"reasons/{reason}/ApplyActions",
                "ApplyActions",
                engine_pb2.ApplyActionsRequest(
                    state=state, actions=[game_pb2.Action(side=side, notation=text)], view=POSITION
                ),
            )
        else:
            vectors.add(
                game,
                f"reasons/{reason}/ParseAction",
                "ParseAction",
                engine_pb2.ParseActionRequest(state=state, text=text),
            )
    for index, (reason, rpc, request) in enumerate(service):
        vectors.add(game, f"service/{index:02d}-{reason}/{rpc}", rpc, request)
    # ResolveBattle searches within a time budget, so only what needs no search is a vector:
    # a battle already decided (Napoleonic), or the refusal of another game's state.
    placed = engine.call("NewGame", engine_pb2.NewGameRequest(game=game, view=POSITION))
    decided = _resigned(
        engine, state_of(game, placed.response.state.position), placed.response.state.to_act[0]
    )
    vectors.add(
        game,
        "service/ResolveBattle-decided",
        "ResolveBattle",
        engine_pb2.ResolveBattleRequest(state=decided, view=POSITION),
    )
    vectors.add(game, "service/Ping", "Ping", engine_pb2.PingRequest(payload=game.encode()))


def _more_reasons() -> dict[str, list[tuple[str, dict[str, str], Played, tuple[str, str]]]]:
    """Reasons the rule cases of test_service_reasons.py give through other calls: per game
    (reason, options, prelude, (side, action)); no side means ParseAction without one."""
    from tests.engine_service.rules.napoleonic.golden import RED_ARRAY, RED_SALT

    dawn = {"scenario": "attack_at_dawn"}
    commit = f"commit {RED_ARRAY} salt {RED_SALT}"
    return {
        "napoleonic": [
            ("NOTATION_AMBIGUOUS", dawn, [], ("", "end")),  # both sides may act
            ("ALREADY_DEPLOYED", dawn, [("red", commit)], ("red", commit)),
        ],
    }


def _resigned(engine: Engine, state: game_pb2.GameState, side: str) -> game_pb2.GameState:
    after = engine.call(
        "ApplyActions",
        engine_pb2.ApplyActionsRequest(
            state=state,
            actions=[game_pb2.Action(side=side, resign=game_pb2.Resign())],
            view=POSITION,
        ),
    )
    return state_of(state.game, after.response.state.position)


def perft_counts(ruleset: Any, state: Any, depth: int) -> list[int]:
    """perft(1..depth): the number of sequences of that many legal actions from `state`."""
    counts = [0] * depth
    layer = [state]
    for level in range(depth):
        following = []
        for node in layer:
            actions = ruleset.legal_actions(node)
            counts[level] += len(actions)
            if level + 1 < depth:
                following += [ruleset.play(node, action) for action in actions]
        layer = following
    return counts


def perft(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """perft tables to depth 3 of the starts (defaults and presets) and of the positions in
    tests/engine_service/rules/<game>/perft.json."""
    game = info.id
    engine = vectors.engine
    starts: list[tuple[str, engine_pb2.NewGameRequest]] = [
        ("start", engine_pb2.NewGameRequest(game=game, view=POSITION))
    ]
    starts += [
        (f"preset={p.name}", engine_pb2.NewGameRequest(game=game, preset=p.name, view=POSITION))
        for p in info.presets
    ]
    listed = ROOT / "tests" / "engine_service" / "rules" / game / "perft.json"
    if listed.exists():
        for entry in json.loads(listed.read_text())["positions"]:
            starts.append(
                (
                    entry["name"],
                    engine_pb2.NewGameRequest(
                        game=game, options=entry["options"], setup=entry["setup"], view=POSITION
                    ),
                )
            )
    conversions = engine.servicer.conversions
    positions: dict[str, str] = {}  # position: its name, each position once
    for name, request in starts:
        positions.setdefault(engine.call("NewGame", request).response.state.position, name)
    turn = None if vectors.perft_turn is None else vectors.perft_turn % len(positions)
    for number, (position, name) in enumerate(positions.items()):
        depth = PERFT_DEPTH if turn in (None, number) else SAMPLED_PERFT_DEPTH
        state = state_of(game, position)
        played = conversions.game_from_proto(state)
        counts = perft_counts(played.ruleset, played.state, depth)
        vectors.keep(
            game,
            {
                "name": f"perft/{name}",
                "rpc": "perft",
                "request": {"state": canonical(state), "depth": depth},
                "response": {"counts": [str(count) for count in counts]},
            },
        )


# Rulings worth a vector of their own that the sections above do not reach by chance: per
# game, (label, NewGame options, the actions played, then the legal actions listed).
RULINGS: dict[str, list[tuple[str, dict[str, str], Played]]] = {
    "war": [
        # Section 11: every Troop of an initial position is unmoved, wherever it stands, so
        # the Van Troops a step forward of section 3.2's squares keep their double step.
        (
            "troops-of-an-initial-position-are-unmoved",
            {
                "initial_position": "mhc1gk1chm/1t1t1t1t1t/10/t1t1t1t1t1/10/10/T1T1T1T1T1/10/"
                "1T1T1T1T1T/MHC1GK1CHM S FF:ff"
            },
            [("south", "a4-a6"), ("north", "c7-c5"), ("south", "e4-e5"), ("north", "i7-i5")],
        ),
    ],
}


def rulings(vectors: Vectors, info: board_pb2.GameInfo) -> None:
    """The game's `RULINGS`: each action an ApplyActions vector, then the legal actions."""
    game = info.id
    for label, given, actions in RULINGS.get(game, []):
        started = vectors.add(
            game,
            f"rulings/{label}/NewGame",
            "NewGame",
            engine_pb2.NewGameRequest(game=game, options=given, view=POSITION),
        )
        state = state_of(game, started.response.state.position)
        for number, (side, text) in enumerate(actions, 1):
            request = engine_pb2.ApplyActionsRequest(
                state=state, actions=[game_pb2.Action(side=side, notation=text)], view=POSITION
            )
            applied = vectors.add(
                game, f"rulings/{label}/{number:03d}/ApplyActions", "ApplyActions", request
            )
            state = state_of(game, applied.response.state.position)
        vectors.add(
            game,
            f"rulings/{label}/ListLegalActions",
            "ListLegalActions",
            engine_pb2.ListLegalActionsRequest(state=state),
        )


SECTIONS = (
    catalogue,
    options,
    presets,
    random_games,
    worked_examples,
    book_cases,
    book_examples,
    rulings,
    reasons,
    perft,
)


def generate(
    only: Sequence[str] = (), perft_turn: int | None = None
) -> Mapping[str, dict[str, dict[str, Any]]]:
    """Every game's vectors by name (with a `perft_turn`, perft sampled: `Vectors`)."""
    vectors = Vectors(Engine(), perft_turn=perft_turn)
    listed = vectors.engine.call("ListGames", engine_pb2.ListGamesRequest()).response
    for info in listed.games:
        if only and info.id not in only:
            continue
        for section in SECTIONS:
            section(vectors, info)
    return vectors.cases


def file_name(name: str) -> str:
    """The file of a vector: its name with every run of other characters made one '-'."""
    return re.sub(r"[^A-Za-z0-9=_.]+", "-", name).strip("-") + ".json"


def text_of(case: Mapping[str, Any]) -> str:
    """A vector as stored: sorted keys, one-space indent, UTF-8 as it is."""
    return json.dumps(case, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def write(out: Path, cases: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, int]:
    """Replace each game's folder under `out` with its vectors; the count per game."""
    counts = {}
    for game, named in cases.items():
        folder = out / game
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        files: set[str] = set()
        for name, case in named.items():
            path = file_name(name)
            if path in files:
                raise ValueError(f"two vectors of {game} share the file {path}")
            files.add(path)
            (folder / path).write_text(text_of(case), encoding="utf-8")
        counts[game] = len(named)
    return counts


def tally(cases: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """The number of vectors per game and RPC, as lines."""
    lines = []
    for game, named in cases.items():
        per_rpc: dict[str, int] = {}
        for case in named.values():
            per_rpc[case["rpc"]] = per_rpc.get(case["rpc"], 0) + 1
        detail = ", ".join(f"{rpc} {count}" for rpc, count in sorted(per_rpc.items()))
        lines.append(f"{game}: {len(named)} vectors ({detail})")
    return "\n".join(lines)


def table(cases: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """The number of vectors per RPC (rows) and game (columns), as a Markdown table (the one
    in tests/conformance/README.md)."""
    games = list(cases)
    counts: dict[str, dict[str, int]] = {}
    for game, named in cases.items():
        for case in named.values():
            row = counts.setdefault(case["rpc"], {})
            row[game] = row.get(game, 0) + 1
    lines = ["| RPC | " + " | ".join(games) + " |", "|---|" + "---:|" * len(games)]
    for rpc in sorted(counts, key=lambda name: (name == "perft", name)):
        lines.append(f"| {rpc} | " + " | ".join(str(counts[rpc].get(g, 0)) for g in games) + " |")
    totals = " | ".join(f"**{len(cases[g])}**" for g in games)
    lines.append(f"| **all** | {totals} |")
    return "\n".join(lines)


def quiet() -> None:
    """Keep the engine's logs (one line per call) off the terminal; warnings still show."""
    configure_logging("console", "warning", sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the vectors and print their counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=OUT, help="where to write (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    quiet()
    cases = generate()
    write(args.out, cases)
    print(tally(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())

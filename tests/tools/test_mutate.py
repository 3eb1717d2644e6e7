"""`make mutate`'s own parts: scopes by folder, the narrowed mutmut settings, the report."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from tools.mutate import report, scopes
from tools.mutate.__main__ import ROOT, draw, generate, narrowed_pyproject, prepare
from tools.mutate.scopes import normalise, only_mutate, slug


def test_a_scope_is_tested_by_its_mirror_folder_and_the_suites_that_reach_it() -> None:
    assert scopes.tests_for("engine_service/rules/war", ROOT) == ["tests/engine_service/rules/war"]
    assert scopes.tests_for("matchmaker", ROOT) == ["tests/matchmaker"]
    # a file: the nearest mirror folder
    assert scopes.tests_for("matchmaker/scripts/__init__.py", ROOT) == ["tests/matchmaker"]
    convert = scopes.tests_for("engine_service/convert", ROOT)
    assert convert[0] == "tests/engine_service/convert"
    assert "tests/engine_service/test_service_properties.py" in convert


def test_scopes_are_folders_of_the_packages_and_nothing_else() -> None:
    assert normalise("engine_service/rules/", ROOT) == "engine_service/rules"
    assert normalise(str(ROOT / "matchmaker"), ROOT) == "matchmaker"
    for wrong in ("tests", "engine_service/no_such_folder", "README.md"):
        with pytest.raises(ValueError, match="is no folder or file"):
            normalise(wrong, ROOT)
    assert only_mutate("engine_service/rules/war", ROOT) == ["engine_service/rules/war/*"]
    assert only_mutate("matchmaker/queue.py", ROOT) == ["matchmaker/queue.py"]
    assert slug("engine_service/rules/war") == "engine_service.rules.war"


def test_the_scope_narrows_mutmuts_settings_and_keeps_the_rest() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    narrowed = tomllib.loads(narrowed_pyproject("engine_service/rules/battle"))
    settings = narrowed["tool"]["mutmut"]
    assert settings["source_paths"] == ["engine_service"]
    assert settings["only_mutate"] == ["engine_service/rules/battle/*"]
    assert settings["pytest_add_cli_args_test_selection"] == ["tests/engine_service/rules/battle"]
    assert settings["pytest_add_cli_args"] == project["tool"]["mutmut"]["pytest_add_cli_args"]
    assert narrowed["tool"]["pytest"] == project["tool"]["pytest"]
    assert narrowed["project"] == project["project"]


def test_only_narrows_a_scope_to_some_of_its_files_and_keeps_its_tests() -> None:
    only = ["engine_service/rules/record.py", "engine_service/rules/war"]
    settings = tomllib.loads(narrowed_pyproject("engine_service/rules", only))["tool"]["mutmut"]
    assert settings["only_mutate"] == [
        "engine_service/rules/record.py",
        "engine_service/rules/war/*",
    ]
    assert settings["pytest_add_cli_args_test_selection"] == ["tests/engine_service/rules"]
    assert scopes.within("engine_service/rules/war/legal.py", "engine_service/rules/war")
    assert not scopes.within("engine_service/rules/warfare.py", "engine_service/rules/war")


def test_tests_narrow_the_judges_for_a_quick_check() -> None:
    only = ["matchmaker/vault.py"]
    tests = ["tests/matchmaker/test_vault.py"]
    settings = tomllib.loads(narrowed_pyproject("matchmaker", only, tests))["tool"]["mutmut"]
    assert settings["only_mutate"] == only
    assert settings["pytest_add_cli_args_test_selection"] == tests


def _meta(work: Path, path: str, codes: dict[str, int | None]) -> None:
    meta = work / "mutants" / (path + ".meta")
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps({"exit_code_by_key": codes}), encoding="utf-8")


def test_the_report_counts_each_file_and_package_and_never_counts_equivalents_as_killed(
    tmp_path: Path,
) -> None:
    work = tmp_path / "mutate" / "work" / "engine_service.rules.war"
    _meta(
        work,
        "engine_service/rules/war/troops.py",
        {"m.x_a__mutmut_1": 1, "m.x_a__mutmut_2": 0, "m.x_a__mutmut_3": 36, "m.x_b__mutmut_1": 0},
    )
    _meta(work, "engine_service/rules/base.py", {"m.x_c__mutmut_1": 33, "m.x_c__mutmut_2": None})
    found = report.results(tmp_path, {"m.x_b__mutmut_1": "returns the same value"})
    troops = next(r for r in found if r.path.endswith("troops.py"))
    assert troops.counts() == {"killed": 1, "survived": 1, "timeout": 1, "equivalent": 1}
    text = report.table(found)
    row = next(line for line in text.splitlines() if line.startswith("engine_service/rules/war/"))
    assert row.split()[1:4] == ["1", "1", "1"] and row.endswith("66.7 %")
    packages = [line.split()[0] for line in text.splitlines() if line.startswith("[")]
    assert packages == ["[engine_service/rules]", "[engine_service/rules/war]"]
    rules = next(line for line in text.splitlines() if line.startswith("[engine_service/rules]"))
    # 2 of 4 judged: no tests counts, unchecked not (so this is a sample: its interval follows)
    assert rules.split()[-4:-2] == ["50.0", "%"]


def test_the_report_names_the_decorated_functions_mutmut_leaves_out(tmp_path: Path) -> None:
    source = """
class Service:
    @staticmethod
    def plain() -> int:
        return 1
    @classmethod
    def built(cls) -> int:
        return 1
    @unary("Get")
    async def Get(self) -> int:
        return 1
    @property
    def value(self) -> int:
        return 1
    @staticmethod
    @cache
    def both() -> int:
        return 1
    @abstractmethod
    def to_act(self) -> int:
        "Nothing to mutate."
def free() -> int:
    return 1
"""
    assert report.not_mutated(source) == ["Get", "value", "both"]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "service.py").write_text(source, encoding="utf-8")
    (tmp_path / "pkg" / "free.py").write_text("def free() -> None: ...\n", encoding="utf-8")
    found = [report.FileResult(p, tmp_path) for p in ("pkg/free.py", "pkg/service.py")]
    lines = report.unmutated(found, tmp_path).splitlines()
    assert lines[1].startswith("not mutated (decorated functions")
    assert lines[2:] == ["pkg/service.py: Get, value, both"]
    assert report.unmutated(found[:1], tmp_path) == ""


def test_redis_servers_left_in_a_scopes_folder_are_ended_and_no_others(tmp_path: Path) -> None:
    from tests.servers import start_redis
    from tools.mutate.__main__ import end_leftover_servers

    work = tmp_path / "work"
    ours = start_redis(work / "tmp" / "pytest-0" / "redis0")
    theirs = start_redis(tmp_path / "elsewhere")
    try:
        end_leftover_servers(work)
        assert ours.process.wait(10) is not None
        assert theirs.process.poll() is None
    finally:
        ours.stop()
        theirs.stop()


def test_unmutated_copies_are_forgotten_and_mutated_files_kept(tmp_path: Path) -> None:
    from tools.mutate.__main__ import forget_plain_copies

    source = tmp_path / "engine_service" / "rules"
    source.mkdir(parents=True)
    (source / "plain.py").write_text("x = 1\n", encoding="utf-8")
    (source / "mutated.py").write_text("x = 1\n", encoding="utf-8")
    copies = tmp_path / "mutants" / "engine_service" / "rules"
    copies.mkdir(parents=True)
    (copies / "plain.py").write_text("x = 1\n", encoding="utf-8")
    (copies / "mutated.py").write_text("x = 1  # with mutmut's trampolines\n", encoding="utf-8")
    forget_plain_copies(tmp_path)
    assert not (copies / "plain.py").exists() and (copies / "mutated.py").exists()


def test_copies_of_tests_tools_and_scripts_follow_the_source(tmp_path: Path) -> None:
    from tools.mutate.__main__ import COPIED, refresh_copies

    scripts = tmp_path / "matchmaker" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "notice.lua").write_text("-- today\n", encoding="utf-8")
    (scripts / "new.lua").write_text("-- new\n", encoding="utf-8")
    (tmp_path / "matchmaker" / "store.py").write_text("x = 1\n", encoding="utf-8")
    copies = tmp_path / "mutants" / "matchmaker"
    (copies / "scripts").mkdir(parents=True)
    (copies / "scripts" / "notice.lua").write_text("-- yesterday\n", encoding="utf-8")
    (copies / "store.py").write_text("x = 1  # with mutmut's trampolines\n", encoding="utf-8")
    (copies / "store.py.meta").write_text("{}", encoding="utf-8")
    for name in COPIED:
        (tmp_path / "mutants" / name).mkdir()
        (tmp_path / "mutants" / name / "old.py").write_text("", encoding="utf-8")
    refresh_copies(tmp_path)
    assert (copies / "scripts" / "notice.lua").read_text(encoding="utf-8") == "-- today\n"
    assert (copies / "scripts" / "new.lua").read_text(encoding="utf-8") == "-- new\n"
    # mutated files and their results are mutmut's own
    assert "trampolines" in (copies / "store.py").read_text(encoding="utf-8")
    assert (copies / "store.py.meta").exists()
    assert not any((tmp_path / "mutants" / name).exists() for name in COPIED)


def test_mutmut_copies_what_the_tool_links_and_refreshes() -> None:
    from tools.mutate.__main__ import COPIED, LINKED

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    # mutmut copies the tests itself, and the rest as `also_copy`.
    assert {"tests", *project["tool"]["mutmut"]["also_copy"]} == set(COPIED)
    assert set(COPIED) <= set(LINKED)


def test_the_test_map_is_gathered_again_when_other_files_are_mutated(tmp_path: Path) -> None:
    from tools.mutate.__main__ import prepare

    work = tmp_path / "work"
    stats = work / "mutants" / "mutmut-stats.json"
    prepare("engine_service/rules/war", work, True, ["engine_service/rules/war/legal.py"])
    stats.parent.mkdir(parents=True, exist_ok=True)
    stats.write_text("{}", encoding="utf-8")
    prepare("engine_service/rules/war", work, True, ["engine_service/rules/war/legal.py"])
    assert stats.exists()  # the same files: the map stands
    prepare("engine_service/rules/war", work, True, ["engine_service/rules/war/men.py"])
    assert not stats.exists()


def test_a_sample_is_drawn_from_the_scopes_own_mutants_the_same_for_one_seed(
    tmp_path: Path,
) -> None:
    scope = "engine_service/rules/war/pieces.py"
    work = tmp_path / "mutate" / "work" / slug(scope)
    prepare(scope, work, resume=False)
    generate(work, {**os.environ, "TMPDIR": str(work / "tmp")}, workers=1)
    # an earlier run's results for another file of the package are not drawn from
    _meta(work, "engine_service/rules/war/legal.py", {"legal.x_a__mutmut_1": 0})
    everything = draw(work, 10_000, seed=0)
    assert everything and all(
        name.startswith("engine_service.rules.war.pieces.") for name in everything
    )
    some = draw(work, 5, seed=0)
    assert len(some) == 5 and set(some) <= set(everything)
    assert draw(work, 5, seed=0) == some
    assert draw(work, 5, seed=1) != some


def test_a_sampled_kill_rate_has_its_95_percent_interval_and_a_full_one_none() -> None:
    from collections import Counter

    assert report.interval(Counter(killed=90, survived=10, unchecked=900)) == "83-94 %"
    assert report.interval(Counter(killed=20, unchecked=5)) == "84-100 %"
    assert report.interval(Counter(killed=90, survived=10)) == ""
    assert report.interval(Counter(unchecked=3)) == ""


def test_a_function_filter_keeps_the_mutants_of_the_functions_named(tmp_path: Path) -> None:
    from tools.mutate.__main__ import function_of

    assert function_of("engine_service.service.xǁRulesEngineǁ_seconds__mutmut_3") == "_seconds"
    assert function_of("engine_service.service.x_search_wall_cap__mutmut_12") == "search_wall_cap"
    scope = "engine_service/rules/war/pieces.py"
    work = tmp_path / "mutate" / "work" / slug(scope)
    prepare(scope, work, resume=False)
    generate(work, {**os.environ, "TMPDIR": str(work / "tmp")}, workers=1)
    everything = draw(work, 0, seed=0)
    one = function_of(everything[0])
    chosen = draw(work, 0, seed=0, functions=[one])
    assert chosen and len(chosen) < len(everything)
    assert all(function_of(name) == one for name in chosen)


LUA = """-- a comment: a < b and not c, 1 + 2
local s = "x < 1 or y"  -- "quoted"
local n = -tonumber(ARGV[1])
if n <= 10 and not redis.call("GET", KEYS[1]) then
  return math.min(n - 1, 2)
end
"""


def test_a_lua_mutant_changes_one_token_of_code_never_comments_strings_or_a_sign() -> None:
    from tools.mutate import lua

    mutants = list(lua.mutants_of("x", LUA))
    changes = {(m.line, m.original, m.replacement) for m in mutants}
    assert changes == {
        (3, "1", "2"),  # ARGV[1]; the unary minus before tonumber has no `+` twin in Lua
        (4, "<=", "<"),
        (4, "10", "11"),
        (4, "and", "or"),
        (4, "not", ""),
        (4, "1", "2"),
        (5, "math.min", "math.max"),
        (5, "-", "+"),
        (5, "1", "2"),
        (5, "2", "3"),
    }
    for mutant in mutants:
        changed = mutant.apply(LUA)
        assert changed != LUA and changed.splitlines()[:2] == LUA.splitlines()[:2]
        before, after = mutant.describe(LUA).splitlines()
        assert before == "-" + LUA.splitlines()[mutant.line - 1] and after.startswith("+")
    assert len({m.name for m in mutants}) == len(mutants)


def test_a_lua_result_follows_its_mutant_when_an_edit_above_moves_it() -> None:
    """Lines added above a mutant rename it (line:column): its result goes with it; the
    result of a mutant whose line itself changed is dropped, and other scripts' are kept."""
    from tools.mutate import lua

    before = {m.original: m for m in lua.mutants_of("x", LUA)}["<="]
    results = {
        before.name: {"outcome": "survived", "change": before.describe(LUA)},
        "matchmaker.scripts.y.lua:1:1": {"outcome": "killed", "change": "-a\n+b"},
    }
    edited = "-- a new first line\n" + LUA
    moved = {m.original: m for m in lua.mutants_of("x", edited)}["<="]
    assert (moved.line, moved.column) == (before.line + 1, before.column)
    every = {"x": list(lua.mutants_of("x", edited))}
    assert lua.carried(results, every, {"x": edited}) == {
        moved.name: results[before.name],
        "matchmaker.scripts.y.lua:1:1": results["matchmaker.scripts.y.lua:1:1"],
    }
    rewritten = edited.replace("<=", "<= 0 +")  # the mutant's own line changed
    every = {"x": list(lua.mutants_of("x", rewritten))}
    assert before.name not in lua.carried(results, every, {"x": rewritten})
    assert not any(
        result["change"] == results[before.name]["change"]
        for result in lua.carried(results, every, {"x": rewritten}).values()
    )


def test_every_script_has_lua_mutants_and_tests_to_judge_them() -> None:
    from tools.mutate import lua

    for script in lua.SCRIPTS.glob("*.lua"):
        assert script.stem in scopes.LUA_TESTS, f"{script.name} has no tests in LUA_TESTS"
        assert list(lua.mutants_of(script.stem, script.read_text("utf-8")))
    assert all((ROOT / t).is_file() for tests in scopes.LUA_TESTS.values() for t in tests)
    assert lua.is_lua("matchmaker/scripts") and lua.is_lua("matchmaker/scripts/limit.lua")
    assert not lua.is_lua("matchmaker/scripts/__init__.py") and not lua.is_lua("matchmaker")


def test_the_lua_switch_loads_the_mutated_text_for_its_script_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matchmaker import scripts
    from tools.mutate import lua_switch

    monkeypatch.setattr(scripts, "source", scripts.source)  # put back afterwards
    mutated = tmp_path / "limit.lua"
    mutated.write_text("return {0, 1}\n", encoding="utf-8")
    monkeypatch.setenv(lua_switch.VARIABLE, f"limit={mutated}")
    lua_switch.pytest_configure(None)  # type: ignore[arg-type]
    assert scripts.source("limit") == "return {0, 1}\n"
    assert "HMGET" in scripts.source("load")  # the others unchanged
    monkeypatch.setenv(lua_switch.VARIABLE, f"nothing={mutated}")
    with pytest.raises(pytest.UsageError):
        lua_switch.pytest_configure(None)  # type: ignore[arg-type]


def test_a_lua_kill_rate_has_its_wilson_interval() -> None:
    from tools.mutate import lua

    low, high = lua.wilson(90, 100)
    assert (round(100 * low), round(100 * high)) == (83, 94)
    assert lua.wilson(0, 0) == (0.0, 1.0)


def test_what_a_forked_process_runs_counts_for_each_test_it_runs_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While mutmut gathers stats, the functions a fork runs (its trampolines' records) come
    back to the test's process at each test's teardown: once per test, however often run."""
    from mutmut.state import state

    from tools.mutate import forked

    monkeypatch.setenv("MUTANT_UNDER_TEST", forked.STATS)
    monkeypatch.setattr(state(), "_stats", set())
    forked.pytest_configure(None)  # type: ignore[arg-type]
    orders, order = os.pipe()
    done, answer = os.pipe()
    pid = os.fork()
    if not pid:  # a fork that lives across tests, as a pool process does
        code = 1
        try:
            os.close(order)
            with os.fdopen(orders) as names:
                for name in names:
                    state()._stats.add(name.strip())
                    os.write(answer, b".")
            code = 0
        finally:
            os._exit(code)
    os.close(orders)

    def run_in_fork(*names: str) -> None:
        for name in names:
            os.write(order, f"{name}\n".encode())
            assert os.read(done, 1) == b"."

    try:
        run_in_fork("m.x_a", "m.x_b", "m.x_a")
        forked.pytest_runtest_teardown(None)  # type: ignore[arg-type]
        assert state()._stats == {"m.x_a", "m.x_b"}
        state()._stats.clear()  # filed under the test by mutmut
        run_in_fork("m.x_a")  # the next test runs it again: it counts for that one too
        forked.pytest_runtest_teardown(None)  # type: ignore[arg-type]
        assert state()._stats == {"m.x_a"}
    finally:
        os.close(order)
        assert os.waitpid(pid, 0)[1] == 0
        forked.pytest_unconfigure(None)  # type: ignore[arg-type]
    # Outside mutmut's stats (or after them) a fork records in itself alone, as mutmut does.
    monkeypatch.setenv("MUTANT_UNDER_TEST", "")
    forked.pytest_configure(None)  # type: ignore[arg-type]
    assert forked._channel is None

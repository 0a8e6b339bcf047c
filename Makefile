# dbgauge: the two commands are `make demo` and `make test` (run as root on Debian).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Where the demo's sandbox lives: SANDBOX_DIR if given (remembered for make down and the next
# make demo), else where this clone's last demo put it, else .sandbox when the servers' OS
# users can reach it, else /var/tmp/dbgauge-sandbox-HASH (`dbgauge sandbox where`).
SANDBOX_DIR ?=
WHERE = $(BIN)/dbgauge sandbox where $(if $(SANDBOX_DIR),--dir '$(SANDBOX_DIR)')
# The demo exporter's address: the sandbox config's daemon.listen (127.0.0.1:9860) unless given.
LISTEN ?=
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# pytest-xdist workers for `make test`, each with a sandbox of its own (tests/helpers/ports.py):
# the tests mostly wait on servers, so three overlap well on two cores.
TEST_WORKERS ?= 3
# Bytecode written before the tests, whatever PYTHONDONTWRITEBYTECODE says: the suite starts
# ~900 dbgauge processes, and each would otherwise compile its modules again (0.2 s CPU).
COMPILE = $(BIN)/python -m compileall -q dbgauge toolkit checks collectors tests >/dev/null

# `make test-matrix PG=N`: every integration test file that reaches a PostgreSQL member (or
# PgBouncer, or pgTAP), with the sandbox's PostgreSQL on major N (13-18); the matrix
# battery (test_matrix_pg*.py, run by `make test` on its own sandboxes) is left out.
PG ?= 15
PG_TESTS = $(filter-out tests/integration/test_matrix_%,$(shell grep -l -E \
  'pg-primary|pg-standby|pg-subscriber|pgbouncer|pgtap|postgres' tests/integration/test_*.py))

.PHONY: help deps venv lint unit integration test test-matrix demo demo-stop down bench docs clean

help:
	@echo "make demo   install what is missing, start the sandbox and the exporter"
	@echo "make test   install what is missing, run linters and every test"
	@echo "make test-matrix PG=N  the PostgreSQL integration tests on PostgreSQL N (13-18)"
	@echo "make bench  compare with the peers: exporters, pt-table-checksum, pg_prove"
	@echo "make down   stop the demo exporter and the sandbox"

deps:
	$(SUDO) ./deploy/install-deps

$(VENV)/.stamp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

venv: $(VENV)/.stamp

lint: venv
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

unit: venv
	$(BIN)/pytest -q tests/unit

integration: venv
	$(BIN)/pytest -q tests/integration

test: deps venv lint
	@$(BIN)/python -c "from tests.helpers.ports import BASE_PORT as b, SANDBOX_DIR as d; \
	print(f'test sandboxes: base port {b} (+10 per worker), {d}* (from this checkout path; DBGAUGE_TEST_BASE_PORT moves them)')"
	@$(COMPILE)
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25

test-matrix: deps venv
	@$(COMPILE)
	DBGAUGE_TEST_PG_VERSION=$(PG) $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile $(PG_TESTS)

docs: venv
	$(BIN)/dbgauge collectors --readme README.md --compat-docs docs/compat.md
	$(BIN)/dbgauge check --docs docs/checks.md

demo: deps venv
	@dir=$$($(WHERE)) || exit 1; \
	$(BIN)/dbgauge sandbox up --dir "$$dir" || exit 1; \
	listen="$(LISTEN)"; [ -n "$$listen" ] || listen=$$(sed -n 's/^  listen: //p' "$$dir/dbgauge.yaml"); \
	if [ -f "$$dir/serve.pid" ] && kill -0 $$(cat "$$dir/serve.pid") 2>/dev/null; then \
	  echo "exporter already running (pid $$(cat "$$dir/serve.pid"))"; \
	else \
	  nohup $(BIN)/dbgauge serve --config "$$dir/dbgauge.yaml" --listen "$$listen" \
	    >"$$dir/serve.log" 2>&1 & echo $$! > "$$dir/serve.pid"; \
	fi; \
	for i in $$(seq 1 50); do curl -fsS http://$$listen/healthz >/dev/null 2>&1 && break; sleep 0.2; done; \
	curl -fsS http://$$listen/healthz >/dev/null || { echo "exporter did not start; see $$dir/serve.log"; tail -5 "$$dir/serve.log"; exit 1; }; \
	echo; \
	echo "dbgauge is running:"; \
	echo "  status    http://$$listen/               (the topology; or: $(BIN)/dbgauge status --config $$dir/dbgauge.yaml)"; \
	echo "  metrics   http://$$listen/metrics        (every sandbox target)"; \
	echo "  one       http://$$listen/probe?target=pg-primary"; \
	echo "  sandbox   $$dir"; \
	echo "  config    $$dir/dbgauge.yaml"; \
	echo "  log       $$dir/serve.log"; \
	echo "  stop      make down"

demo-stop:
	@if [ -x $(BIN)/dbgauge ]; then dir=$$($(WHERE) --existing) || exit 1; \
	  if [ -f "$$dir/serve.pid" ]; then kill $$(cat "$$dir/serve.pid") 2>/dev/null && echo "stopped: the exporter (pid $$(cat "$$dir/serve.pid"))"; rm -f "$$dir/serve.pid"; fi; fi

down: demo-stop
	@if [ -x $(BIN)/dbgauge ]; then dir=$$($(WHERE) --existing) || exit 1; \
	  echo "sandbox: $$dir"; $(BIN)/dbgauge sandbox down --dir "$$dir"; fi

bench: deps venv
	@dir=$$($(WHERE)) || exit 1; set -e; \
	$(BIN)/dbgauge sandbox up --dir "$$dir"; \
	for b in scrape compat mysql_collectors postgres_collectors checksum checksum_peers pgtap/run; do \
	  $(BIN)/python bench/$$b.py --sandbox-dir "$$dir"; done; \
	$(BIN)/python bench/stalled.py

clean: down
	rm -rf $(VENV) dist build .mypy_cache .ruff_cache .pytest_cache

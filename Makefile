# dbgauge: the two commands are `make demo` and `make test` (run as root on Debian).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SANDBOX_DIR ?= .sandbox
LISTEN ?= 127.0.0.1:9860
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# pytest-xdist workers for `make test`, each with a sandbox of its own (tests/helpers/ports.py):
# the tests mostly wait on servers, so three overlap well on two cores.
TEST_WORKERS ?= 3

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
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile

test-matrix: deps venv
	DBGAUGE_TEST_PG_VERSION=$(PG) $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile $(PG_TESTS)

docs: venv
	$(BIN)/dbgauge collectors --readme README.md --compat-docs docs/compat.md
	$(BIN)/dbgauge check --docs docs/checks.md

demo: deps venv
	$(BIN)/dbgauge sandbox up --dir $(SANDBOX_DIR)
	@if [ -f $(SANDBOX_DIR)/serve.pid ] && kill -0 $$(cat $(SANDBOX_DIR)/serve.pid) 2>/dev/null; then \
	  echo "exporter already running (pid $$(cat $(SANDBOX_DIR)/serve.pid))"; \
	else \
	  nohup $(BIN)/dbgauge serve --config $(SANDBOX_DIR)/dbgauge.yaml --listen $(LISTEN) \
	    >$(SANDBOX_DIR)/serve.log 2>&1 & echo $$! > $(SANDBOX_DIR)/serve.pid; \
	fi
	@for i in $$(seq 1 50); do curl -fsS http://$(LISTEN)/healthz >/dev/null 2>&1 && break; sleep 0.2; done
	@curl -fsS http://$(LISTEN)/healthz >/dev/null || { echo "exporter did not start; see $(SANDBOX_DIR)/serve.log"; tail -5 $(SANDBOX_DIR)/serve.log; exit 1; }
	@echo
	@echo "dbgauge is running:"
	@echo "  status    http://$(LISTEN)/               (the topology; or: $(BIN)/dbgauge status --config $(SANDBOX_DIR)/dbgauge.yaml)"
	@echo "  metrics   http://$(LISTEN)/metrics        (every sandbox target)"
	@echo "  one       http://$(LISTEN)/probe?target=pg-primary"
	@echo "  config    $(SANDBOX_DIR)/dbgauge.yaml"
	@echo "  log       $(SANDBOX_DIR)/serve.log"
	@echo "  stop      make down"

demo-stop:
	@if [ -f $(SANDBOX_DIR)/serve.pid ]; then kill $$(cat $(SANDBOX_DIR)/serve.pid) 2>/dev/null || true; rm -f $(SANDBOX_DIR)/serve.pid; fi

down: demo-stop
	@if [ -x $(BIN)/dbgauge ]; then $(BIN)/dbgauge sandbox down --dir $(SANDBOX_DIR); fi

bench: deps venv
	$(BIN)/dbgauge sandbox up --dir $(SANDBOX_DIR)
	$(BIN)/python bench/scrape.py --sandbox-dir $(SANDBOX_DIR)
	$(BIN)/python bench/compat.py --sandbox-dir $(SANDBOX_DIR)
	$(BIN)/python bench/mysql_collectors.py --sandbox-dir $(SANDBOX_DIR)
	$(BIN)/python bench/postgres_collectors.py --sandbox-dir $(SANDBOX_DIR)
	$(BIN)/python bench/checksum.py --sandbox-dir $(SANDBOX_DIR)
	$(BIN)/python bench/checksum_peers.py --sandbox-dir $(SANDBOX_DIR)
	$(BIN)/python bench/pgtap/run.py --sandbox-dir $(SANDBOX_DIR)
	$(BIN)/python bench/stalled.py

clean: down
	rm -rf $(VENV) dist build .mypy_cache .ruff_cache .pytest_cache

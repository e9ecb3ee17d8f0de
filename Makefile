# The two set-up commands (see README): `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_VAULT ?= demo-vault

.PHONY: demo test install install-test editors stress bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q -e .

install-test: $(BIN)/python
	$(BIN)/pip install -q -e ".[test,bench]"
	@# Azurite (Azure Blob emulator) for tests/test_team_azure.py, where npm is at hand
	if command -v npm >/dev/null && [ ! -x .cache/azurite/node_modules/.bin/azurite-blob ]; then \
	  npm install -s --no-audit --no-fund --prefix .cache/azurite azurite@3; fi

## demo: install and run the main job end to end on a local vault (./demo-vault)
demo: install
	$(BIN)/mem --vault $(DEMO_VAULT) demo

## editors: install what the real-editor tests need (Chromium, Node 24, code-server, the .vsix)
editors:
	bash .ci/install-editors.sh

## test: install test extras and the editors, then run the whole suite
test: install-test editors
	$(BIN)/python -m pytest -q

## stress: the long crash, concurrency and housekeeping runs (~15 min on 2 cores; sizes:
## POIMEN_STRESS_TRIALS, _WRITERS, _PER_WRITER, _WRITES); prints the figures
stress: install-test
	POIMEN_STRESS=1 $(BIN)/python -m pytest -q -s -p no:cacheprovider tests/stress

## bench: benchmarks (quick profile; `make bench ARGS=--full` for the large sizes)
bench: install-test
	$(BIN)/python bench/run.py $(ARGS)

clean:
	rm -rf $(DEMO_VAULT) .pytest_cache

# `make demo` and `make test` each set up .venv and then do their job: the demo installs what it needs (the core,
# the bm25s baseline and the report's plots: `.[bm25,report]`), the tests everything else (`.[dev]`, which
# includes `.[all]`). Each install runs again when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
NEW_VENV = test -x $(BIN)/python || { $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet --upgrade pip; }

.PHONY: demo test lint install clean bench

$(DEMO_STAMP): pyproject.toml
	$(NEW_VENV)
	$(BIN)/python -m pip install --quiet -e '.[bm25,report]'
	touch $(DEMO_STAMP)

# `.[dev]` brings everything the demo needs too.
$(STAMP): pyproject.toml
	$(NEW_VENV)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEMO_STAMP)

install: $(STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/trecbench demo

# Byte code is kept even where the environment turns it off: the suite starts hundreds of trecbench processes, and
# each would compile every module it imports again. It goes where Python puts it (src/ and tests/ get __pycache__,
# which git ignores): with a PYTHONPYCACHEPREFIX, the byte code pip compiled for the installed packages would be
# ignored and the first run would compile litellm and the rest again (200.7 s instead of ~145 s).
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/eval_speed.py

clean:
	rm -rf $(VENV) build src/*.egg-info

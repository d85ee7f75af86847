# `make demo` and `make test` each set up .venv (once) and then do their job.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint install clean bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/trecbench demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/eval_speed.py

clean:
	rm -rf $(VENV) build src/*.egg-info

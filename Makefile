# One Makefile for people and CI. `make serve` and `make test` install what they need.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.installed

.PHONY: install serve test lint typecheck check bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/hermes-desk serve --with-backend

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests demo_backend scripts
	$(VENV)/bin/ruff format --check src tests demo_backend scripts

typecheck: $(STAMP)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: $(STAMP)
	$(VENV)/bin/ruff check src tests demo_backend scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

check: lint typecheck test

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

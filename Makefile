# One Makefile for people and CI. `make serve` and `make test` install what they need.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.installed
# axe-core for the console's accessibility test, pinned, from npm into a folder of its own.
AXE_VERSION := 4.14.1
AXE_DIR     := .tools/axe
AXE_STAMP   := $(AXE_DIR)/.axe-core-$(AXE_VERSION)

.PHONY: install serve test lint typecheck check bench load clean axe

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[all,dev,load]'
	touch $(STAMP)

install: $(STAMP)

$(AXE_STAMP):
	@command -v npm >/dev/null || { echo "npm is needed for the accessibility test: apt-get install npm"; exit 1; }
	mkdir -p $(AXE_DIR)
	npm install --no-save --no-audit --no-fund --no-package-lock --prefix $(AXE_DIR) axe-core@$(AXE_VERSION)
	touch $(AXE_STAMP)

axe: $(AXE_STAMP)

serve: $(STAMP)
	$(VENV)/bin/hermes-desk serve --with-backend

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests demo_backend scripts
	$(VENV)/bin/ruff format --check src tests demo_backend scripts

typecheck: $(STAMP)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: $(STAMP) $(AXE_STAMP)
	$(VENV)/bin/ruff check src tests demo_backend scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

check: lint typecheck test

# A contact center's load on one worker (embedded defaults): LOAD_ARGS='--workers 3 --stores shared'
load: $(STAMP)
	$(VENV)/bin/hermes-desk bench load $(LOAD_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .tools test-artifacts

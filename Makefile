# Every target bootstraps .venv from pyproject.toml when it is missing or stale.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up test check types imports bench eval lint docs teams-package clean

# A 3.12+ interpreter: $(PYTHON) if given, else the first python3.1x on PATH, else pyenv's.
$(STAMP): pyproject.toml scripts/bootstrap.sh
	@bash scripts/bootstrap.sh "$(VENV)" "$(PYTHON)"

up: $(STAMP)
	$(BIN)/r42 up

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

# The architecture and type checks on their own (`make test` runs them too).
check: imports types

imports: $(STAMP)
	$(BIN)/lint-imports

types: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

eval: $(STAMP)
	$(BIN)/r42 eval

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

docs: $(STAMP)
	$(BIN)/python -m shared.bus.asyncapi --out docs/asyncapi.yaml
	$(BIN)/python -m scripts.render_blocks --out docs/img

# The Teams app package for sideloading (TEAMS_APP_ID = the bot's Microsoft app id).
teams-package: $(STAMP)
	$(BIN)/python deploy/teams/package.py dist/r42-teams.zip

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache

# Every target bootstraps .venv from pyproject.toml when it is missing or stale.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up test bench eval lint docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

up: $(STAMP)
	$(BIN)/r42 up

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

eval: $(STAMP)
	$(BIN)/r42 eval

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

docs: $(STAMP)
	$(BIN)/python -m shared.bus.asyncapi --out docs/asyncapi.yaml

clean:
	rm -rf $(VENV) .pytest_cache

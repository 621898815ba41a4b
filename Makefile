# argweb developer entry points. `make run` = set up + main job; `make test` = set up + test suite.
SHELL := /bin/bash
PY := .venv/bin/python

.PHONY: setup run test lint typecheck bench stop clean

setup:
	@bash scripts/setup.sh

run: setup
	$(PY) -m api.cli run

test: setup
	$(PY) -m pytest -q

lint: setup
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy && .venv/bin/lint-imports

bench: setup
	$(PY) -m bench.all

stop:
	-$(PY) -m api.cli serve --stop
	-$(PY) -m api.cli db stop

clean: stop
	rm -rf .argweb graphstore/java/target

# argweb developer entry points.
#   make run    set up, then the main job (load, predict, SPARQL store, API in the background)
#   make test   set up, then the whole test suite (what CI runs, .ci/run)
#   make check  lint, types and the unit tier (no Neo4j, no trained models; under two minutes)
SHELL := /bin/bash
PY := .venv/bin/python
# The unit tier: every test that carries none of these markers (tests/conftest.py applies them).
UNIT := not (slow or model or integration or drill or corpora)

.PHONY: setup run test check unit lint bench stop clean

setup:
	@bash scripts/setup.sh

run: setup
	@$(PY) -m api.cli run

test: setup
	$(PY) -m pytest -q --durations=15

check: lint unit

unit: setup
	$(PY) -m pytest -q -m "$(UNIT)" --durations=5

lint: setup
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy && .venv/bin/lint-imports

# The main job first (the API and explorer benchmarks read its graph), then every benchmark, then
# docs/bench.md from bench/results.json, also when a goal was missed (the exit status says so).
bench: run
	$(PY) -m bench.all; status=$$?; $(PY) -m bench.report; exit $$status

stop:
	-$(PY) -m api.cli serve --stop
	-$(PY) -m api.cli db stop

clean: stop
	rm -rf .argweb graphstore/java/target

# Set-up is part of every target: a fresh machine needs only Python 3.11+.
PYTHON ?= python3
# `make test` runs the suite in TEST_WORKERS pytest-xdist processes (each its own local Spark);
# tests sharing a module/session fixture go to one worker (tests/conftest.py's scheduler)
TEST_WORKERS ?= 2
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv demo test test-unit bench bench-stateless clean

# bytecode of the (editable) headrace package, kept current: a machine with PYTHONDONTWRITEBYTECODE
# set would compile it from source in every process (`headrace process` of three documents
# 4.4 -> 4.1 s; benchmarks/PROFILE.md)
venv: $(STAMP)
	@$(BIN)/python -m compileall -q -j 0 headrace > /dev/null

$(STAMP): pyproject.toml scripts/ensure_java.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	bash scripts/ensure_java.sh $(BIN)/pip
	$(BIN)/python -m headrace.spark.cds_build
	touch $(STAMP)

demo: venv
	$(BIN)/headrace demo

test: venv
	bash scripts/ensure_servers.sh
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --no-loadscope-reorder --durations=15

test-unit: venv
	$(BIN)/python -m pytest -q tests/unit

bench: venv
	$(BIN)/python benchmarks/run.py

bench-stateless: venv
	$(BIN)/python benchmarks/stateless_bench.py

clean:
	rm -rf $(VENV) .headrace build *.egg-info

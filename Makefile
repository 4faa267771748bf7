# One command per job. `make run` and `make test` set everything up on a fresh machine:
# they create .venv and install the project when pyproject.toml changed, not otherwise.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format typecheck check bench package clean mcp-inspector

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/engram tray || { echo "(showing the terminal demo instead)"; $(BIN)/engram demo; }

test: $(STAMP) mcp-inspector
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

# The MCP Inspector CLI, an independent client for tests/integration/test_mcp_stdio.py:
# installed once per package-lock.json; without npm (or offline) that test is skipped.
INSPECTOR := tests/integration/mcp_inspector
$(INSPECTOR)/node_modules/.installed: $(INSPECTOR)/package-lock.json
	@if command -v npm >/dev/null 2>&1 && npm ci --prefix $(INSPECTOR) --no-audit --no-fund \
		--loglevel=error; then touch $@; else echo "(no MCP Inspector: its test is skipped)"; fi

mcp-inspector: $(INSPECTOR)/node_modules/.installed

lint: $(STAMP)
	$(BIN)/ruff check app ui services tests bench
	$(BIN)/ruff format --check app ui services tests bench

format: $(STAMP)
	$(BIN)/ruff format app ui services tests bench
	$(BIN)/ruff check --fix app ui services tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck test

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# A one-folder app in dist/engram (PyInstaller), then a check that the built binary runs.
package: $(STAMP)
	$(BIN)/python -m pip install --quiet 'pyinstaller>=6.10'
	$(BIN)/pyinstaller --noconfirm --clean --log-level WARN --distpath dist \
		--workpath build/pyinstaller packaging/engram.spec
	dist/engram/engram --version
	rm -rf build/package-check
	dist/engram/engram --data-dir build/package-check add --json \
		"The bundle embeds its model; we checked it yesterday." > /dev/null
	dist/engram/engram --data-dir build/package-check search "does the bundle embed" --json \
		| grep -q '"title": "The bundle embeds its model'
	dist/engram/engram --data-dir build/package-check recall --no-llm --json \
		"When did we check the bundle?" | grep -q '"date": "'

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

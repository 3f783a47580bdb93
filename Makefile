# Set-up and everyday commands. `make run` and `make test` each build .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# mypy resolves foldscope.* through a link named foldscope to the project's root (the root is the package).
TYPEPATH := $(VENV)/typecheck

.PHONY: run install test check bench soak mutate screenshots clean
# `make run FILE=path/to/session.jsonl` opens that file (the bundled demo session when FILE is not given).
FILE ?=
# Handed to the recipe through the environment, so a name with spaces or quotes stays one argument.
export FILE
# `make install` links the command here: the scripts folder of the user's Python (~/.local/bin on Linux).
USER_BIN ?= $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_path('scripts', f'{__import__(\"os\").name}_user'))")

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Says where the command is and how to have it by name, then starts the window; with no display, one line on how to
# look without one (app/display.py) instead of Qt's abort.
run: $(STAMP)
	@echo "foldscope is $(CURDIR)/$(BIN)/foldscope: \`make install\` puts it on your PATH as foldscope, or run it by that path."
	@if $(BIN)/python -m foldscope.app.display $${FILE:+"$$FILE"}; then $(BIN)/foldscope $${FILE:+"$$FILE"}; fi

# Like pipx: the command stays in its own .venv, and only a link to it goes in the user's scripts folder.
install: $(STAMP)
	mkdir -p "$(USER_BIN)"
	ln -sfn "$(CURDIR)/$(BIN)/foldscope" "$(USER_BIN)/foldscope"
	@case ":$$PATH:" in *":$(USER_BIN):"*) echo "foldscope is on your PATH: try foldscope --help";; \
	  *) echo "$(USER_BIN) is not on your PATH: add  export PATH=\"$(USER_BIN):\$$PATH\"  to ~/.profile (or ~/.bashrc), then open a new shell";; esac

# Lint, format, import contracts, types (the core and the app), a few files' --json outputs against tools/golden/,
# and the core's tests with Qt blocked: the habits CI holds.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	mkdir -p $(TYPEPATH) && ln -sfn "$(CURDIR)" $(TYPEPATH)/foldscope
	MYPYPATH=$(TYPEPATH) $(BIN)/mypy -p foldscope.core -p foldscope.app
	$(BIN)/python tools/json_outputs.py --check
	FOLDSCOPE_BLOCK_QT=1 $(BIN)/python -m pytest -p no:pytest-qt -W ignore::pytest.PytestConfigWarning -q tests/core

# check has run tests/core (with Qt blocked); the rest of the suite runs once here.
test: check
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest --ignore=tests/core

# The random action sequences (tests/core/actions/test_action_sequences.py) at length: hypothesis profile soak.
soak: $(STAMP)
	FOLDSCOPE_HYPOTHESIS=soak QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q tests/core/actions/test_action_sequences.py

# One listed rule change at a time over the fold core, its tests run on each: the kill rate and the survivors
# (tools/mutate.py; slow, so never part of `make test`; docs/testing.md records the last rate).
mutate: $(STAMP)
	$(BIN)/python tools/mutate.py

# The README's screenshots and every side tab at 1366x768 and 1600x1000 (docs/screenshots/tabs/) from the code as it
# is (needs ../shared for the real sessions they show), each with a library of its own.
screenshots: $(STAMP)
	for f in docs/screenshots/make_*.py; do QT_QPA_PLATFORM=offscreen $(BIN)/python $$f || exit 1; done
	QT_QPA_PLATFORM=offscreen $(BIN)/foldscope --screenshot docs/screenshots/cost.png --tab cost --db "$$(mktemp -d)/library.db" \
	  ../shared/corpus/dev/claude_code/session-196820da.jsonl

bench: $(STAMP)
	for f in bench/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info

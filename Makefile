# Both targets set up .venv on their own; a fresh clone needs only `make serve` or `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 5006
STAMP  := $(VENV)/.installed

.PHONY: serve test test-fast browser node system-packages lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# torch 2.13.0 is the CPU wheel on local disk; install it first so the extra resolves to it.
	$(PY) -m pip install -q 'torch==2.13.0' || echo "torch unavailable: the kernel lab will say so"
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/attention-explorable serve --port $(PORT)

# Browser tests drive Debian's chromium-headless-shell (Lighthouse and the benchmarks its
# chromium); install them when missing (needs root, as in CI).
browser:
	@{ command -v chromium && command -v chromium-headless-shell; } >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium and chromium-headless-shell for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq chromium chromium-headless-shell >/dev/null; }

# The scale-out test runs Debian's nginx in front of two app processes (tests/test_nginx.py);
# install it when it is missing (needs root, as in CI). The test starts its own nginx.
system-packages: browser node
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
	  echo "installing Debian's nginx for the scale-out test"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null; }

# lint runs first: a style or line-length error fails `make test` before the suite starts.
# The suite runs in two passes, both always (a failure in the first does not hide the second):
# everything not marked `serial` on JOBS pytest-xdist workers (each worker starts its own
# server and browser; the static site is built once, under a lock), then the `serial` tests,
# which time something, alone. 8-10 minutes on CI's 2 cores (README).
JOBS ?= 2
# the serial pass collects only the files that mark a test serial (tests/conftest.py refuses
# a serial mark given any other way): collecting the whole suite took a sixth of that pass;
# `=`, so the grep runs only for a target that uses it
SERIAL_FILES = $(shell grep -rl --include='test_*.py' 'mark.serial' tests)
test: $(STAMP) lint system-packages
	$(VENV)/bin/attention-explorable numbers
	@status=0; \
	$(PY) -m pytest -q -n $(JOBS) --dist loadgroup -m "not serial" || status=1; \
	$(PY) -m pytest -q -m serial $(SERIAL_FILES) || status=1; \
	exit $$status

# the edit-test loop: the core, the units and the component tests (no browser, no server,
# no install) in the same two passes, in about a minute
FAST_SKIP := --ignore=tests/browser --ignore=tests/test_install.py --ignore=tests/test_nginx.py \
	--ignore=tests/test_hosting.py --ignore=tests/test_panel_internals.py \
	--ignore=tests/test_lecture_hall.py --ignore=tests/test_serve.py --ignore=tests/test_build.py \
	--ignore=tests/test_hostile_input.py
test-fast: $(STAMP)
	@status=0; \
	$(PY) -m pytest -q -x -n $(JOBS) -m "not serial" $(FAST_SKIP) || status=1; \
	$(PY) -m pytest -q -x -m serial $(FAST_SKIP) || status=1; \
	exit $$status

# ruff's rules plus line length (E501; 100 columns, pyproject.toml's [tool.ruff]), then ESLint
# over static/ (eslint.config.mjs), installed from npm into node_modules/ as package-lock.json
# pins it (every package, ESLint's own dependencies too)
# npm ci also installs axe-core, which the browser tests put into pages (tests/browser/axe_core.py)
ESLINT := node_modules/.bin/eslint
lint: $(STAMP) $(ESLINT)
	$(VENV)/bin/ruff check --extend-select E501 .
	$(ESLINT) static tests/js

$(ESLINT): package.json package-lock.json | node
	npm ci --silent --no-audit --no-fund
	touch $(ESLINT)

# Debian's nodejs (node and npm): ESLint, and the JavaScript twins' tests run static/'s
# scripts in node (tests/test_cost_model_js.py, test_stills_js.py, ...); installed when
# missing (needs root, as in CI)
node:
	@{ command -v node && command -v npm; } >/dev/null 2>&1 || { \
	  echo "installing Debian's nodejs and npm for ESLint and the JavaScript tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq nodejs npm >/dev/null; }

bench: $(STAMP)
	$(PY) benchmarks/core.py

clean:
	rm -rf $(VENV) .pytest_cache

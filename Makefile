# Both targets set up .venv on their own; a fresh clone needs only `make serve` or `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 5006
STAMP  := $(VENV)/.installed

.PHONY: serve test browser lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# torch 2.13.0 is the CPU wheel on local disk; install it first so the extra resolves to it.
	$(PY) -m pip install -q 'torch==2.13.0' || echo "torch unavailable: the kernel lab will say so"
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/attention-explorable serve --port $(PORT)

# Browser tests drive Debian's chromium; install it when it is missing (needs root, as in CI).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

test: $(STAMP) browser
	$(VENV)/bin/attention-explorable numbers
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	$(PY) benchmarks/core.py

clean:
	rm -rf $(VENV) .pytest_cache

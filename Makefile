# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# Four test processes on the two cores of the machine (and CI): the browser and worker tests spend much of their
# time waiting (emulated latency, a page's polling, a Celery worker starting), and two processes left the cores
# idle a third of the run. Measured one after the other on 2026-11-26 (docs/benchmarks.md, "Test suite"):
# -n 2 424 s, -n 3 351 s, -n 4 296 s, -n 6 365 s. worksteal: a
# process that runs out of tests takes half of what another has left, so none waits idle at the end
# (tests/conftest.py starts the long ones).
PYTEST_ARGS ?= -n 4 --dist worksteal --durations=15
# This machine's environment sets PYTHONDONTWRITEBYTECODE=1: every pytest process (each pytest-xdist worker),
# and every Celery worker, manage.py and script a test starts, compiled the project from source, and pytest
# rewrote the asserts of its plugins' modules (schemathesis alone has 242) anew: collecting the suite took
# 22 s of CPU, 9 s with the bytecode kept. Kept under var/ (ignored by git), not beside the sources nor in
# the virtualenv. docs/benchmarks.md, "Test suite (issue 23)".
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/var/pycache

.PHONY: run test test-schema-deep install migrate demo chromium bench clean

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

install: $(VENV)/.installed

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py load_demo

# Install, migrate, load the demo project, then serve: web server, Celery worker
# and the offline baseline LLM server together, until Ctrl-C.
run: demo
	$(PY) manage.py devserver --port $(PORT)

# Debian's Chromium for the browser tests (Playwright cannot download browsers here).
chromium:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi; }

# The import contracts first (.importlinter: layers, no feature imports another's views, pure rules):
# seconds, and a broken rule is named before the suite runs.
test: install chromium
	$(VENV)/bin/lint-imports
	$(TEST_ENV) $(PY) -m pytest $(PYTEST_ARGS)

# The schema tests' deeper run: schemathesis's coverage phase and 100 generated requests an operation
# (tests/test_api_schemathesis.py); `make test` sends a few requests an operation.
test-schema-deep: install
	SCHEMATHESIS_DEEP=1 $(TEST_ENV) $(PY) -m pytest $(PYTEST_ARGS) tests/test_api_schemathesis.py

bench: install
	$(PY) bench/run_all.py $(BENCH)

clean:
	rm -rf $(VENV) var db.sqlite3*

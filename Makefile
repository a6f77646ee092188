# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# Two test processes: the machine (and CI) has two cores.
PYTEST_ARGS ?= -n 2 --durations=15

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
	$(PY) -m pytest $(PYTEST_ARGS)

# The schema tests' deeper run: schemathesis's coverage phase and 100 generated requests an operation
# (tests/test_api_schemathesis.py); `make test` sends a few requests an operation.
test-schema-deep: install
	SCHEMATHESIS_DEEP=1 $(PY) -m pytest $(PYTEST_ARGS) tests/test_api_schemathesis.py

bench: install
	$(PY) bench/run_all.py $(BENCH)

clean:
	rm -rf $(VENV) var db.sqlite3*

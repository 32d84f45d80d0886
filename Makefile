# The two commands: `make run` and `make test`. Everything else is set-up they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint ci clean bench prod-smoke

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	DJANGO_DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DJANGO_DEBUG=1 GROUNDING_DEMO_PASSWORD=$${GROUNDING_DEMO_PASSWORD:-demo-only-password} $(BIN)/python manage.py seed_demo
	DJANGO_DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:8000

test: install
	$(BIN)/pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) db.sqlite3 test-artifacts

# Benchmarks (PostgreSQL only; not part of `make test`). Writes bench/results.json.
bench: install
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test} $(BIN)/python -m bench.run

# The production topology on loopback, from Debian's programs (apt-installs what is
# missing): PostgreSQL primary + streaming replica, PgBouncer (transaction mode), two
# gunicorn servers, nginx with TLS; runs the checks and stops it all (README "Operating
# the topology"). A few minutes at most; PROD_SMOKE_KEEP=1 keeps the scratch logs.
prod-smoke: install
	$(BIN)/python -m tests.prod_smoke

# Cauldron tasks. PYTHON can point at another interpreter: make test PYTHON=.venv/bin/python
PYTHON ?= python

.PHONY: install demo test lint bench baselines docs

install:
	$(PYTHON) -m pip install --quiet -e ".[dev]"

demo: install
	$(PYTHON) -m eval.demo --players 4 --seed 0

test: install
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

bench: install
	$(PYTHON) -m pip install --quiet -e ".[bench]"
	$(PYTHON) -m eval.bench --all-players

baselines: install
	$(PYTHON) -m eval.baselines --env hocus_pocus_v0 --players 2 4 6 --games 2000 --update-rules
	$(PYTHON) -m eval.baselines --env hexenflug_v0 --players 2 4 --games 2000 --update-rules
	$(PYTHON) -m eval.baselines --env headless_horseman_v0 --players 2 3 4 --games 2000 --update-rules
	$(PYTHON) -m eval.baselines --env voodoo_mania_v0 --players 2 4 --games 2000 --update-rules

docs:
	$(PYTHON) -m envs.hocus_pocus.docs
	$(PYTHON) -m envs.hexenflug.docs
	$(PYTHON) -m envs.headless_horseman.docs
	$(PYTHON) -m envs.voodoo_mania.docs

# Cauldron tasks. PYTHON can point at another interpreter: make test PYTHON=.venv/bin/python
PYTHON ?= python

.PHONY: install quickstart demo test lint bench results rules-tables docs

# torch first: the CPU build on this disk; a plain "torch" requirement pulls a CUDA build.
install:
	$(PYTHON) -m pip install --quiet torch==2.13.0
	$(PYTHON) -m pip install --quiet -e ".[dev,train]"

quickstart: install
	$(PYTHON) -m train configs/train/quickstart.yaml

demo: install
	$(PYTHON) -m eval.demo --players 4 --seed 0

# Two worker processes (pytest-xdist), one test file each at a time: about 11 minutes on 2 cores.
test: install
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest -n 2 --dist loadfile

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

bench: install
	$(PYTHON) -m pip install --quiet -e ".[bench]"
	$(PYTHON) -m eval.bench --all-players
	$(PYTHON) -m train.bench

# Evaluate every baseline of every game (configs/eval), write docs/results/ and RULES.md tables.
# make results EVAL_FLAGS=--quick: 200 games per row, rougher figures (the reports say so).
# (configs/eval/*_zsc.yaml are python -m eval.zsc's protocol configs, not baselines.)
results: install
	for config in $(filter-out %_zsc.yaml,$(wildcard configs/eval/*.yaml)); do \
		$(PYTHON) -m eval $$config --out docs/results --update-rules $(EVAL_FLAGS) || exit 1; \
	done

# Rewrite the generated tables (actions, observation, state, options) of every RULES.md.
rules-tables:
	$(PYTHON) -m envs.docs

# The documentation site (mkdocs.yml, docs/) into site/; a broken link or reference fails it.
docs:
	@$(PYTHON) -c "import mkdocs" 2>/dev/null \
		|| { echo 'make docs needs the docs extra: pip install -e ".[docs]"'; exit 1; }
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict --site-dir site

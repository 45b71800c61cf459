# Cauldron tasks. PYTHON can point at another interpreter: make test PYTHON=.venv/bin/python
PYTHON ?= python

.PHONY: install browser quickstart demo test lint bench results methods methods-4p rules-tables docs

# What was installed for which interpreter, redone when pyproject.toml changes.
STAMP = runs/.installed-$(subst /,_,$(PYTHON))

# torch first: the CPU build on this disk; a plain "torch" requirement pulls a CUDA build.
install: $(STAMP)-train
$(STAMP)-train: pyproject.toml
	$(PYTHON) -m pip install --quiet torch==2.13.0
	$(PYTHON) -m pip install --quiet -e ".[dev,train]"
	@mkdir -p runs && touch $@

# The browser tests drive Debian's Chromium with Playwright (never "playwright install"): the
# package is installed where apt-get may run (as root), else the tests skip and say how.
browser: $(STAMP)-browser
	command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
		|| echo "warning: no chromium (apt-get install chromium): the browser tests will skip"
$(STAMP)-browser: pyproject.toml
	$(PYTHON) -m pip install --quiet -e ".[browser]"
	@mkdir -p runs && touch $@

quickstart: install
	$(PYTHON) -m cauldron train configs/train/quickstart.yaml

demo: install
	$(PYTHON) -m cauldron demo --players 4 --seed 0

# Two worker processes (pytest-xdist), one test file each at a time, the browser tests included.
test: install browser
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest -n 2 --dist loadfile

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

bench: install
	$(PYTHON) -m pip install --quiet -e ".[bench]"
	$(PYTHON) -m cauldron bench --all-players
	$(PYTHON) -m cauldron train-bench

# Every published figure, from the shipped checkpoints on the test split: each game's baseline
# report (docs/results/<game>/, and RULES.md's baselines table) and the README's training table
# (configs/results/benchmark.yaml's rows into docs/results/test/<row>/). The protocol configs
# (configs/eval/*_zsc*.yaml) are cauldron zsc's, not baselines.
# make results QUICK=1: 200 games per lineup and 500 per row into runs/results-quick, for a fast
# look; nothing published changes.
RESULTS_OUT = $(if $(QUICK),--quick --out runs/results-quick,--out docs/results --update-rules)
results: install
	for config in configs/eval/*.yaml; do \
		case $$config in *_zsc*) continue ;; esac; \
		$(PYTHON) -m cauldron eval $$config --split test $(RESULTS_OUT) --quiet || exit 1; \
	done
	$(PYTHON) -m cauldron figures --play $(if $(QUICK),--quick,--readme README.md)

# The README's training-methods table (Hocus Pocus, 2 players), from each row's games in
# docs/results/hocus_pocus_2p_methods/<row>/results.json.xz: a row without them plays its three
# shipped policies (checkpoints/methods/) on the test split, or, where they are not all shipped,
# trains its seeds first (resuming a stopped one, reusing finished ones; hours: see
# configs/eval/hocus_pocus_2p_methods/ppo.yaml). Delete a row's results.json.xz to play it again.
# A row's policies are shipped as methods/hocus_pocus_2p_<row>_seed<k> (cauldron ship).
M = docs/results/hocus_pocus_2p_methods
METHOD_ROWS = ppo scratch recurrent belief other_play partners
METHODS = PPO=$(M)/ppo "from scratch=$(M)/scratch" recurrent=$(M)/recurrent \
	"+ belief=$(M)/belief" "+ Other-Play=$(M)/other_play" "partner population=$(M)/partners"
SHIPPED_SEEDS = $(wildcard checkpoints/methods/hocus_pocus_2p_$*_seed[0-2].pt)
$(M)/%/results.json.xz: | install
	$(PYTHON) -m cauldron zsc configs/eval/hocus_pocus_2p_methods/$*.yaml \
		$(if $(word 3,$(SHIPPED_SEEDS)),--checkpoints $(SHIPPED_SEEDS))
methods: install $(METHOD_ROWS:%=$(M)/%/results.json.xz)
	$(PYTHON) -m cauldron methods $(METHODS) --out $(M) --readme README.md

# The README's 4-player cross-play comparison (Hocus Pocus): the partner method beside its
# self-play peer, as a network and as a residual on the planner, on the same test deals, from each
# row's games in docs/results/hocus_pocus_zsc_4p_<row>/results.json.xz; a row without them plays
# its three shipped policies (configs/eval/hocus_pocus_zsc_4p_<row>.yaml: 40,000 deals a
# composition, about 55 minutes a network row, 40 a residual one;
# make -j2 methods-4p plays two at once).
X4 = docs/results/hocus_pocus_zsc_4p
X4_ROWS = cooldown partners residual partners_residual partners_residual_op
$(X4)_%/results.json.xz: | install
	$(PYTHON) -m cauldron zsc configs/eval/hocus_pocus_zsc_4p_$*.yaml
methods-4p: install $(X4_ROWS:%=$(X4)_%/results.json.xz)
	$(PYTHON) -m cauldron methods "self-play PPO=$(X4)_cooldown" \
		"partner population=$(X4)_partners" "self-play residual=$(X4)_residual" \
		"partner residual=$(X4)_partners_residual" \
		"partner residual + Other-Play=$(X4)_partners_residual_op" \
		--out docs/results/hocus_pocus_4p_methods --readme README.md --block methods_4p

# Rewrite the generated tables (actions, observation, state, options) of every RULES.md.
rules-tables:
	$(PYTHON) -m cauldron rules-tables

# The documentation site (mkdocs.yml, docs/) into site/; a broken link or reference fails it.
docs:
	@$(PYTHON) -c "import mkdocs" 2>/dev/null \
		|| { echo 'make docs needs the docs extra: pip install -e ".[docs]"'; exit 1; }
	NO_MKDOCS_2_WARNING=1 $(PYTHON) -m mkdocs build --strict --site-dir site

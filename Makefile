# tablebase: `make all` builds every ruleset of rulesets.toml into data/, `make test` tests.
# Both create the virtual environment .venv/ and install what they need first: `make all`
# the project alone (`make install`), `make test` the tests' packages, Spark and the browser
# test's driver besides (`make dev`).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= data
RULESETS ?= rulesets.toml
# What `make all` last built from $(RULESETS), in the data folder's bookkeeping folder.
BUILT := $(DATA)/.cache/make-all
SOURCES := $(shell find pipeline -name '*.py' -o -name '*.sql') pyproject.toml

.PHONY: all test lint format docs bench claims dist clean install dev publish-deps java chromium duckdb-wasm pages-shots enumerate solve verify export build big billion dobutsu
.DELETE_ON_ERROR:

all: $(BUILT) $(DATA)/pages/index.html

# The light install: the project and what its commands need (DuckDB, pyarrow, NumPy, Typer),
# and the example game plug-in.
install: $(VENV)/.installed

# Everything the tests need besides: the data, test, publish and serve extras, Spark, playwright for
# the pages' browser test, DuckDB 1.1.3 and cffconvert.
dev: $(VENV)/.installed-dev

# What `tablebase publish` writes the bundle's metadata with (the publish extra).
publish-deps: $(VENV)/.installed-publish

# setuptools' note on every editable install ("Please be careful with folders in your working
# directory…"), a box of asterisks printed twice, says nothing about this project.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

$(VENV)/.installed: pyproject.toml examples/takeaway/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(EDITABLE) $(BIN)/pip install --quiet -e .
	# the example game plug-in, found through its entry point: rulesets.toml names two of its
	# rulesets (make all), tests/test_plugins.py tries it
	$(EDITABLE) $(BIN)/pip install --quiet --no-deps -e examples/takeaway
	touch $@

# DuckDB 1.1.3 beside the venv's own, for tests/test_readers.py: data/tablebases.duckdb must open
# with the oldest DuckDB its storage format promises (PYTHONPATH=$(VENV)/duckdb-1.1).
# cffconvert, CITATION.cff's own validator, in a virtual environment of its own: it requires
# jsonschema < 4, which frictionless (the test and publish extras) rules out. tests/test_bundle_metadata.py
# runs $(VENV)/cffconvert/bin/cffconvert --validate on a published bundle.
$(VENV)/.installed-dev: $(VENV)/.installed
	$(EDITABLE) $(BIN)/pip install --quiet -e '.[data,test,publish,browser,spark,docs,serve]'
	$(BIN)/pip install --quiet --upgrade --no-warn-conflicts --target $(VENV)/duckdb-1.1 duckdb==1.1.3
	$(PYTHON) -m venv $(VENV)/cffconvert
	$(VENV)/cffconvert/bin/pip install --quiet cffconvert==2.0.0
	touch $@

$(VENV)/.installed-publish: $(VENV)/.installed
	$(EDITABLE) $(BIN)/pip install --quiet -e '.[publish]'
	touch $@

# Every ruleset is rebuilt when the ruleset file or the pipeline's code changes. The target is a
# stamp of `make all`'s own, not the catalog, which any build by hand writes too (the quick
# start's): after one, `make all` would have found nothing to do.
$(BUILT): $(VENV)/.installed $(RULESETS) $(SOURCES)
	$(BIN)/python -m compileall -q pipeline examples/takeaway
	$(BIN)/tablebase build --all --rulesets $(RULESETS) --data $(DATA)
	@mkdir -p $(@D) && touch $@

$(DATA)/catalog.parquet: $(BUILT)

# Pictures: state graphs, strategies and HTML pages of the rulesets small enough to look at,
# drawn again when the pages' templates, style or script change (no build needed for that).
$(DATA)/pages/index.html: $(BUILT) $(DATA)/catalog.parquet $(RULESETS) $(wildcard pipeline/products/templates/*)
	$(BIN)/tablebase draw --all --rulesets $(RULESETS) --data $(DATA)

# Two workers, a test file each (a worker's one Spark session serves every test it runs).
# The package's bytecode is compiled first (only what changed): where PYTHONDONTWRITEBYTECODE
# is set, each Python process the suite starts compiled it again, about 0.2 s of CPU each.
# The 30 slowest tests are listed at the end: where the suite's 10 minutes go.
test: $(VENV)/.installed-dev java chromium duckdb-wasm
	$(BIN)/python -m compileall -q pipeline examples/takeaway
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=30

# The checks CI runs before the tests: ruff's lint and its formatting (checked, not applied),
# mypy over pipeline/ and the import layers ([tool.ruff], [tool.mypy], [tool.importlinter] in
# pyproject.toml). Each runs even when one before it fails, so one run lists everything.
LINTED := pipeline tests benchmarks examples queries docs/hooks
lint: $(VENV)/.installed-dev
	@status=0; \
	$(BIN)/ruff check $(LINTED) || status=1; \
	$(BIN)/ruff format --check $(LINTED) || status=1; \
	$(BIN)/mypy || status=1; \
	$(BIN)/lint-imports --no-logo || status=1; \
	exit $$status

# The documentation site (mkdocs.yml, docs/) into site/, as CI's test builds it: --strict fails on
# any warning (a broken link, a page outside the nav, a docstring mkdocstrings cannot read).
# The command line's, the dataset's, the queries' and the games' reference pages are written
# from the code as it builds (docs/hooks/generated.py). NO_MKDOCS_2_WARNING quiets Material's
# notice of its end of life, printed on every build. `.venv/bin/mkdocs serve` shows it live.
docs: $(VENV)/.installed-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# Applies what `make lint` asks for that a tool can do alone: ruff's safe fixes (import order,
# newer syntax) and its formatting.
format: $(VENV)/.installed-dev
	$(BIN)/ruff check --fix --quiet $(LINTED) || true
	$(BIN)/ruff format $(LINTED)

# Java for the spark engine (tests/test_engines.py), through the package manager when missing.
java:
	@command -v java >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
	  && echo "installing Java 17 for the spark engine (apt-get install openjdk-17-jre-headless)" \
	  && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; } \
	  || { echo "make: the spark engine and its tests need Java 17 or newer: install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless)"; exit 1; }

# Chromium for the pages' browser test (tests/test_pages.py), through the package manager when
# missing; without it that test is skipped, saying why.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
	  && echo "installing Chromium for the pages' browser test (apt-get install chromium)" \
	  && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
	  || echo "make: the pages' browser test needs Chromium: install it (Debian/Ubuntu: apt-get install chromium); it is skipped until then"

# DuckDB-WASM for the explorer a bundle carries (`tablebase publish --explorer`), into
# .venv/duckdb-wasm/ (TABLEBASE_DUCKDB_WASM names another folder): npm installs the versions
# pinned by vendor/duckdb-wasm/package-lock.json (no install scripts run), and esbuild bundles
# DuckDB-WASM's browser module with Apache Arrow, which it imports by a bare name a browser
# cannot resolve, into one duckdb.mjs. Beside it the worker and the wasm of the build with
# WebAssembly exceptions (every current browser has them), 35 MB, and a NOTICE of their versions
# and licences.
# Not in the Python package: the light install stays light. Without npm, the static explorer's
# test is skipped, saying why.
WASM := $(VENV)/duckdb-wasm
WASM_DIST := $(WASM)/npm/node_modules/@duckdb/duckdb-wasm
duckdb-wasm:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(WASM)/.installed; \
	  else echo "make: the static explorer needs npm to vendor DuckDB-WASM: install it (Debian/Ubuntu: apt-get install npm); its test is skipped until then"; fi

$(WASM)/.installed: vendor/duckdb-wasm/package.json vendor/duckdb-wasm/package-lock.json
	rm -rf $(WASM) && mkdir -p $(WASM)/npm
	cp vendor/duckdb-wasm/package.json vendor/duckdb-wasm/package-lock.json $(WASM)/npm/
	cd $(WASM)/npm && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	cd $(WASM)/npm && echo "export * from '@duckdb/duckdb-wasm';" \
	  | node_modules/.bin/esbuild --bundle --format=esm --minify --log-level=warning --outfile=../duckdb.mjs
	cp $(WASM_DIST)/dist/duckdb-browser-eh.worker.js $(WASM_DIST)/dist/duckdb-eh.wasm $(WASM)/
	cd $(WASM)/npm && node -p "const p = require('./node_modules/@duckdb/duckdb-wasm/package.json'); \
	  [p.name + ' ' + p.version + ', ' + p.license + ' licence, ' + p.repository.url, 'with Apache Arrow (Apache-2.0), bundled into duckdb.mjs'].join('\\n')" > ../NOTICE
	rm -rf $(WASM)/npm
	touch $@

# Screenshots of each game's start page for the README, by headless Chromium, into docs/shots/.
SHOTS := docs/shots
SHOT_PAGES := chopsticks/split-any sticks/default nim/variant-coin hackenbush/default octal/default tictactoe/default
pages-shots: $(DATA)/pages/index.html chromium
	@mkdir -p $(SHOTS)
	@for page in $(SHOT_PAGES); do \
	  test -f $(DATA)/pages/$$page/index.html || { echo "make: no page $(DATA)/pages/$$page: build it (make all)"; exit 1; }; \
	  $$(command -v chromium || command -v chromium-browser) --headless --no-sandbox --disable-gpu --hide-scrollbars \
	    --window-size=1400,1000 --screenshot=$(SHOTS)/$${page%%/*}.png \
	    "file://$(abspath $(DATA))/pages/$$page/index.html" >/dev/null 2>&1 || exit 1; \
	  echo "wrote $(SHOTS)/$${page%%/*}.png"; \
	done

# The seeds' claims and tables, checked against the built tablebases, as Markdown.
claims: $(DATA)/claims.md

$(DATA)/claims.md: $(DATA)/catalog.parquet $(wildcard queries/*.sql)
	$(BIN)/tablebase claims --data $(DATA) --out $@

# What goes on a download page: the dataset folder, zip archives and SHA256SUMS, in dist/.
# URL=… says where it goes (the metadata's address; default the project's Homepage).
dist: $(DATA)/catalog.parquet $(DATA)/pages/index.html $(DATA)/claims.md $(VENV)/.installed-publish
	$(BIN)/tablebase publish --data $(DATA) --out dist $(if $(URL),--url '$(URL)')

# Connect-Four's boards of 10^7 to 10^8 positions (rulesets-big.toml) into data/, beside the
# others: a few minutes each (BENCHMARKS.md).
big: $(VENV)/.installed
	$(BIN)/tablebase build --all --rulesets rulesets-big.toml --data $(DATA)

# connect:cols=5,rows=6, a billion positions, into data/: out of core on 2 cores, about a
# quarter of an hour and the index's sort besides, 6-7 GiB of memory, 22 GB of disk at the peak
# (export sorting the index) and 12 GB kept (BENCHMARKS.md). The estimate asks for 9.0 GiB of
# memory and 22.3 GiB of disk, sized by its likely counts (its bound is 2.6 times the real
# count). With less memory or disk free, it is refused before any work.
billion: $(VENV)/.installed
	$(BIN)/tablebase build connect:cols=5,rows=6 --data $(DATA)

# Dōbutsu shōgi, the full game, into data/: 493,573,042 positions and 1,877,149,535 moves, the
# second player wins (BENCHMARKS.md has its time, memory and disk on 2 cores).
dobutsu: $(VENV)/.installed
	$(BIN)/tablebase build dobutsu --data $(DATA)

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run.py

# One stage for one ruleset: make solve RULESET=chopsticks:split=any
enumerate solve verify export build: $(VENV)/.installed
	@test -n "$(RULESET)" || { echo "usage: make $@ RULESET=<ruleset id>" >&2; exit 2; }
	$(BIN)/tablebase $@ '$(RULESET)' --data $(DATA)

clean:
	rm -rf $(DATA)

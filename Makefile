# StyleCrowd — `make demo` runs the platform on embedded defaults; `make test` runs the whole suite.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MANAGE := $(BIN)/python manage.py
SHARED ?= ../shared/data
DEMO_ENV := DJANGO_SETTINGS_MODULE=config.settings.local DATABASE_URL= CELERY_BROKER_URL=
TEST_ENV := DJANGO_SETTINGS_MODULE=config.settings.test
PROD_ENV := DJANGO_SETTINGS_MODULE=config.settings.production

.PHONY: gettext messages venv demo serve-demo demo-data demo-rewrites test test-fast lint bench browsers nginx clean collectstatic serve requirements

# Direct dependencies are declared in pyproject.toml (groups: models, test, dev); constraints.txt pins every package.
# PyICU (core/languages.py) builds against ICU: Debian's libicu-dev and pkg-config.
$(STAMP): pyproject.toml constraints.txt
	@pkg-config --exists icu-uc || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libicu-dev pkg-config >/dev/null; \
	  else echo "Install ICU's headers for PyICU (sudo apt-get install libicu-dev pkg-config)"; fi; }
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e ".[models,test,dev]"
	touch $(STAMP)

venv: $(STAMP)

# requirements.txt (pip install -r on a server: runtime + models, every package pinned) is generated from
# pyproject.toml and constraints.txt; tests/test_requirements.py fails in `make test` when it drifts.
requirements: $(STAMP)
	$(BIN)/python scripts/requirements.py

# Debian's Chromium for the Playwright browser tests (Playwright cannot download its own browsers here).
browsers:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "Install Debian's chromium (sudo apt-get install chromium) for the browser tests"; fi; }

# Debian's nginx for the buffering-proxy tests (tests/test_deploy_nginx.py runs deploy/nginx/ in front of gunicorn).
nginx:
	@test -x /usr/sbin/nginx || command -v nginx >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; \
	  else echo "Install Debian's nginx (sudo apt-get install nginx-light) for the proxy tests"; fi; }

# GNU gettext (xgettext, msgmerge, msgfmt): `make messages` and the catalog test (tests/annotation/
# test_translation_catalogs.py) run makemessages; the compiled .mo files are committed, so serving needs none of it.
gettext:
	@command -v msgfmt >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gettext >/dev/null; \
	  else echo "Install GNU gettext (sudo apt-get install gettext) for make messages and the catalog test"; fi; }

# The participant pages' catalogs (locale/<lang>/LC_MESSAGES): new strings added to each, then compiled.
LANGS := fr de es it pt_BR ar
MESSAGES_IGNORE := --ignore=.venv --ignore=node_modules --ignore=tests --ignore=benchmarks --ignore=staticfiles --ignore=templates/admin --ignore="*/templates/admin" --no-location
messages: $(STAMP) gettext
	$(TEST_ENV) $(MANAGE) makemessages $(foreach l,$(LANGS),-l $(l)) $(MESSAGES_IGNORE)
	$(TEST_ENV) $(MANAGE) makemessages -d djangojs $(foreach l,$(LANGS),-l $(l)) $(MESSAGES_IGNORE) --ignore="*/preview.js" --ignore="*/review.js"
	$(TEST_ENV) $(MANAGE) compilemessages

demo-data: $(STAMP)
	rm -f demo.sqlite3
	$(DEMO_ENV) $(MANAGE) migrate --noinput
	$(DEMO_ENV) $(MANAGE) create_roles
	$(DEMO_ENV) $(MANAGE) platform_account create --name mock --platform mock
	$(DEMO_ENV) $(MANAGE) loaddata screening_questions
	$(DEMO_ENV) $(MANAGE) import_corpus --name formality-demo --component formality --format aligned --licence GPL-3.0-or-later --attribution "written for StyleCrowd by its authors" fixtures/corpora/formality_informal.txt fixtures/corpora/formality_formal.txt
	$(DEMO_ENV) $(MANAGE) import_corpus --name formality-fr-demo --component formality --format aligned --language fr --licence GPL-3.0-or-later --attribution "written for StyleCrowd by its authors" fixtures/corpora/formality_fr_informal.txt fixtures/corpora/formality_fr_formal.txt
	$(DEMO_ENV) $(MANAGE) import_corpus --name turkcorpus-sample --component simplicity --format turkcorpus --seed 1 fixtures/corpora/turkcorpus_sample.tsv
	$(DEMO_ENV) $(MANAGE) import_corpus --name nsubs --component nbr_substitution --format aligned --licence MIT --attribution "STEL (Wegmann & Nguyen 2021): number-substitution sentences and translations" fixtures/corpora/nsubs_translated_sentences.txt fixtures/corpora/nsubs_sentences.txt
	$(DEMO_ENV) $(MANAGE) build_contraction_corpus --name contraction-demo fixtures/corpora/contraction_sentences.txt
	$(DEMO_ENV) $(MANAGE) import_corpus --name stel-contraction-published --component contraction --format stel $(SHARED)/stel/quad_questions_char_contraction.tsv
	$(DEMO_ENV) $(MANAGE) find_number_substitutions fixtures/corpora/nsubs_sentences.txt --out /dev/null --load
	for c in formality-demo formality-fr-demo turkcorpus-sample nsubs contraction-demo; do \
	  for s in quadruple triple; do $(DEMO_ENV) $(MANAGE) generate_instances --corpus $$c --setup $$s --seed 1 || exit 1; done; done
	$(DEMO_ENV) $(MANAGE) load_likert_demo
	$(DEMO_ENV) $(MANAGE) evaluate_metrics --study likert-demo --question content_preservation --metrics bleu,chrf,levenshtein,jaro_winkler,embedding_cosine --by style
	$(DEMO_ENV) $(MANAGE) create_study --slug demo-gyafc-rating --title "Rate the rewrites (GYAFC scales)" --kind likert --preset gyafc --outputs scoring/demo/likert_demo_items.jsonl --eligibility none --items-per-batch 8
	$(DEMO_ENV) $(MANAGE) create_study --slug demo-gyafc-ranking --title "Rank the rewrites (GYAFC)" --kind ranking --preset gyafc --outputs scoring/demo/likert_demo_items.jsonl --eligibility none --items-per-batch 5
	$(DEMO_ENV) $(MANAGE) build_content_errors --name demo-content-errors --corpus formality-demo --seed 1
	$(DEMO_ENV) $(MANAGE) create_study --slug demo-formality --title "Which sentences share a style?" --setup quadruple --corpus formality-demo --annotators-per-item 3 --items-per-batch 6 --screening-per-batch 2 --redirect-url "https://app.prolific.com/submissions/complete?cc={code}"
	$(DEMO_ENV) $(MANAGE) create_study --slug demo-simplicity-triple --setup triple --corpus turkcorpus-sample --annotators-per-item 3 --items-per-batch 6 --screening-per-batch 2
	$(DEMO_ENV) $(MANAGE) import_annotations --study fleiss-1971 --question diagnosis --scale 1-5 --level nominal fixtures/annotations/fleiss1971.csv
	$(DEMO_ENV) $(MANAGE) compute_agreement --study fleiss-1971 --json
	$(DEMO_ENV) $(MANAGE) score_stel $(SHARED)/stel/quad_questions_char_contraction.tsv --full $(SHARED)/stel/quad_questions_char_contraction.tsv $(SHARED)/stel/quad_questions_char_substitution.tsv --methods char3gram,word_length,punctuation,uppercase,levenshtein,st:minilm --compare uppercase,st:minilm --background --json >/dev/null
	$(MAKE) --no-print-directory demo-crowd
	$(MAKE) --no-print-directory demo-rewrites
	$(DEMO_ENV) $(MANAGE) demo_admin

# A crowd study filled by simulated participants over the HTTP API, then agreement, filter and export.
demo-crowd: $(STAMP)
	$(DEMO_ENV) $(MANAGE) create_study --slug demo-crowd --title "Simulated crowd (contraction)" --setup quadruple --corpus contraction-demo --count 30 --seed 1 --annotators-per-item 5 --items-per-batch 10 --screening-per-batch 2
	PORT=$$($(BIN)/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	$(DEMO_ENV) $(MANAGE) runserver 127.0.0.1:$$PORT --noreload >demo-server.log 2>&1 & PID=$$!; \
	trap "kill $$PID" EXIT; \
	$(BIN)/python scripts/wait_for_url.py http://127.0.0.1:$$PORT/api/v1/ping/ 60; \
	$(DEMO_ENV) $(MANAGE) simulate_annotators --study demo-crowd --participants 40 --accuracy 0.8 --screen-fail 0.1 --concurrency 2 --seed 1 --base-url http://127.0.0.1:$$PORT
	$(DEMO_ENV) $(MANAGE) compute_agreement --study demo-crowd --json
	$(DEMO_ENV) $(MANAGE) filter_instances --study demo-crowd --min-correct 3 --seed 1
	mkdir -p demo-exports
	$(DEMO_ENV) $(MANAGE) export_benchmark --format stel-tsv --status validated --study demo-crowd --out demo-exports/demo-crowd-validated.tsv
	$(DEMO_ENV) $(MANAGE) score_stel demo-exports/demo-crowd-validated.tsv --methods char3gram,punctuation,levenshtein --json

# A rewrite study (k = 2 formal rewrites of the informal demo sentences) written by simulated writers over the HTTP
# API (some first paste the source and are refused, some are sloppy), reviewed (sloppy rewrites rejected, their slots
# reopened and written again), built into a split parallel corpus, and a rating study (Pauli's scales) over it.
demo-rewrites: $(STAMP)
	$(DEMO_ENV) $(MANAGE) create_study --slug demo-rewrites --title "Rewrite informal sentences formally" --kind rewrite --sources-corpus formality-demo --side 1 --target-style formal --max-words 12 --annotators-per-item 2 --items-per-batch 8 --eligibility none --persona age,gender
	PORT=$$($(BIN)/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	$(DEMO_ENV) $(MANAGE) runserver 127.0.0.1:$$PORT --noreload >demo-server.log 2>&1 & PID=$$!; \
	trap "kill $$PID" EXIT; \
	$(BIN)/python scripts/wait_for_url.py http://127.0.0.1:$$PORT/api/v1/ping/ 60 && \
	$(DEMO_ENV) $(MANAGE) simulate_annotators --study demo-rewrites --participants 16 --copy-rate 0.1 --sloppy-rate 0.2 --concurrency 2 --seed 1 --base-url http://127.0.0.1:$$PORT && \
	$(DEMO_ENV) $(MANAGE) review_rewrites --study demo-rewrites --auto && \
	$(DEMO_ENV) $(MANAGE) simulate_annotators --study demo-rewrites --participants 8 --concurrency 2 --seed 2 --base-url http://127.0.0.1:$$PORT && \
	$(DEMO_ENV) $(MANAGE) review_rewrites --study demo-rewrites --auto && \
	$(DEMO_ENV) $(MANAGE) simulate_annotators --study demo-rewrites --participants 4 --concurrency 2 --seed 3 --base-url http://127.0.0.1:$$PORT && \
	$(DEMO_ENV) $(MANAGE) review_rewrites --study demo-rewrites --accept-all
	$(DEMO_ENV) $(MANAGE) build_corpus_from_rewrites --study demo-rewrites --name demo-rewrites-corpus --component formality --seed 1
	$(DEMO_ENV) $(MANAGE) generate_instances --corpus demo-rewrites-corpus --setup quadruple --seed 1
	$(DEMO_ENV) $(MANAGE) create_study --slug demo-rewrites-rating --title "Rate the crowd's rewrites (Pauli et al.)" --kind likert --preset pauli --outputs-study demo-rewrites --eligibility none --items-per-batch 8

demo: demo-data
	@$(MAKE) --no-print-directory serve-demo

# Serves the demo database: on $(PORT) when it is set, else on 8000, else (8000 taken) on a free port, printed.
serve-demo:
	@PORT=$$($(BIN)/python scripts/demo_port.py 8000) || exit 1; \
	echo "Serving StyleCrowd on http://127.0.0.1:$$PORT/admin/ (Ctrl-C to stop)"; \
	echo "Participant view: http://127.0.0.1:$$PORT/s/demo-formality/?PROLIFIC_PID=demo-1&STUDY_ID=demo&SESSION_ID=demo-1"; \
	exec env $(DEMO_ENV) $(MANAGE) runserver 127.0.0.1:$$PORT

# Production (README, "Running it for real"): needs DJANGO_SECRET_KEY, DATABASE_URL, CELERY_BROKER_URL exported.
collectstatic: $(STAMP)
	$(PROD_ENV) $(MANAGE) collectstatic --noinput

serve: $(STAMP)
	$(PROD_ENV) $(MANAGE) migrate --noinput
	$(PROD_ENV) $(MANAGE) create_roles
	$(PROD_ENV) $(MANAGE) collectstatic --noinput
	$(PROD_ENV) $(BIN)/gunicorn config.wsgi --worker-class gthread -w $${WEB_WORKERS:-3} --threads 8 -b $${BIND:-0.0.0.0:8000}

# The whole suite in TEST_WORKERS processes (pytest-xdist): each has its own test database, Redis database (the
# broker's db minus the worker's number: 15, 14 and 13 by default) and media folder (config/settings/test.py). A test
# that must not run beside another one gets `@pytest.mark.xdist_group("serial")` (--dist loadgroup keeps a group in
# one process; tests/conftest.py's XdistGroups makes that hold under pytest 9.2); none needs it today. The modules in
# tests/slowest_modules.txt run first. --durations: the slowest tests of every run, so the time stays visible.
# Bytecode caches are written even where the shell sets PYTHONDONTWRITEBYTECODE: the suite starts dozens of
# Python processes (gunicorn and Celery workers, manage.py, schemathesis), and each would otherwise compile the
# project's modules again (and each pytest process rewrite every test module's asserts). __pycache__ is ignored by git.
# Three processes on the 2-core machine: tests that wait on servers, browsers and workers leave a core idle, which the
# third fills (docs/benchmarks.md, "Test suite time (issue 29)": 536 s at -n 3, 641 s at -n 2, 579 s at -n 4).
TEST_WORKERS ?= 3
test: $(STAMP) browsers nginx gettext
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(TEST_ENV) PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25

# The lane without Celery workers, Chromium, neural models or slow tests (live-server HTTP tests, the concurrency
# races, the SQLite demo); `make test` runs everything. Markers: pytest.ini, set from fixtures in tests/conftest.py.
test-fast: $(STAMP) gettext
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(TEST_ENV) $(BIN)/python -m pytest -n auto -m "not worker and not browser and not model and not slow" -q

# ruff, the apps' one-way layering (import-linter's contract in pyproject.toml, [tool.importlinter]), and mypy on the
# platforms app (its backends checked against their Protocol; [tool.mypy]).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

clean:
	rm -rf $(VENV) demo.sqlite3 .pytest_cache test-artifacts

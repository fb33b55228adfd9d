# twin: the two set-up commands are `make lab-up` and `make test`.
SHELL := /bin/bash
LAB ?= labs/default.yaml
NAME ?=
# netns (the lab file's default), docker or clab: `make lab-up RUNTIME=docker`
RUNTIME ?=
VENV ?= .venv
PY := $(VENV)/bin/python
TWIN := $(VENV)/bin/twin
# the site's strict build (a broken link or a page missing from mkdocs.yml's nav fails it); no -q: it hides
# the warnings strict mode counts. NO_MKDOCS_2_WARNING: mkdocs-material's banner about MkDocs 2.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs
GOLDEN_LABS := default rail gate
# SONiC's reference artefacts are not vendored: YANG models (`twin validate`), SONiC's FRR templates
# and test vectors (tests/fidelity) and containerlab's schema (`twin export`). twin and the tests look
# in $TWIN_SONIC_REFERENCE, else $XDG_DATA_HOME/twin/reference (~/.local/share/twin/reference; see
# twin/host/reference.py and docs/reference/environment.md); where there is none, those checks are skipped and say so.

DEPS_FLAGS := $(if $(filter docker clab,$(RUNTIME)),--docker)

.PHONY: lab-up lab-down test unit lint configs schema json-schemas dashboards docs bench deps image clean

# Installs what is missing (Debian packages, the virtualenv and the package; with RUNTIME=docker the
# Docker engine, started if needed, and the switch image; SONiC's YANG models and FRR templates from
# sonic-buildimage at the commit twin/host/reference_manifest.json names, when twin finds none), then
# brings the lab up.
lab-up: deps
	@$(TWIN) reference install --if-missing || echo "twin: going on without SONiC's YANG models: the switches judge Sets with twin's built-in digest of them ('twin reference install --from DIR' installs them later)"
	$(TWIN) up $(LAB) $(if $(NAME),--name $(NAME)) $(if $(RUNTIME),--runtime $(RUNTIME))

lab-down:
	@if [ -x $(TWIN) ]; then $(TWIN) down $(if $(NAME),--name $(NAME),--all); fi

deps:
	@bash scripts/install-deps.sh $(DEPS_FLAGS)

# The switch image of the container runtimes (no registry: debootstrap + docker import).
image:
	@bash scripts/install-deps.sh --docker
	$(TWIN) image build

# The tests cover every runtime: they need the Docker engine too.
test: DEPS_FLAGS := --docker
test: deps
	$(VENV)/bin/ruff check twin tests bench
	$(VENV)/bin/mypy twin
	$(VENV)/bin/lint-imports
	@d=$$(mktemp -d); $(MKDOCS) build --strict -d $$d; rc=$$?; rm -rf $$d; exit $$rc
	$(VENV)/bin/pytest tests

unit:
	$(VENV)/bin/pytest tests/unit

configs:
	@for lab in $(GOLDEN_LABS); do $(TWIN) plan labs/$$lab.yaml -o configs/$$lab --json >/dev/null && echo "configs/$$lab"; done

# The built-in schema (twin/stages/schema.json): a digest of SONiC's YANG models for when they are absent.
schema:
	$(PY) -c 'import sys; from pathlib import Path; from twin.stages.validate.yang import find_models, write_builtin_schema; \
	  models = find_models(); models or sys.exit("make schema: no SONiC YANG models; set TWIN_SONIC_YANG or TWIN_SONIC_REFERENCE"); \
	  write_builtin_schema(models, Path("twin/stages/schema.json"))'

# The JSON Schemas of the topology and lab files (schemas/*.schema.json), from their pydantic models;
# tests/unit/test_file_schemas.py fails when a model changes and they were not regenerated.
json-schemas:
	$(PY) schemas/generate.py

# The Grafana dashboards of twin telemetry (dashboards/*.json), from twin/telemetry/dashboards.py;
# tests/unit/test_dashboards.py fails when the generator changed and they were not rewritten.
dashboards:
	$(TWIN) telemetry dashboards dashboards

# The documentation site (mkdocs.yml, docs/) into build/site/; `$(VENV)/bin/mkdocs serve` to browse it.
docs:
	$(MKDOCS) build --strict

bench:
	$(PY) bench/lab_up.py
	$(PY) bench/gnmi.py
	$(PY) bench/drills.py
	$(PY) bench/ci.py
	$(PY) bench/runtimes.py

clean: lab-down
	rm -rf $(VENV) *.egg-info

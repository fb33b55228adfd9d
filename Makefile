# twin: the two set-up commands are `make lab-up` and `make test`.
SHELL := /bin/bash
LAB ?= labs/default.yaml
NAME ?=
# netns (the lab file's default), docker or clab: `make lab-up RUNTIME=docker`
RUNTIME ?=
VENV ?= .venv
PY := $(VENV)/bin/python
TWIN := $(VENV)/bin/twin
GOLDEN_LABS := default rail gate
# SONiC's reference artefacts are not vendored: YANG models (`twin validate` reads TWIN_SONIC_YANG),
# SONiC's FRR templates and test vectors (tests/fidelity) and containerlab's schema. The tests take
# them from TWIN_SONIC_REFERENCE, else from a copy beside the repository; where neither exists those
# checks are skipped and say so.
SONIC_REFERENCE := $(or $(TWIN_SONIC_REFERENCE),$(abspath $(wildcard ../shared/reference)))
SONIC_YANG := $(if $(SONIC_REFERENCE),$(SONIC_REFERENCE)/sonic-yang-models)
REFERENCE_ENV := $(if $(SONIC_REFERENCE),TWIN_SONIC_REFERENCE=$(SONIC_REFERENCE) \
  TWIN_SONIC_YANG=$${TWIN_SONIC_YANG:-$(SONIC_YANG)} \
  TWIN_CLAB_SCHEMA=$${TWIN_CLAB_SCHEMA:-$(SONIC_REFERENCE)/containerlab/clab.schema.json})

DEPS_FLAGS := $(if $(filter docker clab,$(RUNTIME)),--docker)

.PHONY: lab-up lab-down test unit lint configs schema bench deps image clean

# Installs what is missing (Debian packages, the virtualenv and the package; with RUNTIME=docker the
# Docker engine, started if needed, and the switch image), then brings the lab up.
lab-up: deps
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
	$(REFERENCE_ENV) $(VENV)/bin/pytest tests

unit:
	$(REFERENCE_ENV) $(VENV)/bin/pytest tests/unit

configs:
	@for lab in $(GOLDEN_LABS); do $(TWIN) plan labs/$$lab.yaml -o configs/$$lab --json >/dev/null && echo "configs/$$lab"; done

# The built-in schema (twin/switch/schema.json): a digest of SONiC's YANG models for when they are absent.
schema:
	@test -n "$(SONIC_YANG)" || { echo "make schema: no SONiC YANG models; set TWIN_SONIC_REFERENCE" >&2; exit 2; }
	$(PY) -c 'import sys; from pathlib import Path; from twin.validate.yang import write_builtin_schema; \
	  write_builtin_schema(Path(sys.argv[1]), Path("twin/switch/schema.json"))' $(SONIC_YANG)

bench:
	$(PY) bench/lab_up.py
	$(PY) bench/gnmi.py
	$(PY) bench/drills.py
	$(PY) bench/ci.py
	$(PY) bench/runtimes.py

clean: lab-down
	rm -rf $(VENV) *.egg-info

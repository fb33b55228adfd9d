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
# SONiC's YANG models are not vendored (`twin validate` reads TWIN_SONIC_YANG): the tests use a
# reference copy beside the repository or this workplace's; with none, the YANG check is skipped.
SONIC_YANG := $(abspath $(firstword $(wildcard ../shared/reference/sonic-yang-models \
                                              /work/shared/reference/sonic-yang-models)))

# SONiC's own artefacts (FRR templates, bgpcfgd test vectors) for tests/fidelity, found the same way.
SONIC_REFERENCE := $(abspath $(firstword $(wildcard ../shared/reference /work/shared/reference)))

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

# The tests cover every runtime: they need the Docker engine and a real redis-server too.
test: DEPS_FLAGS := --docker --redis
test: deps
	$(VENV)/bin/ruff check twin tests bench
	$(VENV)/bin/mypy twin
	TWIN_SONIC_YANG=$${TWIN_SONIC_YANG:-$(SONIC_YANG)} TWIN_SONIC_REFERENCE=$${TWIN_SONIC_REFERENCE:-$(SONIC_REFERENCE)} \
	  $(VENV)/bin/pytest tests

unit:
	TWIN_SONIC_YANG=$${TWIN_SONIC_YANG:-$(SONIC_YANG)} $(VENV)/bin/pytest tests/unit

configs:
	@for lab in $(GOLDEN_LABS); do $(TWIN) plan labs/$$lab.yaml -o configs/$$lab --json >/dev/null && echo "configs/$$lab"; done

# The built-in schema (twin/switch/schema.json): a digest of SONiC's YANG models for when they are absent.
schema:
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

#!/usr/bin/env bash
# Install what twin needs, only what is missing: Debian packages (FRR 8.4, redis-server for every
# switch's SONiC databases, bubblewrap for imported hosts' exec: lines, network tools, chromium for the
# tests of `twin graph`'s HTML page), a virtualenv
# in .venv and the package with its Python dependencies (libyang's Python bindings build against
# Debian's libyang2-dev). Safe to run again. It says everything it changes on this machine, and
# changes nothing else: no service of the host is stopped, disabled or reconfigured.
#   --docker   also the container runtimes' needs: Debian's Docker engine (started when it is not
#              running) and debootstrap, which builds the switch image
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: headless, it renders `twin graph`'s HTML page in the integration tests (a screenshot, the DOM)
# prometheus: `twin telemetry up` runs one per lab, on 127.0.0.1 (the package's own service is not used)
APT_PACKAGES=(frr frr-pythontools redis-server iproute2 iputils-ping fping traceroute procps python3-venv openssh-client sshpass
              nftables iptables libyang2-tools libyang2-dev gcc python3-dev bubblewrap chromium prometheus)
WITH_DOCKER=0
for arg in "$@"; do
  case "$arg" in
    --docker) WITH_DOCKER=1; APT_PACKAGES+=(docker.io debootstrap) ;;
    *) echo "install-deps.sh: unknown option $arg (use --docker)" >&2; exit 2 ;;
  esac
done
say() { echo "install-deps: $*"; }

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing Debian packages (apt-get update, then apt-get install --no-install-recommends): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
  for pkg in frr redis-server docker.io prometheus; do
    if [[ " ${missing[*]} " == *" $pkg "* ]] && [ -d /run/systemd/system ]; then
      say "Debian's $pkg package enables and starts its own service where systemd runs; twin does not use it and" \
          "leaves it as the package set it up (stop it yourself with: systemctl disable --now ${pkg%.io})"
    fi
  done
else
  say "Debian packages: all ${#APT_PACKAGES[@]} present, nothing installed"
fi
# twin's FRR runs beside a host FRR (Debian's frr service) without touching it: every switch's daemons
# run in the switch's network namespace with their own pid files, vty sockets, zserv socket and logs
# in the lab's run directory (twin/switch/frr/frr_daemons.py), and twin stops only processes it started.
if pgrep -x zebra -a 2>/dev/null | grep -qv -- "--vty_socket"; then
  say "a host FRR is running (zebra outside twin's labs); twin leaves it alone and runs beside it"
fi

if [ "$WITH_DOCKER" = 1 ]; then
  if ! docker info >/dev/null 2>&1; then
    say "the Docker engine is not running: starting it (scripts/start-docker.sh)"
  fi
  bash scripts/start-docker.sh
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  say "creating the virtualenv $(pwd)/.venv ($PYTHON -m venv)"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.twin-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  say "installing twin and its Python dependencies into .venv (pip install -e '.[dev]', pip upgraded first)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e '.[dev]'
  touch "$stamp"
else
  say "virtualenv .venv: twin is installed and up to date with pyproject.toml, nothing changed"
fi
# twin's own bytecode, compiled as pip compiles an installed package's (an editable install's is not):
# where PYTHONDONTWRITEBYTECODE is set, every twin command would otherwise compile again all it imports
# (about 0.4 s of each `twin up`). Only what changed since the last run is compiled again.
.venv/bin/python -m compileall -q twin

#!/usr/bin/env bash
# Install what twin needs, only what is missing: Debian packages (FRR 8.4, redis-server for every
# switch's SONiC databases, network tools), a virtualenv in .venv and the package with its Python
# dependencies (libyang's Python bindings build against Debian's libyang2-dev). Safe to run again.
#   --docker   also the container runtimes' needs: Debian's Docker engine (started when it is not
#              running) and debootstrap, which builds the switch image
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(frr frr-pythontools redis-server iproute2 iputils-ping fping traceroute procps python3-venv openssh-client sshpass
              nftables iptables libyang2-tools libyang2-dev gcc python3-dev)
WITH_DOCKER=0
for arg in "$@"; do
  case "$arg" in
    --docker) WITH_DOCKER=1; APT_PACKAGES+=(docker.io debootstrap) ;;
    *) echo "install-deps.sh: unknown option $arg (use --docker)" >&2; exit 2 ;;
  esac
done
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# Debian's frr package starts its own FRR in the root namespace where systemd runs; twin needs none.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet frr 2>/dev/null; then
  systemctl disable --now frr >/dev/null 2>&1 || true
fi

# Debian's redis-server package may start a server of its own where systemd runs. twin leaves it
# alone: each switch's redis-server listens inside the switch's namespace and on a socket in its
# run directory, and the tests start their own on free ports.
if [ "$WITH_DOCKER" = 1 ]; then
  bash scripts/start-docker.sh
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.twin-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e '.[dev]'
  touch "$stamp"
fi

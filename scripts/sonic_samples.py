#!/usr/bin/env python3
"""Regenerate tests/fidelity/data/sonic_samples: SONiC's own sample devices turned into CONFIG_DB by SONiC's
own sonic-cfggen, run outside the project.

    python scripts/sonic_samples.py --buildimage GIT_DIR [--commit REV] [--python PYTHON]

GIT_DIR is a git directory of sonic-buildimage (a bare mirror will do). At REV (default HEAD) its
src/sonic-config-engine and src/sonic-py-common, and the device folders named in SAMPLES, are extracted
into a temporary folder, and each sample is run exactly as SONiC's own tests validate a minigraph
(tests/common_utils.py YangWrapper.validate): `sonic-cfggen -m <minigraph> -p <port_config> --print-data`.

sonic-cfggen needs Python packages (PACKAGES, pinned as sonic-config-engine's setup.py pins them or
unpinned where it does not) and two SONiC modules that are not Python packages on PyPI; they are stood in for:
- swsscommon (sonic-swss-common's SWIG module): sonic-cfggen and sonic_py_common import its database
  connectors. Here a connector can be made but connecting fails, as on a build host with no redis
  (portconfig.db_connect_configdb and device_info.get_localhost_info catch that and read the files they
  are given); SonicDBConfig.initialize loads nothing; ConfigDBConnector.serialize_key/deserialize_key join
  and split keys on "|" as swss-common's do. sonic-py-common's own tests stub the same module
  (tests/mock_swsscommon.py).
- sonic_yang (src/sonic-yang-mgmt, over libyang 1's SWIG bindings): imported by sonic_yang_cfg_generator,
  which only `sonic-cfggen -Y` uses.
CFGGEN_UNIT_TESTING is left unset: it makes sonic-cfggen read SONiC's mock redis tables (mockredis, swsssdk).

Before the samples, the environment is checked as sonic-config-engine's test_frr.py checks sonic-cfggen:
frr.conf.j2, bgpd.conf.j2 and zebra.conf.j2 rendered over t0-sample-graph.xml must equal SONiC's golden
outputs (tests/sample_output/py3), so the stand-ins change nothing sonic-cfggen computes.

Without --python a virtualenv with PACKAGES is made in the temporary folder (pip, from PyPI). The project's
code is not imported: this script is run by hand, and its output is data.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fidelity" / "data" / "sonic_samples"
TESTS = "src/sonic-config-engine/tests"
# name -> (minigraph, port_config.ini), as SONiC's tests pair them (test_cfggen.py, test_j2files.py)
SAMPLES = {
    "t0-sample-graph": (f"{TESTS}/t0-sample-graph.xml", f"{TESTS}/t0-sample-port-config.ini"),
    "t0-sample-bgp-speaker": (f"{TESTS}/t0-sample-bgp-speaker.xml", f"{TESTS}/t0-sample-port-config.ini"),
    "sample-cisco-8101-t1-100": (f"{TESTS}/sample-cisco-8101-t1-100-minigraph.xml",
                                 f"{TESTS}/sample-cisco-8101-t1-port-config.ini"),
    "sample-arista-7260-dualtor": (f"{TESTS}/sample-arista-7260-dualtor-minigraph.xml",
                                   "device/arista/x86_64-arista_7260cx3_64/Arista-7260CX3-D108C8/port_config.ini"),
    "sample-arista-7260-t1": (f"{TESTS}/sample-arista-7260-t1-minigraph.xml",
                              "device/arista/x86_64-arista_7260cx3_64/Arista-7260CX3-C64/port_config.ini"),
    "sample-dell-9332-t1": (f"{TESTS}/sample-dell-9332-t1-minigraph.xml",
                            "device/dell/x86_64-dellemc_z9332f_d1508-r0/DellEMC-Z9332f-O32/port_config.ini"),
}
FRR_TEMPLATES = "dockers/docker-fpm-frr/frr"
# test_frr.py's cases: (template, golden output in tests/sample_output/py3), all over t0-sample-graph.xml
FRR_GOLDEN = (("frr.conf.j2", "frr.conf"), ("bgpd/bgpd.conf.j2", "bgpd_frr.conf"),
              ("zebra/zebra.conf.j2", "zebra_frr.conf"))
PACKAGES = ("bitarray==2.8.1", "lxml>=4.9.1", "netaddr==0.8.0", "Jinja2>=2.10", "pyyaml>=6.0.1", "natsort")

SWSSCOMMON = '''"""swsscommon stand-in, as on a build host without redis: connectors can be made, connecting fails."""


class _Connector:
    def __init__(self, *args, **kwargs):
        pass

    def connect(self, *args, **kwargs):
        raise ConnectionError("no redis: no SONiC database is read here")

    db_connect = connect
    get_table = connect

    @staticmethod
    def serialize_key(key, separator="|"):
        return separator.join(key) if isinstance(key, tuple) else str(key)

    @staticmethod
    def deserialize_key(key, separator="|"):
        parts = key.split(separator)
        return tuple(parts) if len(parts) > 1 else key


ConfigDBConnector = ConfigDBPipeConnector = SonicV2Connector = _Connector


class DBConnector:
    def __init__(self, *args, **kwargs):
        raise ConnectionError("no redis: no SONiC database is read here")


Table = DBConnector


class SonicDBConfig:
    """The database layout sonic-cfggen loads before it parses a minigraph: nothing to load here."""
    _init = _global_init = False

    @classmethod
    def isInit(cls):
        return cls._init

    @classmethod
    def isGlobalInit(cls):
        return cls._global_init

    @classmethod
    def initialize(cls, *args, **kwargs):
        cls._init = True

    @classmethod
    def initializeGlobalConfig(cls, *args, **kwargs):
        cls._global_init = True
'''
SONIC_YANG = '''"""sonic_yang stand-in: only sonic-cfggen -Y (YANG data input) uses it."""


class SonicYang:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("sonic_yang is not available here: -Y is not used")
'''
STUBS = {
    "swsscommon": "sonic-swss-common's SWIG module: database connectors constructible, connecting fails as on a "
                  "host without redis (callers catch it); SonicDBConfig.initialize loads nothing; "
                  "serialize_key/deserialize_key join and split on '|' as swss-common's do",
    "sonic_yang": "src/sonic-yang-mgmt over libyang 1: imported by sonic_yang_cfg_generator, used only by -Y",
}


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(gitdir), *args], check=True, capture_output=True).stdout


def extract(gitdir: Path, commit: str, dest: Path) -> None:
    paths = sorted({"src/sonic-config-engine", "src/sonic-py-common", FRR_TEMPLATES}
                   | {port for _, port in SAMPLES.values() if not port.startswith(TESTS)})
    archive = git(gitdir, "archive", commit, *paths)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def write_stubs(dest: Path) -> None:
    (dest / "swsscommon").mkdir(parents=True)
    (dest / "swsscommon" / "__init__.py").write_text("")
    (dest / "swsscommon" / "swsscommon.py").write_text(SWSSCOMMON)
    (dest / "sonic_yang.py").write_text(SONIC_YANG)


def make_venv(dest: Path) -> Path:
    venv.create(dest, with_pip=True)
    python = dest / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", *PACKAGES], check=True)
    return python


def installed(python: Path) -> dict[str, str]:
    out = subprocess.run([str(python), "-m", "pip", "list", "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    return {p["name"]: p["version"] for p in json.loads(out) if p["name"] not in ("pip", "setuptools")}


def check_environment(python: Path, root: Path, env: dict[str, str]) -> list[str]:
    """sonic-config-engine's test_frr.py run here: each template rendered over t0-sample-graph.xml must equal
    SONiC's golden output, so the stand-ins change nothing sonic-cfggen computes. Returns the commands."""
    commands = []
    for template, golden in FRR_GOLDEN:
        argv = ["sonic-cfggen", "-m", f"{TESTS}/t0-sample-graph.xml", "-p", f"{TESTS}/t0-sample-port-config.ini",
                "-y", f"{TESTS}/data/constants.yml", "-t", f"{FRR_TEMPLATES}/{template}", "-T", FRR_TEMPLATES]
        proc = subprocess.run([str(python), str(root / "src/sonic-config-engine/sonic-cfggen"), *argv[1:]], cwd=root,
                              env=env, capture_output=True, text=True)
        want = (root / TESTS / "sample_output" / "py3" / golden).read_text()
        if proc.returncode != 0 or proc.stdout != want:
            sys.exit(f"{' '.join(argv)} does not reproduce {TESTS}/sample_output/py3/{golden}:\n{proc.stderr}")
        commands.append(f"{' '.join(argv)} == {TESTS}/sample_output/py3/{golden}")
    return commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--buildimage", type=Path, required=True, help="a git directory of sonic-buildimage")
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--python", type=Path, help="a Python with PACKAGES installed (default: a fresh venv)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    commit = git(args.buildimage, "rev-parse", args.commit).decode().strip()
    date = git(args.buildimage, "show", "-s", "--format=%cs", commit).decode().strip()
    with tempfile.TemporaryDirectory(prefix="sonic-samples-") as tmp:
        root = Path(tmp) / "sonic-buildimage"
        root.mkdir()
        extract(args.buildimage, commit, root)
        stubs = Path(tmp) / "stubs"
        write_stubs(stubs)
        python = args.python or make_venv(Path(tmp) / "venv")
        engine = root / "src" / "sonic-config-engine"
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{stubs}:{root / 'src' / 'sonic-py-common'}:{engine}"}
        checked = check_environment(python, root, env)
        args.out.mkdir(parents=True, exist_ok=True)
        commands = {}
        for name, (graph, port_config) in SAMPLES.items():
            argv = ["sonic-cfggen", "-m", graph, "-p", port_config, "--print-data"]
            proc = subprocess.run([str(python), str(engine / "sonic-cfggen"), *argv[1:]], cwd=root, env=env,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"{name}: sonic-cfggen failed:\n{proc.stderr}")
            data = json.loads(proc.stdout)
            (args.out / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
            commands[name] = {"command": " ".join(argv), "stderr": proc.stderr.splitlines()}
            print(f"{name}: {len(data)} tables")
        manifest = {
            "source": "https://github.com/sonic-net/sonic-buildimage", "commit": commit, "commit_date": date,
            "run_from": "the root of sonic-buildimage's tree, with src/sonic-config-engine/sonic-cfggen",
            "environment": {"PYTHONPATH": "<stubs>:src/sonic-py-common:src/sonic-config-engine",
                            "CFGGEN_UNIT_TESTING": "unset", "python": subprocess.run(
                                [str(python), "-c", "import sys; print(sys.version.split()[0])"], check=True,
                                capture_output=True, text=True).stdout.strip(),
                            "packages": installed(python)},
            "stubbed": STUBS, "checked": checked, "samples": commands,
            "regenerate": "python scripts/sonic_samples.py --buildimage <sonic-buildimage git dir> --commit " + commit,
        }
        (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()

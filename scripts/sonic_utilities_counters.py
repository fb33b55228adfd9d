#!/usr/bin/env python3
"""Regenerate tests/fidelity/data/sonic_utilities_counters: sonic-utilities' own mock databases and the
outputs its tests expect of portstat, queuestat and pfcstat over them.

    python scripts/sonic_utilities_counters.py --utilities GIT_DIR [--commit REV]

GIT_DIR is a git directory of sonic-utilities (a bare mirror will do). At REV (default HEAD) it reads:
- the databases its tests run the commands over, cut down to the keys the commands read: "portstat" is
  tests/portstat_db/counters_db.json (portstat_test.py puts it in place of the mock COUNTERS_DB) with the
  mock APPL_DB and STATE_DB; "mock" is the mock COUNTERS_DB itself (queue, PFC and trim tests), with the
  same APPL_DB and STATE_DB;
- each expected output named in CASES, a module-level string of the test file (or of its _input module).
CASES pairs each with the command its test runs (its show command, or the script itself), as the test
function named there runs it. The project's code is not imported: this script is run by hand, and its
output is data. sonic-utilities is Apache License 2.0.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fidelity" / "data" / "sonic_utilities_counters"
PORTSTAT_TEST = "tests/portstat_test.py"
PORTSTAT_OUT = "tests/portstat_input/assert_show_output.py"
QUEUE_TEST = "tests/queue_counter_test.py"
PFC_TEST = "tests/pfcstat_test.py"
PFC_OUT = "tests/pfcstat_input/assert_show_output.py"
DATABASES = {
    "portstat": {"COUNTERS_DB": "tests/portstat_db/counters_db.json", "APPL_DB": "tests/mock_tables/appl_db.json",
                 "STATE_DB": "tests/mock_tables/state_db.json"},
    "mock": {"COUNTERS_DB": "tests/mock_tables/counters_db.json", "APPL_DB": "tests/mock_tables/appl_db.json",
             "STATE_DB": "tests/mock_tables/state_db.json"},
}
TREF = "TestPortStat"
# (case, database, command as typed on the switch, exit status, expected: (file, name), its test)
CASES: list[tuple[str, str, list[str], int, tuple[str, str], str]] = []
for command, test in (
        (["show", "interfaces", "counters"], "test_show_intf_counters"), (["portstat"], "test_show_intf_counters")):
    CASES.append((f"{test}:{command[0]}", "portstat", command, 0, (PORTSTAT_TEST, "intf_counters_before_clear"),
                  f"{PORTSTAT_TEST}::{TREF}::{test}"))
for show, script, name, test in (
        (["-i", "Ethernet4"], ["-i", "Ethernet4"], "intf_counters_ethernet4", "test_show_intf_counters_ethernet4"),
        (["--printall"], ["-a"], "intf_counters_all", "test_show_intf_counters_all"),
        (["fec-stats"], ["-f"], "intf_fec_counters", "test_show_intf_fec_counters"),
        (["fec-stats", "-p 3"], ["-f", "-p", "3"], "intf_fec_counters_period", "test_show_intf_fec_counters_period"),
        (["-p 3"], ["-p", "3"], "intf_counters_period", "test_show_intf_counters_period"),
        (["detailed", "Ethernet4"], ["-l", "-i", "Ethernet4"], "intf_counters_detailed",
         "test_show_intf_counters_detailed"),
        (["--nonzero"], ["-nz"], "intf_counters_nonzero", "test_show_intf_counters_nonzero"),
        (["fec-stats", "--nonzero"], ["-f", "-nz"], "intf_fec_counters_nonzero",
         "test_show_intf_fec_counters_nonzero"),
        (None, ["-R"], "intf_rates", "test_show_intf_rates"),
        (None, ["-R", "-nz"], "intf_rates_nonzero", "test_show_intf_rates_nonzero")):
    for command in ([["show", "interfaces", "counters", *show]] if show is not None else []) + [["portstat", *script]]:
        CASES.append((f"{test}:{command[0]}", "portstat", command, 0, (PORTSTAT_TEST, name),
                      f"{PORTSTAT_TEST}::{TREF}::{test}"))
for show, script, name in (([], [], "trim_counters_all"), (["--json"], ["-j"], "trim_counters_all_json"),
                           (["Ethernet0"], ["-i", "Ethernet0"], "trim_eth0_counters"),
                           (["Ethernet0", "--json"], ["-i", "Ethernet0", "-j"], "trim_eth0_counters_json")):
    test = "test_show_port_trim_counters" + ("_intf" if "Ethernet0" in show else "")
    for command in (["show", "interfaces", "counters", "trim", *show], ["portstat", "--trim", *script]):
        CASES.append((f"{name}:{command[0]}", "mock", command, 0, (PORTSTAT_OUT, name),
                      f"{PORTSTAT_TEST}::TestPortTrimStat::{test}"))
for args, name, test in (([], "show_queue_counters", "test_queue_counters"),
                         (["--nonzero"], "show_queue_counters_nz", "test_queue_counters_nonzero"),
                         (["Ethernet8"], "show_queue_counters_port", "test_queue_counters_port"),
                         (["Ethernet8", "--nonzero"], "show_queue_counters_port_nz", "test_queue_counters_port_nz"),
                         (["--json"], "show_queue_counters_json", "test_queue_counters_json"),
                         (["--json", "--nonzero"], "show_queue_counters_json_nz", "test_queue_counters_json_nz"),
                         (["Ethernet8", "--json"], "show_queue_counters_port_json", "test_queue_counters_port_json"),
                         (["Ethernet8", "--json", "--nonzero"], "show_queue_counters_port_json_nz",
                          "test_queue_counters_port_json_nz")):
    CASES.append((test, "mock", ["show", "queue", "counters", *args], 0, (QUEUE_TEST, name),
                  f"{QUEUE_TEST}::TestQueue::{test}"))
CASES.append(("test_pfc_counters", "mock", ["show", "pfc", "counters"], 0, (PFC_TEST, "show_pfc_counters_output"),
              f"{PFC_TEST}::TestPfcstat::test_pfc_counters"))
CASES.append(("test_pfc_counters_history", "mock", ["show", "pfc", "counters", "--history"], 0,
              (PFC_OUT, "show_pfc_counters_history_output"), f"{PFC_TEST}::TestPfcstat::test_pfc_counters_history"))


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True,
                          text=True).stdout


def strings(source: str) -> dict[str, str]:
    """The module-level string constants of a Python file (the last assignment of a name wins)."""
    out: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value.value
    return out


def cut(files: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    """The keys portstat, queuestat and pfcstat read, for the ports of COUNTERS_PORT_NAME_MAP."""
    counters, appl, state = files["COUNTERS_DB"], files["APPL_DB"], files["STATE_DB"]
    ports = counters["COUNTERS_PORT_NAME_MAP"]
    assert isinstance(ports, dict)
    keep = {"COUNTERS_PORT_NAME_MAP"}
    keep |= {f"{table}:{oid}" for oid in ports.values() for table in ("COUNTERS", "RATES")}
    queues = counters.get("COUNTERS_QUEUE_NAME_MAP", {})
    assert isinstance(queues, dict)
    maps = ("COUNTERS_QUEUE_PORT_MAP", "COUNTERS_QUEUE_INDEX_MAP", "COUNTERS_QUEUE_TYPE_MAP")
    out_counters: dict[str, object] = {k: v for k, v in counters.items() if k in keep}
    if queues:
        out_counters["COUNTERS_QUEUE_NAME_MAP"] = queues
        for name in maps:
            table = counters[name]
            assert isinstance(table, dict)
            out_counters[name] = {oid: table[oid] for oid in queues.values() if oid in table}
        out_counters.update({f"COUNTERS:{oid}": counters[f"COUNTERS:{oid}"] for oid in queues.values()
                             if f"COUNTERS:{oid}" in counters})
    return {
        "COUNTERS_DB": dict(sorted(out_counters.items())),
        "APPL_DB": {f"PORT_TABLE:{p}": appl[f"PORT_TABLE:{p}"] for p in ports if f"PORT_TABLE:{p}" in appl},
        "STATE_DB": {k: v for k, v in state.items()
                     if k.startswith("PORT_COUNTER_CAPABILITIES|") or k in {f"PORT_TABLE|{p}" for p in ports}},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--utilities", type=Path, required=True, help="a git directory of sonic-utilities")
    parser.add_argument("--commit", default="HEAD")
    ns = parser.parse_args()
    commit = git(ns.utilities, "rev-parse", ns.commit).strip()
    date = git(ns.utilities, "show", "-s", "--format=%cs", commit).strip()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, files in DATABASES.items():
        data = {db: json.loads(git(ns.utilities, "show", f"{commit}:{path}")) for db, path in files.items()}
        (OUT / f"{name}_db.json").write_text(json.dumps(cut(data), indent=1, sort_keys=True) + "\n")
    sources = {path: strings(git(ns.utilities, "show", f"{commit}:{path}"))
               for path in {expected[0] for *_, expected, _ in CASES}}
    expected = {f"{path}::{name}": sources[path][name] for *_, (path, name), _ in CASES}
    (OUT / "expected.json").write_text(json.dumps(dict(sorted(expected.items())), indent=1) + "\n")
    manifest = {
        "source": "https://github.com/sonic-net/sonic-utilities",
        "commit": commit,
        "commit_date": date,
        "databases": DATABASES,
        "cases": [{"case": case, "database": db, "command": command, "status": status,
                   "expected": f"{path}::{name}", "test": test}
                  for case, db, command, status, (path, name), test in CASES],
        "regenerate": f"python scripts/sonic_utilities_counters.py --utilities <sonic-utilities git dir> "
                      f"--commit {commit}",
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()

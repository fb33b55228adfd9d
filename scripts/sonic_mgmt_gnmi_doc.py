"""Write docs/reference/sonic-mgmt-gnmi.md from tests/fidelity/sonic_mgmt_gnmi/*.json: every case of
sonic-mgmt's tests/gnmi, what it expects, and whether the fidelity tier runs it against a twin switch or
why it cannot apply. The page is derived from the data alone (no run's outcome), so it changes only
when the cases do; tests/unit/test_sonic_mgmt_gnmi_data.py holds it to this script's output.

    python scripts/sonic_mgmt_gnmi_doc.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "tests" / "fidelity" / "sonic_mgmt_gnmi"
DOCS = REPO / "docs" / "reference" / "sonic-mgmt-gnmi.md"
MODULE = "tests/fidelity/test_sonic_mgmt_gnmi.py"


def load() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(CASES.glob("*.json"))]


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(docs: list[dict[str, Any]]) -> str:
    cases = [c for d in docs for c in d["cases"]]
    runs = sum(1 for c in cases if "steps" in c)
    commits = sorted({d["sonic_mgmt_commit"] for d in docs})
    lines = [
        "# sonic-mgmt's gNMI and gNOI tests",
        "",
        "Every test of [sonic-net/sonic-mgmt](https://github.com/sonic-net/sonic-mgmt)'s tests/gnmi (each "
        f"parametrization a case) at `{', '.join(c[:12] for c in commits)}`, translated to one twin switch "
        f"(leaf1 of a 2 x 2 Clos). `{MODULE}` runs each case through the clients sonic-mgmt drives, with their "
        "request shapes and printed output: the PTF image's `py_gnmicli.py` (google/gnxi with sonic-buildimage's "
        "gnxi-patches), sonic-gnmi's `gnmi_cli`, grpcurl learning services and messages from the switch's gRPC "
        "reflection as sonic-mgmt's tests/common/ptf_grpc.py runs it, and pygnmi as its tests/common/pygnmi_client.py "
        "wraps "
        "it; what the tests run on the DUT goes through the switch's SSH shell. The expected result is the test's "
        "own assertion. A case that cannot apply to a twin switch is listed with the reason and skipped.",
        "",
        "sonic-mgmt authenticates with client certificates; a twin switch authenticates by password, so the "
        "translated clients send `username` and `password` metadata (py_gnmicli's `-user`/`-pass`, grpcurl's "
        "`-H`). The data is `tests/fidelity/sonic_mgmt_gnmi/*.json` (one file per sonic-mgmt module); this "
        "page is generated from it by `scripts/sonic_mgmt_gnmi_doc.py`.",
        "",
        f"**{len(cases)} cases: {runs} run against the twin switch, {len(cases) - runs} not applicable.**",
        "",
        "| case | sonic-mgmt source | expected | twin switch |",
        "|---|---|---|---|",
    ]
    for case in cases:
        twin = f"runs ({cell(case['asks'])})" if "steps" in case else f"not applicable: {cell(case['not_applicable'])}"
        lines.append(f"| `{case['id']}` | `{cell(case['source'])}` | {cell(case['expected'])} | {twin} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    DOCS.write_text(render(load()))


if __name__ == "__main__":
    main()

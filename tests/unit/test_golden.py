"""Golden files: the committed configs/<lab>/ and the plan of clos-4x8 are what the code produces.

Regenerate with `pytest tests/unit --update-golden` (configs also with `make configs`).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from twin.host.owned import MARKER
from twin.stages.lab_file import load_lab
from twin.stages.load.loader import load_topology
from twin.stages.plan import plan_topology
from twin.stages.render.write import rendered_files, write_configs

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_LABS = ("default", "rail", "gate")  # as GOLDEN_LABS in the Makefile


def _read_tree(root: Path) -> dict[str, str]:
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != MARKER}


def _config_drift(want: dict[str, str], have: dict[str, str]) -> list[str]:
    """What differs between rendered (`want`) and committed (`have`) files, one line per finding."""
    out = [f"missing from disk: {rel}" for rel in sorted(set(want) - set(have))]
    out += [f"not rendered any more: {rel}" for rel in sorted(set(have) - set(want))]
    changed = sorted(rel for rel in set(want) & set(have) if want[rel] != have[rel])
    out += [f"differs: {rel}" for rel in changed]
    if changed:
        rel = changed[0]
        diff = difflib.unified_diff(have[rel].splitlines(), want[rel].splitlines(),
                                    f"committed/{rel}", f"rendered/{rel}", lineterm="", n=1)
        out += list(diff)[:40]
    return out


@pytest.mark.parametrize("lab", GOLDEN_LABS)
def test_committed_configs_match_render(lab: str, repo: Path, update_golden: bool) -> None:
    plan = load_lab(repo / "labs" / f"{lab}.yaml").plan
    out = repo / "configs" / lab
    want = rendered_files(plan)
    if update_golden:
        write_configs(plan, out)
    drift = _config_drift(want, _read_tree(out))
    assert not drift, (f"configs/{lab}/ is out of date with the renderer; run `make configs` "
                       "(or pytest --update-golden) and commit the result:\n" + "\n".join(drift))


def _plan_json(repo: Path, topology: str) -> dict[str, Any]:
    plan = plan_topology(load_topology(repo / "topologies" / f"{topology}.yaml"))
    data = plan.model_dump(mode="json")
    # `source` is the path the topology was loaded from: make it independent of the checkout.
    data["source"] = Path(data["source"]).resolve().relative_to(repo).as_posix()
    return data


@pytest.mark.parametrize("topology", ["clos-4x8"])
def test_plan_matches_golden(topology: str, repo: Path, update_golden: bool) -> None:
    golden = GOLDEN / f"plan-{topology}.json"
    got = _plan_json(repo, topology)
    if update_golden:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(got, indent=2) + "\n")
    assert golden.is_file(), f"{golden} is missing; run pytest --update-golden"
    want = json.loads(golden.read_text())
    if got != want:
        got_text = json.dumps(got, indent=2).splitlines()
        want_text = json.dumps(want, indent=2).splitlines()
        diff = list(difflib.unified_diff(want_text, got_text, "golden", "planned", lineterm="", n=2))[:60]
        pytest.fail(f"the plan of {topology} changed; if that is intended, run pytest --update-golden and "
                    "commit the golden file:\n" + "\n".join(diff))


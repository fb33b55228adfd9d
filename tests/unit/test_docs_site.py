"""The documentation site (mkdocs.yml, docs/): it builds in strict mode, and a broken link, a missing
anchor, a page missing from the nav or a nav entry without its page fails the build; the reference lists
every command and option; the README stays short and points into the site."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from twin.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of the site whose mkdocs.yml is in `root` (run there: the snippets that
    include CONTRIBUTING.md are found from the working directory, as in `make test`)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the site's sources to break."""
    root = tmp_path / "repo"
    shutil.copytree(DOCS, root / "docs")
    for name in ("mkdocs.yml", "CONTRIBUTING.md"):
        shutil.copy(ROOT / name, root / name)
    return root


def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    result = _build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    site = tmp_path / "site"
    for page in ("design", "bring-up", "manage", "gate", "drills", "traffic", "telemetry", "containers",
                 "differences", "reference/commands", "reference/json", "reference/files"):
        assert (site / page / "index.html").is_file(), page
    # the contributing page is CONTRIBUTING.md itself, included whole
    contributing = (site / "contributing" / "index.html").read_text(encoding="utf-8")
    assert "Adding a gNMI path" in contributing and "Adding a SONiC table" in contributing
    assert (site / "default-lab.png").is_file() and (site / "traffic-rail-ring-spine-loss.png").is_file()


def test_the_unbroken_copy_builds(copy: Path) -> None:
    """The copy the other tests break builds as it is, so their failures are the breakage's."""
    result = _build(copy, copy / "site")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("line", "named"), [
    ("See [the drills](drill.md).", "drill.md"),
    ("See [the drills](drills.md#no-such-section).", "no-such-section"),
    ("![a picture](no-such-picture.png)", "no-such-picture.png"),
    ("See [the JSON](reference/json.md#nothing-here).", "nothing-here"),
])
def test_a_broken_link_fails_the_build(copy: Path, line: str, named: str) -> None:
    page = copy / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    result = _build(copy, copy / "site")
    assert result.returncode != 0
    assert named in result.stdout + result.stderr


def test_a_page_missing_from_the_nav_fails_the_build(copy: Path) -> None:
    (copy / "docs" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    result = _build(copy, copy / "site")
    assert result.returncode != 0
    assert "orphan.md" in result.stdout + result.stderr


def test_a_nav_entry_without_its_page_fails_the_build(copy: Path) -> None:
    (copy / "docs" / "telemetry.md").unlink()
    result = _build(copy, copy / "site")
    assert result.returncode != 0
    assert "telemetry.md" in result.stdout + result.stderr


def test_a_missing_included_file_fails_the_build(copy: Path) -> None:
    (copy / "CONTRIBUTING.md").unlink()
    result = _build(copy, copy / "site")
    assert result.returncode != 0
    assert "CONTRIBUTING.md" in result.stdout + result.stderr


def _commands() -> dict[str, list[str]]:
    """Every `twin ...` command and its options' long names, read from the typer app."""
    found: dict[str, list[str]] = {}

    def walk(command: object, path: list[str]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
            return
        params = getattr(command, "params", [])
        found[" ".join(path)] = [o for p in params if p.param_type_name == "option"
                                 for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]

    walk(typer.main.get_command(app), ["twin"])
    return found


def test_the_reference_has_every_command_and_option() -> None:
    text = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)
    by_title = {s.splitlines()[0].strip().strip("`"): s for s in sections[1:]}
    commands = _commands()
    assert len(commands) >= 20
    missing = [c for c in commands if c not in by_title]
    assert missing == [], f"docs/reference/commands.md has no '## `{missing[0]}`' section" if missing else ""
    for command, options in commands.items():
        for option in options:
            assert f"`{option}" in by_title[command], f"{command} {option} is not in docs/reference/commands.md"


def test_every_journey_page_links_into_the_reference() -> None:
    for page in ("design", "bring-up", "manage", "gate", "drills", "traffic", "telemetry", "containers"):
        assert "reference/" in (DOCS / f"{page}.md").read_text(encoding="utf-8"), page


# DESIGN §4's JSON contracts: the fields scripts may rely on, per command, and the model that makes them.
CONTRACTS = {
    "twin drill": ("twin.model.drill:DrillReport", ["drill", "target", "passed", "detect_ms", "converge_ms", "loss_ms",
                                                    "paths_before", "paths_during", "paths_after", "distribution",
                                                    "restored"]),
    "twin traffic": ("twin.model.traffic:TrafficReport", ["pattern", "qps", "flows", "links", "mmr", "jfi",
                                                          "idle_uplinks", "busbw_share", "before", "during", "after",
                                                          "blast_radius"]),
    "twin size": ("twin.design.sizing:SizeResult", ["feasible", "leaves", "spines", "servers", "links_per_pair",
                                                     "servers_per_leaf", "oversubscription", "bisection_tbps",
                                                     "reason"]),
}


@pytest.mark.parametrize("command", sorted(CONTRACTS))
def test_the_json_reference_marks_each_contract_field_and_the_model_still_has_it(command: str) -> None:
    import importlib

    target, fields = CONTRACTS[command]
    module, name = target.split(":")
    model = getattr(importlib.import_module(module), name)
    text = (DOCS / "reference" / "json.md").read_text(encoding="utf-8")
    section = re.split(r"^## ", text, flags=re.M)
    body = next(s for s in section if s.startswith(f"`{command}`"))
    for field in fields:
        assert field in model.model_fields, f"{name} lost {field}, a field DESIGN §4 fixes"
        rows = [line for line in body.splitlines() if f"`{field}`" in line]
        assert any("**contract**" in row for row in rows), f"{command} {field} is not marked contract in json.md"


def test_the_readme_is_short_starts_with_the_two_commands_and_links_every_page() -> None:
    import yaml

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines; what does not fit goes in docs/"
    assert lines[2].split()[:2] == ["make", "lab-up"] and lines[3].split()[:2] == ["make", "test"]
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    missing = [t for t in local if not (ROOT / t).exists()]
    assert missing == [], f"README.md links to files that do not exist: {missing}"

    def pages(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, list):
            return [p for item in nav for p in pages(item)]
        if isinstance(nav, dict):
            return [p for value in nav.values() for p in pages(value)]
        return []

    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    linked = set(local)
    own = ("index.md", "contributing.md")  # the README is the home page's gist; CONTRIBUTING.md is linked itself
    unlinked = [p for p in pages(config["nav"]) if f"docs/{p}" not in linked and p not in own]
    assert unlinked == [], f"README.md does not link these pages of the site: {unlinked}"


# Paths the docs name that are not in the repository, each for its reason: the files a contributor
# writes in CONTRIBUTING's worked examples, and a folder under the user's cache.
NOT_IN_THE_REPOSITORY = {
    "twin/checks/router_ids.py": "the check CONTRIBUTING's 'Adding a check' writes",
    "twin/runtime/pinned/__init__.py": "the runtime 'Adding a runtime' writes",
    "twin/kinds/frr10_switch.yaml": "the kind 'Adding a node kind' writes",
    "twin/kinds/frr10_switch.py": "the kind 'Adding a node kind' writes",
    "twin/drills/faults/link_blackhole.py": "the drill kind 'Adding a drill kind' writes",
    "twin/sonic-yang": "under $XDG_CACHE_HOME, not the repository",
}
NAMED_PATH = re.compile(r"`((?:twin|tests|labs|topologies|configs|scripts|bench|examples|schemas|docs)/[\w./-]+)`")


def test_every_file_the_docs_name_exists() -> None:
    """A path in backquotes in the site, the README or CONTRIBUTING is a file or folder of the repository
    (a renamed module leaves no stale pointer behind), or one of the few named above with the reason."""
    pages = [*DOCS.glob("**/*.md"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    missing = sorted({(str(page.relative_to(ROOT)), path) for page in pages
                      for path in (m.group(1).rstrip("/.") for m in NAMED_PATH.finditer(page.read_text()))
                      if not (ROOT / path).exists() and path not in NOT_IN_THE_REPOSITORY})
    assert missing == []
    assert all(not (ROOT / path).exists() for path in NOT_IN_THE_REPOSITORY), "an example became real: drop it"

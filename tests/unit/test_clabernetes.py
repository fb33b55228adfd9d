"""Export of a plan as the Kubernetes manifests clabernetes runs a lab from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from twin.export.clabernetes import (
    API_VERSION,
    CONFIGMAPS_FILE,
    NAMESPACE_FILE,
    TOPOLOGY_FILE,
    clabernetes_manifests,
    k8s_name,
    names_no_registry,
)
from twin.export.containerlab import schema_found, validate_clab
from twin.kinds.facts import ClabKind
from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.runtime.clab.topology import default_image
from twin.stages.lab_file import load_lab
from twin.stages.render.config_db import build_config_db, dumps

REPO = Path(__file__).resolve().parents[2]
KINDS: list[ClabKind] = ["linux", "sonic-vs"]
needs_schema = pytest.mark.skipif(not schema_found(), reason="containerlab's clab.schema.json was not found "
                                  "(set TWIN_CLAB_SCHEMA or TWIN_SONIC_REFERENCE)")


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    return {name: load_lab(REPO / f"labs/{name}.yaml").plan for name in ("default", "rail")}


def _export(plan: Plan, out: Path, kind: ClabKind, **kw: Any) -> dict[str, Any]:
    written = clabernetes_manifests(plan, out, kind=kind, image=default_image(kind), lab_name="default", **kw)
    assert [p.name for p in written] == [NAMESPACE_FILE, CONFIGMAPS_FILE, TOPOLOGY_FILE, "README.md"]
    return {
        "namespace": yaml.safe_load((out / NAMESPACE_FILE).read_text()),
        "configmaps": [d for d in yaml.safe_load_all((out / CONFIGMAPS_FILE).read_text()) if d],
        "topology": yaml.safe_load((out / TOPOLOGY_FILE).read_text()),
        "readme": (out / "README.md").read_text(),
    }


@needs_schema
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lab", ["default", "rail"])
def test_topology_embeds_a_valid_containerlab_definition(plans: dict[str, Plan], tmp_path: Path, lab: str,
                                                         kind: ClabKind) -> None:
    topology = _export(plans[lab], tmp_path, kind)["topology"]
    assert topology["apiVersion"] == API_VERSION == "clabernetes.containerlab.dev/v1alpha1"
    assert topology["kind"] == "Topology"
    definition = yaml.safe_load(topology["spec"]["definition"]["containerlab"])
    assert definition["name"] == "default"
    assert validate_clab(definition) == []


@pytest.mark.parametrize("kind", KINDS)
def test_every_bind_is_mounted_from_a_configmap_key_that_exists(plans: dict[str, Plan], tmp_path: Path,
                                                                kind: ClabKind) -> None:
    docs = _export(plans["default"], tmp_path, kind)
    spec = docs["topology"]["spec"]
    definition = yaml.safe_load(spec["definition"]["containerlab"])
    keys = {(cm["metadata"]["name"], key) for cm in docs["configmaps"] for key in cm["data"]}
    mounts = spec["deployment"]["filesFromConfigMap"]
    for name, node in definition["topology"]["nodes"].items():
        sources = sorted(bind.split(":")[0] for bind in node.get("binds", []))
        assert sorted(m["filePath"] for m in mounts.get(name, [])) == sources
    for entries in mounts.values():
        for m in entries:
            assert (m["configMapName"], m["configMapPath"]) in keys
            assert m["mode"] == "read"
    assert len(keys) == sum(len(entries) for entries in mounts.values())


def test_configmaps_hold_the_rendered_files(plans: dict[str, Plan], tmp_path: Path) -> None:
    plan = plans["default"]
    docs = _export(plan, tmp_path, "linux", namespace="fabric")
    cms = {cm["metadata"]["name"]: cm for cm in docs["configmaps"]}
    leaf1 = cms["default-leaf1-files"]
    assert leaf1["metadata"]["namespace"] == "fabric"
    assert set(leaf1["data"]) == {"config_db.json", "daemons", "frr.conf"}
    assert leaf1["data"]["config_db.json"] == dumps(build_config_db(plan, plan.node("leaf1")))
    assert "router bgp" in leaf1["data"]["frr.conf"]
    assert not any(name.startswith("default-server") for name in cms), "servers bind nothing"
    assert docs["namespace"] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "fabric", "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}}
    assert docs["topology"]["metadata"] == {"name": "default", "namespace": "fabric"}


def test_sonic_vs_nodes_mount_only_their_config_db(plans: dict[str, Plan], tmp_path: Path) -> None:
    mounts = _export(plans["default"], tmp_path, "sonic-vs")["topology"]["spec"]["deployment"]["filesFromConfigMap"]
    assert mounts["leaf1"] == [{"filePath": "default-files/leaf1/config_db.json",
                                "configMapName": "default-leaf1-files", "configMapPath": "config_db.json",
                                "mode": "read"}]


def test_readme_has_the_cluster_steps(plans: dict[str, Plan], tmp_path: Path) -> None:
    readme = _export(plans["default"], tmp_path, "linux")["readme"]
    for step in ("helm upgrade --install", "oci://ghcr.io/srl-labs/clabernetes/clabernetes",
                 f"kubectl apply -f {NAMESPACE_FILE}", "kubectl get pods -n twin",
                 "kubectl exec -n twin -it deploy/default-spine1 -- docker exec -it spine1 bash",
                 "kubectl delete -f", "docker tag twin-switch:", "docker push REGISTRY/twin-switch:"):
        assert step in readme


def test_readme_needs_no_push_for_registry_images(plans: dict[str, Plan], tmp_path: Path) -> None:
    clabernetes_manifests(plans["default"], tmp_path, kind="linux", image="registry.example.com/twin-switch:1")
    readme = (tmp_path / "README.md").read_text()
    assert "docker push" not in readme
    assert "must be able to pull registry.example.com/twin-switch:1" in readme


@pytest.mark.parametrize(("image", "local"), [("twin-switch:0.1.0", True), ("docker-sonic-vs:latest", True),
                                              ("registry.example.com/twin-switch:0.1.0", False),
                                              ("localhost:5000/twin-switch", False), ("localhost/x", False)])
def test_names_no_registry(image: str, local: bool) -> None:
    assert names_no_registry(image) is local


@pytest.mark.parametrize(("parts", "name"), [(("default", "leaf1", "files"), "default-leaf1-files"),
                                             (("Clos_4x8", "Leaf1"), "clos-4x8-leaf1")])
def test_k8s_names(parts: tuple[str, ...], name: str) -> None:
    assert k8s_name(*parts) == name


@pytest.mark.parametrize("parts", [("",), ("x" * 64,), ("__",)])
def test_k8s_names_refused(parts: tuple[str, ...]) -> None:
    with pytest.raises(TwinError, match="cannot become a Kubernetes name"):
        k8s_name(*parts)


def test_cli_writes_manifests(tmp_path: Path) -> None:
    from twin.cli.export import export_app

    app = typer.Typer()
    app.add_typer(export_app, name="export")
    out = tmp_path / "k8s"
    result = CliRunner().invoke(app, ["export", "clabernetes", str(REPO / "labs/default.yaml"), "-o", str(out),
                                      "--namespace", "lab1"])
    assert result.exit_code == 0, result.output
    assert f"wrote {out / TOPOLOGY_FILE}" in result.stdout
    assert "twin-switch:" in result.stderr and "names no registry" in result.stderr
    assert yaml.safe_load((out / TOPOLOGY_FILE).read_text())["metadata"]["namespace"] == "lab1"

    missing = CliRunner().invoke(app, ["export", "clabernetes", str(tmp_path / "nope.yaml"), "-o", str(out)])
    assert missing.exit_code == 2
    assert "file not found" in missing.stderr


def test_sonic_vs_config_is_mounted_beside_and_copied_in(plans: dict[str, Plan], tmp_path: Path) -> None:
    """As in the clab export: bound read-only at /var/sonic (start.sh renames over /etc/sonic/config_db.json,
    which a mounted file refuses) and copied in by exec lines once start.sh has loaded CONFIG_DB."""
    spec = _export(plans["default"], tmp_path, "sonic-vs")["topology"]["spec"]
    definition = yaml.safe_load(spec["definition"]["containerlab"])
    leaf1 = definition["topology"]["nodes"]["leaf1"]
    assert leaf1["binds"] == ["default-files/leaf1/config_db.json:/var/sonic/config_db.json:ro"]
    assert "CONFIG_DB_INITIALIZED" in leaf1["exec"][0]
    assert leaf1["exec"][1:3] == ["cp /var/sonic/config_db.json /etc/sonic/config_db.json",
                                  "config load -y /etc/sonic/config_db.json"]
    assert not any(":/etc/sonic/config_db.json" in bind for node in definition["topology"]["nodes"].values()
                   for bind in node.get("binds", []))


def test_imported_sonic_vs_nodes_ship_their_own_config(tmp_path: Path) -> None:
    lab = REPO / "tests/integration/data/clab-bound/bound.clab.yml"
    plan = load_lab(lab).plan
    docs = _export(plan, tmp_path, "sonic-vs")
    cms = {cm["metadata"]["name"]: cm for cm in docs["configmaps"]}
    assert json.loads(cms["default-sw1-files"]["data"]["config_db.json"]) == \
        json.loads((lab.parent / "sw1/config_db.json").read_text())
    assert not any(name.startswith(("default-h1", "default-h2")) for name in cms), "hosts bind nothing"

"""Export a twin plan for clabernetes: the same containerlab lab, one pod per node on Kubernetes.

clabernetes (https://containerlab.dev/manual/clabernetes/) runs a containerlab topology held in
a `Topology` resource: one launcher pod per node runs containerlab with that node's slice of the
topology, and links become VXLAN tunnels between pods. What clabverter would produce from the
exported .clab.yml is written directly:

- `00-namespace.yaml`: the namespace (privileged pod security: launchers run containers);
- `10-configmaps.yaml`: one ConfigMap per node, `<lab>-<node>-files`, holding the files its
  containerlab definition binds (config_db.json, frr.conf, daemons);
- `20-topology.yaml`: the `Topology` (`clabernetes.containerlab.dev/v1alpha1`), with the
  containerlab definition in `spec.definition.containerlab` and, per node,
  `spec.deployment.filesFromConfigMap` entries that mount each ConfigMap key at the bind's path
  relative to the topology, where containerlab in the launcher looks for it;
- `README.md`: the commands to run on the cluster.

File names sort in the order `kubectl apply -f DIR` must create them. The folder also holds
twin's marker `.twin-written` (twin.host.owned), which kubectl skips: it reads .yaml, .yml and .json.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from twin.export.containerlab import files_dir_name, find_clab_schema, validate_clab
from twin.host.owned import write_owned
from twin.kinds.facts import ClabKind
from twin.model.errors import TwinError
from twin.model.plan import Plan
from twin.runtime.clab.topology import bind_targets, clab_topology, dump_yaml, linux_image, node_files

API_VERSION = "clabernetes.containerlab.dev/v1alpha1"  # clabernetes from srl-labs, installed with helm
HELM_CHART = "oci://ghcr.io/srl-labs/clabernetes/clabernetes"
CONFIGMAP_MAX = 1_000_000   # etcd keeps objects under 1 MiB; leave room for the metadata
K8S_NAME_MAX = 63           # DNS-1123 label, as Deployments and Services named after nodes must be
NAMESPACE_FILE = "00-namespace.yaml"
CONFIGMAPS_FILE = "10-configmaps.yaml"
TOPOLOGY_FILE = "20-topology.yaml"


def k8s_name(*parts: str) -> str:
    """A DNS-1123 name from `parts` joined by '-': lower case, other characters as '-'."""
    name = re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")
    if not name or len(name) > K8S_NAME_MAX:
        raise TwinError(f"'{'-'.join(parts)}' cannot become a Kubernetes name (1 to {K8S_NAME_MAX} of a-z, 0-9, '-')")
    return name


def clabernetes_manifests(plan: Plan, out_dir: Path, *, kind: ClabKind, image: str, namespace: str = "twin",
                          host_image: str | None = None, lab_name: str | None = None) -> list[Path]:
    """Write the manifests clabernetes needs for `plan` and a README to `out_dir`; return them.

    `out_dir` is a new or empty folder or one an earlier export wrote (twin.host.owned): TwinError,
    with nothing written, otherwise; files of an earlier export no longer wanted are removed."""
    lab = lab_name or plan.name
    definition = clab_topology(plan, kind=kind, image=image, files_dir=files_dir_name(lab), lab_name=lab,
                               host_image=host_image)
    errors = validate_clab(definition)
    if errors:
        raise TwinError(f"the containerlab definition does not validate against {find_clab_schema()}:\n"
                        + "\n".join(errors))
    ns = k8s_name(namespace)
    configmaps = configmap_manifests(plan, kind, lab, ns)
    topology = topology_manifest(plan, kind, lab, ns, definition)
    docs = {
        NAMESPACE_FILE: dump_yaml(namespace_manifest(ns)),
        CONFIGMAPS_FILE: "".join("---\n" + dump_yaml(cm) for cm in configmaps),
        TOPOLOGY_FILE: dump_yaml(topology),
        "README.md": readme(lab=lab, namespace=ns, topology=topology["metadata"]["name"],
                            images=sorted({image, linux_image(kind, image, host_image)}),
                            first_switch=_first_switch(plan)),
    }
    return write_owned(out_dir, docs, "twin export clabernetes", prune=True)


def namespace_manifest(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": namespace, "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}}


def configmap_name(lab: str, node: str) -> str:
    return k8s_name(lab, node, "files")


def configmap_manifests(plan: Plan, kind: ClabKind, lab: str, namespace: str) -> list[dict[str, Any]]:
    """One ConfigMap per node that binds files, keyed by file name (config_db.json, frr.conf, daemons)."""
    by_node: dict[str, dict[str, str]] = {}
    for rel, text in node_files(plan, kind).items():
        node, name = rel.split("/", 1)
        by_node.setdefault(node, {})[name] = text
    manifests = []
    for node, data in by_node.items():
        size = sum(len(k.encode()) + len(v.encode()) for k, v in data.items())
        if size > CONFIGMAP_MAX:
            raise TwinError(f"{node}: its files take {size} bytes, more than a ConfigMap holds ({CONFIGMAP_MAX})")
        manifests.append({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": configmap_name(lab, node), "namespace": namespace,
                                       "labels": {"app.kubernetes.io/managed-by": "twin", "twin/lab": k8s_name(lab)}},
                          "data": dict(sorted(data.items()))})
    return manifests


def files_from_configmap(plan: Plan, kind: ClabKind, lab: str) -> dict[str, list[dict[str, str]]]:
    """Per node, where each ConfigMap key is mounted: the bind's source path in the definition."""
    rel = files_dir_name(lab)
    mounts: dict[str, list[dict[str, str]]] = {}
    for node in plan.nodes:
        entries = [{"filePath": f"{rel}/{node.name}/{name}", "configMapName": configmap_name(lab, node.name),
                    "configMapPath": name, "mode": "read"} for name in bind_targets(node, kind)]
        if entries:
            mounts[node.name] = entries
    return mounts


def topology_manifest(plan: Plan, kind: ClabKind, lab: str, namespace: str,
                      definition: dict[str, Any]) -> dict[str, Any]:
    """The Topology resource: the containerlab definition as text, plus the files each node mounts."""
    return {
        "apiVersion": API_VERSION,
        "kind": "Topology",
        "metadata": {"name": k8s_name(lab), "namespace": namespace},
        "spec": {
            "naming": "prefixed",
            "connectivity": "vxlan",
            "deployment": {"filesFromConfigMap": files_from_configmap(plan, kind, lab)},
            "definition": {"containerlab": dump_yaml(definition)},
        },
    }


def _first_switch(plan: Plan) -> str:
    switches = plan.switches
    return switches[0].name if switches else plan.nodes[0].name


def names_no_registry(image: str) -> bool:
    """Whether `image` names no registry host, so a cluster would look for it on Docker Hub."""
    first = image.split("/", 1)[0]
    return "/" not in image or not ("." in first or ":" in first or first == "localhost")


def readme(*, lab: str, namespace: str, topology: str, images: list[str], first_switch: str) -> str:
    """The steps a user runs on their cluster, with this lab's names filled in."""
    local = [i for i in images if names_no_registry(i)]
    push = "".join(f"    docker tag {i} REGISTRY/{i}\n    docker push REGISTRY/{i}\n" for i in local)
    pull_note = (
        "The cluster pulls node images itself. These name no registry, so it would look for them on\n"
        "Docker Hub; push them to a registry the cluster can pull from:\n\n" + push
        + "\nthen regenerate these manifests with `--image REGISTRY/...` (and `--host-image`), e.g.\n"
        f"`twin export clabernetes TOPOLOGY -o DIR --image REGISTRY/{images[0]}`.\n"
        if local else "The cluster must be able to pull " + ", ".join(images) + ".\n")
    return f"""# {lab} on Kubernetes with clabernetes

Generated by `twin export clabernetes`: namespace `{namespace}`, Topology `{topology}`.

## 1. Make the images pullable

{pull_note}
## 2. Install clabernetes (once per cluster)

    helm upgrade --install --create-namespace --namespace c9s clabernetes {HELM_CHART}

## 3. Deploy the lab

    kubectl apply -f {NAMESPACE_FILE} -f {CONFIGMAPS_FILE} -f {TOPOLOGY_FILE}

(or `kubectl apply -f .` in this folder: the files sort in the order they must be created).

## 4. Watch it come up

    kubectl get topologies -n {namespace}
    kubectl get pods -n {namespace} -o wide -w

One launcher pod per node (`{topology}-<node>-...`); each runs containerlab with its node.

## 5. Use a node

    kubectl exec -n {namespace} -it deploy/{topology}-{first_switch} -- docker exec -it {first_switch} bash
    kubectl exec -n {namespace} -it deploy/{topology}-{first_switch} -- \\
        docker exec {first_switch} vtysh -c 'show bgp summary'

## 6. Delete it

    kubectl delete -f {TOPOLOGY_FILE} -f {CONFIGMAPS_FILE} -f {NAMESPACE_FILE}

## Notes

- Links between pods are VXLAN tunnels: their MTU is the pod network's minus 50 bytes. The
  fabric's ports use MTU 9100, so large packets (and BGP updates the size of the ports' MSS)
  are dropped unless the pod network carries jumbo frames; otherwise lower `fabric.mtu` in the
  topology, or try `spec.connectivity: slurpeeth` (TCP tunnels).
- Newer clabernetes releases (the `clabernetes/clabernetes` project) name the API group
  `c9s.run`: change `apiVersion` in `{TOPOLOGY_FILE}` to `c9s.run/v1alpha1` there.
- twin's gNMI agent and drills are not part of this export: it runs the fabric (FRR, BGP, BFD,
  servers) only.
"""

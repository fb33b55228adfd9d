"""Validate config_db.json against SONiC's own YANG models with libyang (Debian's yanglint).

As SONiC's sonic-yang-mgmt does, each CONFIG_DB table becomes the container of that name in its
module, each key an entry of the list whose key count matches (`INTERFACE|Ethernet0` goes to
INTERFACE_LIST, `INTERFACE|Ethernet0|10.0.0.1/31` to INTERFACE_IPPREFIX_LIST), each field a leaf,
and the fields of map tables (DSCP_TO_TC_MAP) entries of the nested list. The instance data is
written as XML, where every value is text, so CONFIG_DB's strings need no type conversion.

The models are not part of this repository: they are found through `--models`, the
TWIN_SONIC_YANG environment variable, or the sonic-yang-models folder of SONiC's reference
artefacts (TWIN_SONIC_REFERENCE, else $XDG_DATA_HOME/twin/reference: twin.host.reference). Their
templates are rendered and the schema tree indexed once into a cache keyed by the models' contents.

yanglint loads (implements) only the modules of the tables a config uses and, transitively, the
modules they import, where their leafrefs and musts look (modules_to_load): VLAN_MEMBER needs
sonic-port, sonic-portchannel, sonic-mirror-session and sonic-interface besides sonic-vlan.

libyang stops at the first error of a document; to report every error, the offending field (or
entry) is dropped and the document validated again, a few rounds at most.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jinja2

from twin.host.reference import search_path
from twin.model.config_db import ConfigDb
from twin.model.errors import TwinError
from twin.model.findings import Finding, SwitchConfig

MODELS_ENV = "TWIN_SONIC_YANG"
ROUNDS = 12
INDEX_FORMAT = "3"  # bumped when parse_tree records more, so older caches are rebuilt

NODE = re.compile(r"^(?P<indent>[\s|]*)\+--(?:rw|ro|-w|-x|-n|--) (?P<name>[^\s*?!]+)(?P<flag>[*?!]?)"
                  r"(?:\s+\[(?P<keys>[^\]]+)\])?")
CASE = re.compile(r"^(?P<indent>[\s|]*)\+--:\((?P<name>[^)]+)\)")
ERROR = re.compile(r'^libyang\[\d+\]: (?P<msg>.*?)(?: \(path: (?:Data|Schema) location "(?P<path>[^"]+)"'
                   r"(?:, line number \d+)?\.\))?$")


def models_search_path(explicit: Path | None = None) -> list[Path]:
    """The sonic-yang-models folders looked in, first one first: the one named (option, then
    TWIN_SONIC_YANG) alone, else the one in each reference folder (TWIN_SONIC_REFERENCE, else
    $XDG_DATA_HOME/twin/reference: twin.host.reference)."""
    if explicit is not None:
        return [explicit]
    if os.environ.get(MODELS_ENV):
        return [Path(os.environ[MODELS_ENV])]
    return [root / "sonic-yang-models" for root in search_path()]


def find_models(explicit: Path | None = None) -> Path | None:
    """The first folder of models_search_path that holds yang-models/, or None."""
    return next((c for c in models_search_path(explicit) if (c / "yang-models").is_dir()), None)


def models_not_found(explicit: Path | None = None) -> str:
    """What find_models found nothing in, for messages: `YANG models not found (looked in ...)`."""
    looked = ", ".join(str(c / "yang-models") for c in models_search_path(explicit))
    return f"SONiC's YANG models not found (looked in {looked})"


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "twin" / "sonic-yang"


def prepare(models: Path) -> Path:
    """Rendered models plus index.json (tables -> module, namespace, lists) in a cache dir."""
    files = sorted((models / "yang-models").glob("*.yang")) + sorted((models / "yang-templates").glob("*.j2"))
    digest = hashlib.sha256(INDEX_FORMAT.encode())
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    cache = _cache_root() / digest.hexdigest()[:16]
    if (cache / "index.json").exists():
        return cache
    if shutil.which("yanglint") is None:
        raise TwinError("yanglint is not installed: apt-get install libyang2-tools (make lab-up installs it)")
    cache.parent.mkdir(parents=True, exist_ok=True)
    # built beside its final place, so the rename is atomic and never crosses file systems
    tmp = Path(tempfile.mkdtemp(dir=cache.parent, prefix=".build-"))
    try:
        index = _index(models, files, tmp)
        (tmp / "index.json").write_text(json.dumps(index))
        if not cache.exists():
            tmp.rename(cache)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return cache


def _index(models: Path, files: list[Path], tmp: Path) -> dict[str, Any]:
    """Render the templates, copy the models into `tmp` and index the schema tree yanglint prints."""
    for f in files:
        if f.suffix == ".j2":  # SONiC renders these at build time; the non-CVL flavour is the one it validates with
            text = jinja2.Template(f.read_text()).render(yang_model_type="py")
            (tmp / f.name.removesuffix(".j2")).write_text(text)
        else:
            shutil.copy(f, tmp / f.name)
    proc = subprocess.run(["yanglint", "-p", str(tmp), "-f", "tree", *sorted(str(p) for p in tmp.glob("*.yang"))],
                          capture_output=True, text=True, env=_env(tmp))
    if proc.returncode != 0:
        raise TwinError(f"yanglint could not load the SONiC models in {models}: {proc.stderr.strip()[-400:]}")
    return parse_tree(proc.stdout, {p.stem: _namespace(p) for p in tmp.glob("*.yang")})


def _namespace(path: Path) -> str:
    m = re.search(r'namespace\s+"([^"]+)"', path.read_text())
    return m.group(1) if m else ""


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home)}  # yanglint keeps a history file in $HOME


def _leaf_type(line: str, m: re.Match[str]) -> str:
    """The type yanglint's tree prints after a leaf's name (`uint32`, `stypes:admin_status`, `union`)."""
    rest = line[m.end():].split()
    return rest[0] if rest else ""


def parse_tree(text: str, namespaces: dict[str, str]) -> dict[str, Any]:
    """yanglint's tree output -> {table: {module, ns, top, lists: [{name, keys, leaves, leaflists, map}]}}."""
    index: dict[str, Any] = {}
    module = top = table = None
    current: dict[str, Any] | None = None
    nested: dict[str, Any] | None = None
    in_body = False
    transparent: list[int] = []  # raw depths of the open choice/case nodes
    for line in text.splitlines():
        if line.startswith("module: "):
            module, in_body = line.split(": ", 1)[1].strip(), True
            transparent = []
            continue
        if line.strip().startswith(("augment ", "rpcs:", "notifications:", "grouping ")):
            in_body = False
            continue
        case = CASE.match(line)
        m = NODE.match(line)
        if (not m and not case) or not in_body or module is None:
            continue
        raw = (len((m or case).group("indent")) - 2) // 3  # type: ignore[union-attr]
        while transparent and transparent[-1] >= raw:
            transparent.pop()
        if case or (m and m.group("name").startswith("(")):
            transparent.append(raw)  # a choice or a case: its leaves belong to the list around it
            continue
        assert m is not None
        depth = raw - len(transparent)
        name, flag, keys = m.group("name"), m.group("flag"), m.group("keys")
        if depth == 0:
            top = name
        elif depth == 1:
            table = name
            index.setdefault(table, {"module": module, "ns": namespaces.get(module, ""), "top": top, "lists": []})
        elif depth == 2 and table and flag == "*" and keys:
            current = {"name": name, "keys": keys.split(), "leaves": [], "leaflists": [], "map": None}
            index[table]["lists"].append(current)
            nested = None
        elif depth == 2 and table:  # a container of fixed fields, e.g. DEVICE_METADATA/localhost
            current = {"name": name, "keys": [], "leaves": [], "leaflists": [], "map": None, "container": True}
            index[table]["lists"].append(current)
            nested = None
        elif depth == 3 and current is not None:
            kind = _leaf_type(line, m)
            if flag == "*" and keys:
                nested = {"name": name, "key": keys.split()[0], "value": None}
                current["map"] = nested
            elif flag == "*":
                current["leaflists"].append(name)
                current.setdefault("types", {})[name] = kind
            else:
                current["leaves"].append(name)
                current.setdefault("types", {})[name] = kind
                if not flag and name not in current["keys"] and len(transparent) == 0:
                    current.setdefault("mandatory", []).append(name)
        elif depth == 4 and nested is not None and name != nested["key"] and nested["value"] is None:
            nested["value"] = name
    return index


def to_xml(db: ConfigDb, index: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    """(XML document, problems found while translating: (table|key, field, message))."""
    root = ET.Element("config")
    tops: dict[str, ET.Element] = {}
    problems: list[tuple[str, str, str]] = []
    for table, rows in db.items():
        if not isinstance(rows, dict):
            continue
        spec = index.get(table)
        if spec is None:
            problems.append((table, "", "no SONiC YANG model defines this table"))
            continue
        top = tops.get(spec["module"])
        if top is None:
            top = ET.SubElement(root, spec["top"], xmlns=spec["ns"])
            tops[spec["module"]] = top
        container = ET.SubElement(top, table)
        for key, row in rows.items():
            parts = key.split("|")
            lst = _pick_list(spec["lists"], parts)
            if lst is None:
                counts = sorted({len(x["keys"]) for x in spec["lists"] if not x.get("container")})
                problems.append((f"{table}|{key}", "", f"a {table} key has {', '.join(map(str, counts)) or 'fixed'} "
                                 f"part(s) separated by '|', this one has {len(parts)}"))
                continue
            entry = ET.SubElement(container, lst["name"])
            for k, v in zip(lst["keys"], parts, strict=False):
                ET.SubElement(entry, k).text = v
            for field, value in (row or {}).items():
                _add_field(entry, lst, field, value)
    # libyang reads several top-level nodes from one document; each module's container is one
    return "\n".join(ET.tostring(top, encoding="unicode") for top in root), problems


def _pick_list(lists: list[dict[str, Any]], parts: list[str]) -> dict[str, Any] | None:
    for lst in lists:
        if lst.get("container") and len(parts) == 1 and lst["name"] == parts[0]:
            return lst
    for lst in lists:
        if not lst.get("container") and len(lst["keys"]) == len(parts):
            return lst
    return None


def _add_field(entry: ET.Element, lst: dict[str, Any], field: str, value: Any) -> None:
    if field in lst["leaflists"] or isinstance(value, list):
        values = value if isinstance(value, list) else [v for v in str(value).split(",") if v]
        for v in values:
            ET.SubElement(entry, field).text = str(v)
    elif field not in lst["leaves"] and lst["map"] is not None and lst["map"]["value"]:
        item = ET.SubElement(entry, lst["map"]["name"])
        ET.SubElement(item, lst["map"]["key"]).text = field
        ET.SubElement(item, lst["map"]["value"]).text = str(value)
    else:
        ET.SubElement(entry, field).text = str(value)


def locate(path: str | None) -> tuple[str, str, str]:
    """libyang's data path -> (table, key, field)."""
    if not path:
        return "", "", ""
    steps = [s for s in re.split(r"/(?![^\[]*\])", path) if s]
    table = steps[1].split(":")[-1] if len(steps) > 1 else ""
    key = "|".join(re.findall(r"='([^']*)'", steps[2])) if len(steps) > 2 else ""
    if len(steps) > 2 and "[" not in steps[2]:
        key = steps[2].split(":")[-1]
    field = ""
    if len(steps) > 3:
        inner = re.findall(r"='([^']*)'", steps[3])
        field = inner[0] if inner else steps[3].split(":")[-1]
    return table, key, field


def _run(cache: Path, docs: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    """Validate XML documents, one yanglint session per CPU; the first error of each failing one."""
    names = sorted(docs)
    workers = max(1, min(os.cpu_count() or 1, len(names) // 16 or 1))
    chunks = [names[i::workers] for i in range(workers)]
    out: dict[str, tuple[str, str | None]] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(lambda chunk: _session(cache, {n: docs[n] for n in chunk}), chunks):
            out.update(part)
    return out


def _session(cache: Path, docs: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    # only the modules whose containers the documents use, and what they import: every implemented
    # module adds its default nodes to every document, so loading all 140 triples the validation time
    used = set(re.findall(r'<([\w-]+) xmlns="', "\n".join(docs.values())))
    modules = modules_to_load(cache, used)
    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, str] = {}
        for name, text in docs.items():
            p = Path(tmp) / f"{len(paths)}.xml"
            p.write_text(text)
            paths[str(p)] = name
        script = [f"searchpath {cache}", *(f"load {m}" for m in modules),
                  *(f"data -t config {p}" for p in paths)]
        proc = subprocess.run(["yanglint"], input="\n".join(script) + "\n", capture_output=True, text=True,
                              env=_env(Path(tmp)), timeout=300)
    out: dict[str, tuple[str, str | None]] = {}
    last: tuple[str, str | None] | None = None
    for line in (proc.stdout + proc.stderr).splitlines():
        m = ERROR.match(line)
        if m and "check skipped" not in line and "Previous warning" not in line:
            last = (m.group("msg"), m.group("path"))
        failed = re.search(r'Failed to parse input data file "([^"]+)"', line)
        if failed and failed.group(1) in paths:
            out[paths[failed.group(1)]] = last or ("rejected by libyang", None)
            last = None
    return out


def modules_to_load(cache: Path, used: set[str]) -> list[str]:
    """The modules yanglint must load (implement) to judge documents whose top containers are `used`
    (each module's top container is named after it; the index says so where one is not).

    A module that is only found through an import is not implemented, and libyang refuses a leafref
    or `must` that looks into it ("Unknown/non-implemented module"). A table's leafrefs and musts name
    other tables only through imports, so the used modules and everything they import, transitively,
    is what is needed: VLAN_MEMBER's `port` (sonic-vlan) is a leafref to sonic-port's PORT or
    sonic-portchannel's PORTCHANNEL, and its musts look into sonic-mirror-session, sonic-portchannel's
    PORTCHANNEL_MEMBER and sonic-interface's INTERFACE.
    """
    index = json.loads((cache / "index.json").read_text()) if (cache / "index.json").exists() else {}
    tops = {spec["top"]: spec["module"] for spec in index.values()}  # a top container -> its module
    return sorted(_with_imports(cache, {tops.get(name, name) for name in used})) or ["sonic-types"]


def _with_imports(cache: Path, used: set[str]) -> set[str]:
    """The used modules and every module they import, transitively."""
    present = {p.stem for p in cache.glob("*.yang")}
    out: set[str] = set()
    todo = [m for m in used if m in present]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        text = (cache / f"{name}.yang").read_text()
        todo += [m for m in re.findall(r"^\s*import\s+([\w-]+)", text, re.M) if m in present and m not in out]
    return out


def _drop(db: ConfigDb, table: str, key: str, field: str) -> bool:
    """Remove what libyang refused so the next round can look further; False when it cannot be
    pinned down to one field or entry (then the switch's first error is all it reports)."""
    rows = db.get(table)
    if not isinstance(rows, dict) or key not in rows:
        return False
    if not field:
        del rows[key]
        return True
    if isinstance(rows[key], dict) and field in rows[key]:
        del rows[key][field]
        return True
    return False


def yang_findings(cfgs: list[SwitchConfig], models: Path) -> list[Finding]:
    cache = prepare(models)
    index = json.loads((cache / "index.json").read_text())
    out: list[Finding] = []
    pending: dict[str, ConfigDb] = {}
    dropped: dict[str, set[str]] = {}
    copied: set[str] = set()
    by_name = {c.name: c for c in cfgs}
    docs: dict[str, str] = {}
    for cfg in cfgs:
        docs[cfg.name], problems = to_xml(cfg.db, index)
        for where, field, message in problems:
            out.append(Finding("yang", cfg.file, f"{where} {field}".strip(), message,
                               "check the table and key against SONiC's YANG models"))
        pending[cfg.name] = cfg.db
    for _ in range(ROUNDS):
        if not pending:
            break
        failures = _run(cache, {n: docs.get(n) or to_xml(db, index)[0] for n, db in pending.items()})
        docs = {}
        still: dict[str, ConfigDb] = {}
        for name, (message, path) in failures.items():
            table, key, field = locate(path)
            missing = re.match(r'Mandatory node "([^"]+)"', message)
            if missing and missing.group(1) in dropped.get(name, set()):
                continue  # a consequence of an earlier round's removal, not a new error
            where = f"{table}|{key} {field}".strip() if table else "(document)"
            out.append(Finding("yang", by_name[name].file, where, f"SONiC YANG: {message.rstrip('.')}",
                               "use a value SONiC's model accepts"))
            if name not in copied:  # the user's config is never changed, only this copy
                pending[name] = copy.deepcopy(pending[name])
                copied.add(name)
            if table and _drop(pending[name], table, key, field):
                dropped.setdefault(name, set()).add(field)
                still[name] = pending[name]
        pending = still
    return out


def builtin_schema(models: Path) -> dict[str, Any]:
    """The digest of SONiC's models that twin's built-in schema (twin/stages/schema.json) holds:
    per CONFIG_DB table, its lists with keys, leaves and leaf-lists with their types, and the
    mandatory leaves. `make schema` writes it; a fidelity test checks it matches the models."""
    index = json.loads((prepare(models) / "index.json").read_text())
    tables: dict[str, Any] = {}
    for table, spec in sorted(index.items()):
        lists = []
        for lst in spec["lists"]:
            types = lst.get("types", {})
            lists.append({
                "name": lst["name"], "keys": lst["keys"], "container": bool(lst.get("container")),
                "leaves": {n: types.get(n, "") for n in lst["leaves"]},
                "leaflists": {n: types.get(n, "") for n in lst["leaflists"]},
                "mandatory": sorted(lst.get("mandatory", [])), "map": lst["map"],
            })
        tables[table] = {"module": spec["module"], "lists": lists}
    source = (models / "SOURCE").read_text().split() if (models / "SOURCE").exists() else []
    return {"source": " ".join(source), "tables": tables}


def write_builtin_schema(models: Path, path: Path) -> None:
    """`make schema`: the digest, one table a line so a change of the models reads as a small diff."""
    schema = builtin_schema(models)
    tables = sorted(schema["tables"].items())
    lines = [f'{{"source": {json.dumps(schema["source"])}, "tables": {{']
    lines += [f"{json.dumps(name)}: {json.dumps(spec, sort_keys=True)}{',' if i < len(tables) - 1 else ''}"
              for i, (name, spec) in enumerate(tables)]
    path.write_text("\n".join([*lines, "}}"]) + "\n")

#!/usr/bin/env python3
"""Write twin/host/reference_manifest.json: which files of sonic-buildimage, at one commit, make up the
SONiC reference artefacts twin installs on a user's machine (`twin reference install`), where each
goes, and its SHA-256.

    python scripts/reference_manifest.py --reference DIR --buildimage GIT_DIR [--commit SHA]

DIR is a reference folder as twin lays it out (sonic-yang-models/, sonic-frr-templates/); GIT_DIR a
git directory of sonic-buildimage holding the commit (default: the one DIR's SOURCE files name). Each
file of DIR is matched to the blob of the same content and name in that commit's tree, so the
manifest says exactly where SONiC keeps it (a blob of another name only where none has the same, as
etc/sonic/constants.yml, which sonic-buildimage keeps as files/build_templates/constants.yml.j2 and
SONiC's docker_init.sh reads through Jinja); a file with no such blob is an error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "twin" / "host" / "reference_manifest.json"
# what a user's machine needs: the models (twin validate, the switches' Set validation) and the
# FRR templates (--sonic-templates); the bgpcfgd test vectors and model tests are for twin's own tests
PARTS = ("sonic-yang-models/yang-models", "sonic-yang-models/yang-templates", "sonic-frr-templates/usr",
         "sonic-frr-templates/etc")


def blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--buildimage", type=Path, required=True)
    parser.add_argument("--commit")
    args = parser.parse_args()
    commit = args.commit or (args.reference / "sonic-yang-models" / "SOURCE").read_text().split()[0]
    tree = subprocess.run(["git", "--git-dir", str(args.buildimage), "ls-tree", "-r", commit], check=True,
                          capture_output=True, text=True).stdout
    by_blob: dict[str, list[str]] = {}
    for line in tree.splitlines():
        meta, path = line.split("\t", 1)
        by_blob.setdefault(meta.split()[2], []).append(path)
    date = subprocess.run(["git", "--git-dir", str(args.buildimage), "show", "-s", "--format=%cs", commit],
                          check=True, capture_output=True, text=True).stdout.strip()
    files: dict[str, dict[str, str]] = {}
    missing = []
    for part in PARTS:
        for path in sorted((args.reference / part).rglob("*")):
            if not path.is_file():
                continue
            data = path.read_bytes()
            dest = str(path.relative_to(args.reference))
            same = by_blob.get(blob(data), [])   # the same name first (constants.yml is SONiC's constants.yml.j2)
            sources = [s for s in same if Path(s).name == path.name] or same
            if not sources:
                missing.append(dest)
                continue
            files[dest] = {"src": sorted(sources)[0], "sha256": hashlib.sha256(data).hexdigest()}
    if missing:
        sys.exit(f"no blob of the same content in {commit} for: {', '.join(missing)}")
    OUT.write_text(json.dumps({"repository": "sonic-net/sonic-buildimage", "commit": commit, "date": date,
                               "files": files}, indent=1, sort_keys=True) + "\n")
    print(f"{OUT}: {len(files)} files of sonic-net/sonic-buildimage at {commit}")


if __name__ == "__main__":
    main()

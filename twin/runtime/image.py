"""The switch image, built locally with no registry: a minimal Debian rootfs with FRR, imported.

`debootstrap --variant=minbase --include=<packages> bookworm` fills a folder from Debian's
mirror; the docs and apt caches are dropped and `docker import` makes it an image tagged
`twin-switch:<twin version>`. The image carries a label with the hash of everything it was built
from (suite, mirror, packages, this recipe): when an image with the tag and that hash exists,
nothing is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from twin import __version__
from twin.host.dockerapi import client
from twin.model.errors import RuntimeBackendError, TwinError

REPOSITORY = "twin-switch"
INPUTS_LABEL = "org.twin.inputs"
RECIPE = 3  # bump when the way the rootfs is made changes
# FRR, SONiC's databases (redis-server) and what the runtime and drills run inside a switch
# (ip, ping, nft, iptables, sysctl, ps).
PACKAGES = ("frr", "frr-pythontools", "redis-server", "iproute2", "iputils-ping", "procps", "nftables", "iptables")
TRIM = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "var/cache/apt",
        "var/lib/apt/lists")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ImageSpec:
    suite: str = "bookworm"
    mirror: str = field(default_factory=lambda: os.environ.get("TWIN_DEBIAN_MIRROR", "http://deb.debian.org/debian"))
    packages: tuple[str, ...] = PACKAGES
    tag: str = __version__

    @property
    def name(self) -> str:
        return f"{REPOSITORY}:{self.tag}"

    @property
    def inputs(self) -> str:
        """Hash of everything the image is built from: a change to any of it means a rebuild."""
        text = "\n".join([f"recipe={RECIPE}", self.suite, self.mirror, *sorted(self.packages)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def debootstrap_argv(self, root: Path) -> list[str]:
        return ["debootstrap", "--variant=minbase", f"--include={','.join(self.packages)}",
                self.suite, str(root), self.mirror]

    def import_changes(self) -> list[str]:
        """Dockerfile instructions `docker import` applies: what the container runs and the label."""
        return ['CMD ["sleep", "infinity"]', f"LABEL {INPUTS_LABEL}={self.inputs}",
                f"LABEL org.twin.version={__version__}"]


@dataclass(frozen=True)
class BuildResult:
    image: str
    built: bool          # False when an up-to-date image was found
    seconds: float
    size_mb: float


def current(spec: ImageSpec) -> bool:
    """Whether the image exists and was built from these inputs."""
    import docker.errors

    try:
        image = client().images.get(spec.name)
    except docker.errors.ImageNotFound:
        return False
    labels = image.labels or {}
    return bool(labels.get(INPUTS_LABEL) == spec.inputs)


def ensure_image(spec: ImageSpec | None = None, *, force: bool = False,
                 progress: Progress = lambda _: None) -> BuildResult:
    """Build the switch image unless an up-to-date one exists (or `force`)."""
    spec = spec or ImageSpec()
    start = time.monotonic()
    if not force and current(spec):
        return BuildResult(spec.name, False, time.monotonic() - start, _size_mb(spec))
    if os.geteuid() != 0:
        raise TwinError("building the switch image needs root (debootstrap); run as root")
    if shutil.which("debootstrap") is None:
        raise TwinError("debootstrap is not installed: run 'make image' (it installs it) or "
                        "'apt-get install debootstrap'")
    workdir = Path(tempfile.mkdtemp(prefix="twin-image-", dir="/var/tmp"))
    try:
        root = workdir / "rootfs"
        progress(f"debootstrap {spec.suite} with {', '.join(spec.packages)} (about 40 s)")
        proc = subprocess.run(spec.debootstrap_argv(root), capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            log = root / "debootstrap" / "debootstrap.log"
            detail = log.read_text()[-1500:] if log.exists() else (proc.stdout + proc.stderr)[-1500:]
            raise RuntimeBackendError(f"debootstrap failed (exit {proc.returncode}) from {spec.mirror}: {detail}\n"
                                      "set TWIN_DEBIAN_MIRROR to a Debian mirror this machine reaches")
        for sub in TRIM:
            shutil.rmtree(root / sub, ignore_errors=True)
        progress(f"docker import as {spec.name}")
        tarball = workdir / "rootfs.tar"
        subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(tarball), "."], check=True)
        client().api.import_image(src=str(tarball), repository=REPOSITORY, tag=spec.tag,
                                   changes=spec.import_changes())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if not current(spec):
        raise RuntimeBackendError(f"docker import did not produce {spec.name} with label {INPUTS_LABEL}")
    return BuildResult(spec.name, True, time.monotonic() - start, _size_mb(spec))


def _size_mb(spec: ImageSpec) -> float:
    size = client().images.get(spec.name).attrs.get("Size", 0)
    return round(float(size) / 2**20, 1)

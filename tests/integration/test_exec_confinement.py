"""An imported containerlab file's `exec:` lines run confined, as containerlab runs them inside the node's
container: in the node's network namespace, the host's file system read-only except the node's run
directory, a private /tmp. `twin up` reports each line it ran; a failed line fails `twin up` cleanly."""

from __future__ import annotations

import json
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from labtools import leftovers, netns_exec, twin, unique

HOST_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")


@pytest.fixture
def lab_name() -> Iterator[str]:
    """A unique lab name (`hb...`); the lab is removed after the test, pass or fail."""
    name = unique("hb")
    yield name
    twin("down", "--name", name, check=False)
    assert not leftovers(name), f"teardown left {leftovers(name)}"


def write_lab(folder: Path, h1_lines: list[str]) -> Path:
    """Two imported hosts on one link; h1 runs `h1_lines`."""
    h1 = "\n".join(f"        - {json.dumps(line)}" for line in h1_lines)
    path = folder / "lab.clab.yml"
    path.write_text(textwrap.dedent("""\
        name: confined
        topology:
          nodes:
            h1:
              kind: linux
              exec:
        {h1}
            h2:
              kind: linux
              exec:
                - ip addr add 192.168.7.2/24 dev eth1
          links:
            - endpoints: ["h1:eth1", "h2:eth1"]
        """).format(h1=h1))
    return path


def test_exec_lines_configure_the_node_and_cannot_touch_the_host(tmp_path: Path, lab_name: str) -> None:
    tag = uuid.uuid4().hex[:8]
    host_files = [Path(f"/root/twin-exec-{tag}"), Path(f"/etc/twin-pwned-{tag}"), Path(f"/tmp/twin-exec-{tag}"),
                  Path(f"/run/twin-exec-{tag}")]
    lines = ["ip addr add 192.168.7.1/24 dev eth1",
             "ip route add 10.77.0.0/16 via 192.168.7.2",
             "sysctl -w net.ipv4.ip_forward=1",
             "echo confined > made-here.txt",                        # the working directory: the run dir
             f"echo x > /tmp/twin-exec-{tag} && test -s /tmp/twin-exec-{tag}",  # a private /tmp works
             *(f"touch {p} 2>/dev/null || true" for p in host_files if not p.is_relative_to("/tmp"))]
    forward = HOST_FORWARD.read_text()
    proc = twin("up", str(write_lab(tmp_path, lines)), "--name", lab_name, "--timeout", "10", "--json",
                timeout=300)
    doc = json.loads(proc.stdout)
    assert doc["healthy"], doc
    for line in lines:  # `twin up` says what it ran, per node
        assert any(note.startswith(f"h1: ran exec line '{line}'") for note in doc["notes"]), (line, doc["notes"])
    assert any(note.startswith("h2: ran exec line 'ip addr add 192.168.7.2/24 dev eth1'") for note in doc["notes"])

    assert "192.168.7.1/24" in netns_exec(lab_name, "h1", "ip", "-br", "addr", "show", "eth1").stdout
    assert "10.77.0.0/16 via 192.168.7.2" in netns_exec(lab_name, "h1", "ip", "route").stdout
    assert netns_exec(lab_name, "h1", "sysctl", "-n", "net.ipv4.ip_forward").stdout.strip() == "1"
    assert netns_exec(lab_name, "h1", "ping", "-c1", "-W2", "192.168.7.2").returncode == 0
    assert Path(f"/run/twin/{lab_name}/nodes/h1/made-here.txt").read_text() == "confined\n"
    assert HOST_FORWARD.read_text() == forward
    assert [p for p in host_files if p.exists()] == []


def test_a_line_writing_a_host_file_fails_up_and_leaves_nothing(tmp_path: Path, lab_name: str) -> None:
    target = Path(f"/etc/twin-pwned-{uuid.uuid4().hex[:8]}")
    line = f"echo x > {target}"
    proc = twin("up", str(write_lab(tmp_path, ["ip addr add 192.168.7.1/24 dev eth1", line])),
                "--name", lab_name, "--timeout", "10", check=False, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"h1: exec line '{line}' failed" in proc.stderr
    assert "Read-only file system" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not target.exists()
    assert leftovers(lab_name) == []  # `twin up` cleaned up after itself, before any `twin down`


@pytest.mark.needs_docker
def test_on_the_docker_runtime_exec_lines_run_inside_the_container(tmp_path: Path, lab_name: str) -> None:
    tag = uuid.uuid4().hex[:8]
    marker = f"/etc/twin-in-container-{tag}"  # the container's own /etc, as with containerlab
    lines = ["ip addr add 192.168.7.1/24 dev eth1", f"echo x > {marker}"]
    doc = json.loads(twin("up", str(write_lab(tmp_path, lines)), "--name", lab_name, "--runtime", "docker",
                          "--timeout", "10", "--json", timeout=600).stdout)
    assert doc["healthy"], doc
    assert f"h1: ran exec line 'echo x > {marker}' (in its container)" in doc["notes"]
    assert twin("exec", "--name", lab_name, "h1", "--", "cat", marker).stdout == "x\n"  # docker exec
    assert not Path(marker).exists()
    assert "192.168.7.1/24" in netns_exec(lab_name, "h1", "ip", "-br", "addr", "show", "eth1").stdout

"""How an imported host's `exec:` line is run (the behaviour itself: tests/integration/test_exec_confinement.py)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from twin.model.errors import TwinError
from twin.runtime import confine


def test_without_bubblewrap_the_lab_is_refused_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine.shutil, "which", lambda name: None)
    with pytest.raises(TwinError, match="apt-get install bubblewrap"):
        confine.confined_argv("tw.lab.h1", Path("/run/twin/lab/nodes/h1"), "h1", "ip addr")


def test_the_line_runs_in_the_nodes_namespace_with_only_network_capabilities(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine.shutil, "which", lambda name: "/usr/bin/bwrap")
    rundir = "/run/twin/lab/nodes/h1"
    argv = confine.confined_argv("tw.lab.h1", Path(rundir), "h1", "echo hi > f")
    assert argv[:5] == ["ip", "netns", "exec", "tw.lab.h1", "/usr/bin/bwrap"]
    assert argv[-4:] == ["--", "sh", "-c", "echo hi > f"]
    pairs = list(itertools.pairwise(argv))
    assert ("--ro-bind", "/") in pairs and ("--chdir", rundir) in pairs
    # the run directory is bound after the private /run, which would otherwise hide it
    assert pairs.index(("--tmpfs", "/run")) < pairs.index(("--bind", rundir))
    caps = [b for a, b in pairs if a == "--cap-add"]
    assert caps == ["CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_NET_BIND_SERVICE"]
    assert argv.index("--cap-drop") < argv.index("--cap-add") and ("--cap-drop", "ALL") in pairs

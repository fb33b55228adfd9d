"""What `twin down` finds besides the namespaces' processes (`processes_using`), and helpers that die with
the command that started them (`dies_with_parent`)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from twin.host.processes import processes_using


def gone(pid: int, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_a_process_naming_a_file_of_the_folder_is_found_one_working_in_it_is_not(tmp_path: Path) -> None:
    lab, other = tmp_path / "lab", tmp_path / "lab2"   # a lab whose name starts another's
    for d in (lab, other, lab / "drill"):
        d.mkdir(exist_ok=True)
    sleep = ["sleep", "60"]
    named = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(lab / "drill" / "spec.json")])
    working = subprocess.Popen(sleep, cwd=lab / "drill")
    elsewhere = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(other / "spec.json")],
                                 cwd=other)
    try:
        # another process's view (this test's children are the caller's own, which it never ends)
        out = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                              "from twin.host.processes import processes_using; "
                              "print(*processes_using(Path(sys.argv[1])))", str(lab)],
                             capture_output=True, text=True, check=True).stdout
        found = [int(p) for p in out.split()]
        assert named.pid in found
        assert working.pid not in found    # a user's shell cd'd into the lab's folder is not the lab's
        assert elsewhere.pid not in found
        assert processes_using(lab) == []  # never the caller, its parents or its own children
    finally:
        for p in (named, working, elsewhere):
            p.kill()
            p.wait()


def test_a_helper_dies_with_the_command_that_started_it_even_on_sigkill(tmp_path: Path) -> None:
    """The drill's probe after `kill -9` of the drill: it must not keep sending."""
    pidfile = tmp_path / "helper.pid"
    starter = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        "from twin.host.processes import dies_with_parent\n"
        "p = subprocess.Popen(['sleep', '60'], preexec_fn=dies_with_parent())\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n")])
    try:
        deadline = time.monotonic() + 10
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        helper = int(pidfile.read_text())
        assert not gone(helper, timeout=0.2)
        starter.kill()
        starter.wait()
        assert gone(helper)
    finally:
        starter.kill()

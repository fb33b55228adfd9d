"""How far a starting gNMI agent got: the number of steps done (switches set up, then their state
producers subscribed to the kernel's events), in `agent.progress` in the lab's run directory. Whoever waits for
the agent judges it stuck only when this stops moving. And when its state producers may start (LAUNCHED),
run at the normal priority (SETTLED), and have written every switch's tables (STATE_WRITTEN); and when
the management ports' limits are in place (MGMT_LIMITED)."""

from __future__ import annotations

from pathlib import Path

PROGRESS = "agent.progress"
# Written by `twin up` once every switch's FRR has launched: the agent's state producers start then.
LAUNCHED = "nodes.launched"
# Written by `twin up` once it has judged the lab (healthy or not): the state producers, which ran at
# the lowest priority while the fabric converged, take the normal one back.
SETTLED = "lab.judged"
# Written by the agent once every switch's state tables were written whole (its state producers'
# first pass): `twin up` returns after it, so what it reports is what gNMI serves.
STATE_WRITTEN = "state.written"
# Written by the agent once the management ports' connection limits are in place on every switch it
# runs (twin.switch.access.mgmt_nft): after STATE_WRITTEN, so after `twin up` has returned.
MGMT_LIMITED = "mgmt.limited"


class Progress:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / PROGRESS
        self.done = 0

    def step(self) -> None:
        self.done += 1
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(str(self.done))
        tmp.replace(self.path)

"""A lab's gNMI agent settings (agent.json in the lab's run directory, 0600: it holds the password):
written by twin.lab.agent when the lab comes up, read by the agent process (twin.switch.agent) and by
everything that reaches a switch's gNMI or SSH (twin.lab.running.RunningLab)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from twin.model.lab import RebootSettings


class AgentSwitch(BaseModel):
    """One switch the agent serves: where it lives and how its databases are reached."""

    model_config = ConfigDict(extra="forbid")
    name: str
    netns: str | None = None       # the namespace its gNMI and SSH listen in (None: the agent's own)
    mgmt: str | None = None        # the management address they listen on
    rundir: str | None = None      # the switch's run directory (SONiC's /etc/sonic and /var/run)
    ports: list[str] = []          # the SONiC port names wired in this lab
    ifmap: dict[str, str] = {}     # SONiC port name -> kernel interface name, where they differ
    container: str | None = None   # its container on the docker and clab runtimes
    queues: bool = True            # its ports' egress queues are programmed (the topology's fabric.egress_queues)
    # A docker-sonic-vs container runs SONiC's own daemons: the agent fronts its redis.
    backend: Literal["sonic-redis"] | None = None
    redis_socket: str | None = None
    redis_host: str = "127.0.0.1"
    redis_port: int = 6379

    @property
    def sonic(self) -> bool:
        return self.backend == "sonic-redis"


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    port: int
    username: str
    password: str
    tls: bool
    ssh_port: int | None = None
    sonic_templates: str | None = None   # a SONiC release's FRR templates (None: twin's own renderer)
    reboot: RebootSettings = RebootSettings()  # the lab file's `reboot:` phases of a gNOI reboot
    switches: list[AgentSwitch] = []

    def switch(self, name: str) -> AgentSwitch | None:
        return next((s for s in self.switches if s.name == name), None)

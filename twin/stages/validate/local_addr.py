"""A BGP neighbor's local_addr that no interface of its switch holds: a finding, never a refusal.

SONiC's YANG (sonic-bgp-neighbor.yang) takes any address there, and SONiC loads such a config; what
its routing stack then does depends on the daemon that reads BGP_NEIGHBOR (twin.stages.render.frr.is_frrcfgd):

- bgpcfgd (BGPPeerMgrBase.add_peer, get_local_interface) holds the neighbor back: it is not put into
  FRR until one of the interface tables its InterfaceMgr reads (INTERFACE_TABLES) has the address, on
  an interface whose base key (`PortChannel01`) exists and is bound to the neighbor's VRF (to none, for
  the default VRF);
- frrcfgd renders `neighbor PEER update-source ADDRESS` as it is: bgpd cannot open the session from an
  address the switch does not hold, and it stays down.

A push, a containerlab bind and a gNMI Set therefore accept it, as SONiC does; `twin validate` says
what SONiC would do with it.
"""

from __future__ import annotations

from ipaddress import ip_interface
from typing import Any

from twin.model.findings import Finding, SwitchConfig
from twin.stages.render.bgpcfgd import INTERFACE_TABLES
from twin.stages.render.frr import is_frrcfgd


def _address(value: Any) -> str | None:
    """The address of a local_addr (bgpcfgd keeps the address of a prefix); None when it is none."""
    try:
        return str(ip_interface(str(value)).ip)
    except ValueError:
        return None


def holds(db: dict[str, dict[str, Any]], address: str, vrf: str = "default") -> bool:
    """Whether an interface of the switch in `vrf` has `address` (get_local_interface's test)."""
    for table in INTERFACE_TABLES:
        rows = db.get(table) or {}
        for key in rows:
            name, sep, prefix = key.partition("|")
            if not sep or _address(prefix) != address or name not in rows:
                continue
            base = rows[name] or {}
            bound = str(base.get("vrf_name") or base.get("vnet_name") or "")
            if bound == ("" if vrf == "default" else vrf):
                return True
    return False


def local_addr_findings(cfg: SwitchConfig) -> list[Finding]:
    out = []
    frrcfgd = is_frrcfgd(cfg.db)
    for key, row in cfg.table("BGP_NEIGHBOR").items():
        if not isinstance(row, dict) or row.get("local_addr") in (None, ""):
            continue
        vrf, sep, peer = key.partition("|")
        vrf, peer = (vrf, peer) if sep else ("default", key)
        given = row["local_addr"]
        address = _address(given)
        if address is not None and holds(cfg.db, address, vrf):
            continue
        where = "the default VRF" if vrf == "default" else f"VRF {vrf}"
        message = (f"{given} is on no interface of this switch in {where} ({', '.join(INTERFACE_TABLES)}); "
                   "SONiC accepts the config")
        if frrcfgd:
            done = (f"frrcfgd gives FRR 'neighbor {peer} update-source {given}' and the session stays down "
                    "while the switch does not hold that address")
        else:
            done = (f"bgpcfgd keeps neighbor {peer} out of FRR until an interface has {given} (no session, "
                    "no error)")
        out.append(Finding("bgp", cfg.file, f"BGP_NEIGHBOR|{key} local_addr", message,
                           f"on SONiC {done}: put {given} on the interface that faces {peer}, or correct "
                           "local_addr"))
    return out

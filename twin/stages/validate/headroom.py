"""PFC headroom against the cable: every lossless priority group (a BUFFER_PG whose BUFFER_PROFILE has
an `xoff`) must absorb what arrives after it sends PFC, at its port's speed over its CABLE_LENGTH, as
twin.stages.headroom adds it up. A profile short of it is one finding per switch, profile and cable,
naming the ports, the bytes needed and configured, and the fix: the longest cable the profile covers,
or the xoff the cable needs."""

from __future__ import annotations

from dataclasses import dataclass

from twin.model.findings import Finding, SwitchConfig
from twin.stages import port_buffers
from twin.stages.headroom import Headroom, headroom, longest_cable


@dataclass(frozen=True)
class PortHeadroom:
    """One lossless priority group: what it needs and what its profile gives."""

    port: str
    pg_key: str            # its BUFFER_PG key
    profile: str
    xoff: int
    cable_key: str         # the CABLE_LENGTH row naming its cable
    need: Headroom

    @property
    def short(self) -> bool:
        return self.xoff < self.need.needed


def port_headrooms(cfg: SwitchConfig) -> list[PortHeadroom]:
    """Every lossless priority group of a port whose speed and cable length the config gives."""
    profiles = port_buffers.profiles(cfg.db)
    cables = port_buffers.cable_lengths(cfg.db)
    out = []
    for port, pgs in sorted(port_buffers.pg_profiles(cfg.db).items()):
        speed, cable = port_buffers.port_speed(cfg.db, port), cables.get(port)
        if speed is None or cable is None:
            continue
        seen = set()
        for key, name in pgs.values():
            profile = profiles.get(name)
            if profile is None or profile.xoff is None or key in seen:
                continue
            seen.add(key)
            out.append(PortHeadroom(port=port, pg_key=key, profile=name, xoff=profile.xoff, cable_key=cable[0],
                                    need=headroom(speed, cable[1], port_buffers.port_mtu(cfg.db, port))))
    return out


def _ports(rows: list[PortHeadroom]) -> str:
    names = [r.port for r in rows]
    return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")


def headroom_findings(cfg: SwitchConfig) -> list[Finding]:
    groups: dict[tuple[str, Headroom, int], list[PortHeadroom]] = {}
    for row in port_headrooms(cfg):
        if row.short:
            groups.setdefault((row.profile, row.need, row.xoff), []).append(row)
    out = []
    for (profile, need, xoff), rows in groups.items():
        longest = longest_cable(xoff, need.speed_mbps, need.mtu)
        cable = f"CABLE_LENGTH|{rows[0].cable_key} {rows[0].port}"
        fix = (f"use at most {longest} m of cable for this profile ({cable}), or raise xoff to at least "
               f"{need.needed} bytes" if longest >= 0 else f"raise xoff to at least {need.needed} bytes")
        out.append(Finding("qos", cfg.file, f"BUFFER_PROFILE|{profile} xoff",
                           f"PFC headroom short on {_ports(rows)} ({need.speed_mbps} Mb/s, {need.cable_m} m of "
                           f"cable, MTU {need.mtu}): {need.needed} bytes arrive after PFC (2 x {need.mtu} MTU + "
                           f"{need.cable} on the cable's round trip + {need.response} while the sender reacts), "
                           f"xoff is {xoff}", fix))
    return out

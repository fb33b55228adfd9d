"""`sonic-cli`: the KLISH CLI of SONiC's management framework (what netmiko's dell_sonic drives).

Prompts `leaf1#`, `leaf1(config)#`, `leaf1(conf-if-Ethernet0)#`, `leaf1(config-router-bgp)#`,
`leaf1(config-router-bgp-neighbor)#`. Commands (unique prefixes accepted, as KLISH accepts them):

- exec: `show ...` (the switch's `show`, with KLISH's names `interface status`,
  `running-configuration`, `bgp ipv4 unicast summary`), `terminal length|width N`,
  `configure [terminal]`, `write memory`, `exit` (back to the Linux shell), `end`
- config: `interface PORT`, `router bgp ASN`, `do CMD`, `exit`, `end`
- interface: `[no] shutdown`, `mtu N`, `description TEXT`
- router bgp: `neighbor IP`; neighbor: `[no] shutdown`

Every change is a CONFIG_DB write, as the management framework's translib makes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from twin.switch.cli import config_cli, show_cli
from twin.switch.cli.cli_output import Output
from twin.switch.cli.config_cli import ConfigRequest
from twin.switch.cli.switch_view import SwitchData, vtysh_json

EXEC_WORDS = ("configure", "end", "exit", "show", "terminal", "write")
CONFIG_WORDS = ("do", "end", "exit", "interface", "router")
INTERFACE_WORDS = ("description", "do", "end", "exit", "mtu", "no", "shutdown")
ROUTER_WORDS = ("do", "end", "exit", "neighbor")
NEIGHBOR_WORDS = ("do", "end", "exit", "no", "shutdown")


@dataclass(frozen=True)
class Klish:
    """Where a sonic-cli session is: mode exec|config|interface|router|neighbor, and what it edits."""

    mode: str = "exec"
    port: str = ""
    neighbor: str = ""
    left: bool = False  # `exit` from exec: back to the Linux shell

    def prompt(self, hostname: str) -> str:
        suffix = {"exec": "", "config": "(config)", "interface": f"(conf-if-{self.port})",
                  "router": "(config-router-bgp)", "neighbor": "(config-router-bgp-neighbor)"}[self.mode]
        return f"{hostname}{suffix}# "


def invalid(prompt: str, line: str, word: str) -> Output:
    """KLISH's error, the caret under the word it could not take."""
    col = len(prompt) + max(line.find(word), 0)
    return Output(out=f"{' ' * col}^\n% Error: Invalid input detected at \"^\" marker.\n", status=1)


def _word(word: str, words: tuple[str, ...]) -> str | None:
    if word in words:
        return word
    matches = [w for w in words if w.startswith(word)]
    return matches[0] if len(matches) == 1 else None


def handle(data: SwitchData, state: Klish, line: str) -> tuple[Klish, Output]:
    """One line typed at sonic-cli: the new state and what to print."""
    words = line.split()
    prompt = state.prompt(data.hostname())
    if not words or words[0].startswith("!"):
        return state, Output()
    if state.mode == "exec":
        return _exec(data, state, words, line, prompt)
    allowed = {"config": CONFIG_WORDS, "interface": INTERFACE_WORDS, "router": ROUTER_WORDS,
               "neighbor": NEIGHBOR_WORDS}[state.mode]
    first = _word(words[0], allowed)
    if first is None:
        return state, invalid(prompt, line, words[0])
    if first == "do":
        _, out = _exec(data, Klish(), words[1:], line, prompt)
        return state, out
    if first == "end":
        return Klish(), Output()
    if first == "exit":
        parent = {"config": Klish(), "interface": Klish("config"), "router": Klish("config"),
                  "neighbor": Klish("router")}[state.mode]
        return parent, Output()
    if state.mode == "config":
        return _config(data, state, words, line, prompt)
    negate = first == "no"
    if negate:
        if len(words) < 2:
            return state, Output(out="% Error: Incomplete command.\n", status=1)
        words = words[1:]
        first = _word(words[0], allowed) or ""
    if state.mode == "router":
        if first != "neighbor" or negate or len(words) != 2:
            return state, invalid(prompt, line, words[-1])
        keys = config_cli.neighbor_keys(data.config(), words[1])
        if not keys:
            return state, Output(out=f"% Error: Neighbor {words[1]} is not configured.\n", status=1)
        return Klish("neighbor", neighbor=words[1]), Output()
    if first == "shutdown" and len(words) == 1:
        status = "up" if negate else "down"
        if state.mode == "interface":
            return state, config_cli.execute(data, ConfigRequest("interface-admin", state.port, status))
        return state, _quiet(config_cli.execute(data, ConfigRequest("bgp-admin", state.neighbor, status)))
    if state.mode == "interface" and first == "mtu" and (negate or len(words) == 2):
        return state, config_cli.execute(data, ConfigRequest("interface-mtu", state.port,
                                                             "9100" if negate else words[1]))
    if state.mode == "interface" and first == "description":
        text = line.strip().split(None, 1)[1] if not negate and len(words) > 1 else ""
        data.mod_entry("PORT", state.port, {"description": text})
        return state, Output()
    return state, invalid(prompt, line, words[-1])


def _quiet(out: Output) -> Output:
    """KLISH prints nothing on success (config's "Shutting down BGP session ..." is the click CLI's)."""
    return Output(err=out.err, status=out.status)


def _exec(data: SwitchData, state: Klish, words: list[str], line: str, prompt: str) -> tuple[Klish, Output]:
    if not words:
        return state, Output()
    first = _word(words[0], EXEC_WORDS)
    if first is None:
        return state, invalid(prompt, line, words[0])
    rest = words[1:]
    if first == "exit":
        return Klish(left=True), Output()
    if first == "end":
        return state, Output()
    if first == "terminal":
        if len(rest) == 2 and _word(rest[0], ("length", "width")) and rest[1].isdigit():
            return state, Output()
        return state, invalid(prompt, line, rest[-1] if rest else words[0])
    if first == "configure":
        if rest and _word(rest[0], ("terminal",)) is None:
            return state, invalid(prompt, line, rest[0])
        return Klish("config"), Output()
    if first == "write":
        if len(rest) != 1 or _word(rest[0], ("memory",)) is None:
            return state, invalid(prompt, line, rest[0] if rest else words[0])
        out = config_cli.execute(data, ConfigRequest("save", None))
        return state, Output(err=out.err, status=out.status)
    return state, _show(data, rest)


def _show(data: SwitchData, args: list[str]) -> Output:
    """KLISH's show names on the switch's show."""
    if args[:1] and "running-configuration".startswith(args[0]) and len(args[0]) > 1:
        return Output(out=data.vtysh("show running-config"))
    if args[:2] and args[0] == "interface" and "status".startswith(args[1]):
        return show_cli.run_show(data, ["interfaces", "status", *args[2:]])
    if args[:4] == ["bgp", "ipv4", "unicast", "summary"]:
        return show_cli.run_show(data, ["ip", "bgp", "summary"])
    if args[:1] == ["bgp"] and len(args) > 1 and args[-1] == "json":
        return Output(out=data.vtysh(" ".join(["show", *args])))
    out = show_cli.run_show(data, args)
    if out.status == 2:  # click's usage error: KLISH says it its way
        return Output(out="% Error: Invalid input detected at \"^\" marker.\n", status=1)
    return out


def _config(data: SwitchData, state: Klish, words: list[str], line: str, prompt: str) -> tuple[Klish, Output]:
    first = _word(words[0], CONFIG_WORDS)
    if first == "interface" and len(words) == 2:
        port = words[1]
        if port not in data.config().get("PORT", {}):
            return state, Output(out=f"% Error: Interface {port} not found\n", status=1)
        return Klish("interface", port=port), Output()
    if first == "router" and len(words) == 3 and _word(words[1], ("bgp",)):
        asn = str(data.config().get("DEVICE_METADATA", {}).get("localhost", {}).get("bgp_asn", ""))
        if words[2] != asn:
            running = vtysh_json(data, "show ip bgp vrf default summary json").get("ipv4Unicast", {})
            asn = str(running.get("as", asn))
        if words[2] != asn:
            return state, Output(out=f"% Error: BGP is already running with AS {asn}\n", status=1)
        return Klish("router"), Output()
    return state, invalid(prompt, line, words[-1])

"""SONiC's counter commands on a twin switch: `show interfaces counters`, `show queue counters`,
`show pfc counters` (sonic-utilities show/interfaces and show/main.py, read, not copied) and the scripts
they run, `portstat`, `queuestat` and `pfcstat`, with their own options.

show turns its options into the script's and prints what the script prints (twin.switch.cli.portstat,
queuestat, pfcstat). Saving a snapshot to count from (`portstat -c`, `queuestat -c`, `pfcstat -c`, tags,
deleting them: what `sonic-clear counters|queuecounters|pfccounters` run) is not available on this shell,
which has no clear commands; the counters are always shown as COUNTERS_DB holds them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from twin.switch.cli import pfcstat, portstat, queuestat
from twin.switch.cli.cli_output import Output, not_emulated
from twin.switch.cli.click_options import Command, Opt, Parsed, parse
from twin.switch.cli.counters_db import Hashes

Sleep = Callable[[float], None]
DISPLAY = Opt(("--display", "-d"), "display", "choice", ("all", "frontend"), "Show internal interfaces  "
              "[default: all]")
NAMESPACE = Opt(("--namespace", "-n"), "namespace", "choice", ("",), "Namespace name or all")
PERIOD = Opt(("-p", "--period"), "period", "int", help="Display statistics over a specified period (in seconds)",
             metavar="INTEGER")
JSON = Opt(("-j", "--json"), "json", help="Print in JSON format")
VERBOSE = Opt(("--verbose",), "verbose", help="Enable verbose output")
NONZERO = Opt(("--nonzero",), "nonzero", help="Only display non zero counters")
COUNTERS = Command("show interfaces counters", "[OPTIONS] COMMAND [ARGS]...", "Show interface counters", (
    DISPLAY, NAMESPACE, Opt(("-i", "--interface"), "interface", "text", help="Filter by interface name"),
    Opt(("-a", "--printall"), "printall", help="Show all counters"), PERIOD, JSON, VERBOSE, NONZERO), group=True)
SUBCOMMANDS = {
    "errors": Command("show interfaces counters errors", "[OPTIONS]", "Show interface counters errors",
                      (DISPLAY, NAMESPACE, PERIOD, JSON, VERBOSE)),
    "fec-stats": Command("show interfaces counters fec-stats", "[OPTIONS]", "Show interface counters fec-stats",
                         (DISPLAY, NAMESPACE, PERIOD, JSON, VERBOSE, NONZERO)),
    "rates": Command("show interfaces counters rates", "[OPTIONS]", "Show interface counters rates",
                     (DISPLAY, NAMESPACE, PERIOD, JSON, VERBOSE)),
    "trim": Command("show interfaces counters trim", "[OPTIONS] [INTERFACE_NAME]", "Show interface counters trim",
                    (PERIOD, JSON, VERBOSE), arguments=("[INTERFACE_NAME]",)),
    "detailed": Command("show interfaces counters detailed", "[OPTIONS] <INTERFACE_NAME>",
                        "Show interface counters detailed", (PERIOD, VERBOSE), arguments=("<INTERFACE_NAME>",),
                        required=1),
}
NOT_EMULATED = ("fec-histogram", "rif")
QUEUE = Command("show queue counters", "[OPTIONS] [INTERFACE_NAME]", "Show queue counters", (
    DISPLAY, NAMESPACE, Opt(("-a", "--all"), "all", help="All counters"),
    Opt(("-T", "--trim"), "trim", help="Trimming counters"), Opt(("-V", "--voq"), "voq", help="VOQ counters"),
    Opt(("-nz", "--nonzero"), "nonzero", help="Non Zero Counters"), Opt(("-j", "--json"), "json", help="JSON output"),
    VERBOSE), arguments=("[INTERFACE_NAME]",))
PFC = Command("show pfc counters", "[OPTIONS]", "Show pfc counters", (
    DISPLAY, NAMESPACE, Opt(("--history",), "history", help="Display historical PFC statistics"), VERBOSE))
QUEUESTAT = Command("queuestat", "[OPTIONS]", "Examples: queuestat, queuestat -p Ethernet0", (
    Opt(("-p", "--port"), "port", "text", help="Show the queue counters for just one port"),
    Opt(("-c", "--clear"), "clear", help="Clear previous stats and save new ones"),
    Opt(("-d", "--delete"), "delete", help="Delete saved stats"),
    Opt(("-j", "--json_opt"), "json", help="Print in JSON format"),
    Opt(("-a", "--all"), "all", help="Display all the stats counters"),
    Opt(("-T", "--trim"), "trim", help="Display trimming related statistics"),
    Opt(("-V", "--voq"), "voq", help="display voq stats"),
    Opt(("-nz", "--non_zero"), "nonzero", help="Display non-zero queue counters"),
    Opt(("-n", "--namespace"), "namespace", "choice", ("",), "Display queuecounters for a specific namespace "
        "name or skip for all"), Opt(("--version",), "version", help="Show the version and exit.")),
    help_names=("-h", "--help"))
NO_CLEAR = ("{tool} {option}: not available on this twin switch: its shell has no clear commands "
            "(sonic-clear), so no snapshot is saved and the counters are shown as COUNTERS_DB holds them\n")


# -- show ... ----------------------------------------------------------------------------------------

def show_interfaces_counters(data: Hashes, args: Sequence[str], sleep: Sleep | None = None) -> Output:
    """`show interfaces counters [OPTIONS] [errors|fec-stats|rates|trim|detailed ...]`."""
    group = parse(COUNTERS, args)
    if isinstance(group, Output):
        return group
    if not group.rest:
        v = group.values
        return _portstat(data, sleep, view="all" if v["printall"] else "std", interface=v["interface"],
                         json=v["json"], nonzero=v["nonzero"], period=v["period"])
    name, rest = group.rest[0], group.rest[1:]
    if name in NOT_EMULATED:
        return not_emulated(f"show interfaces counters {name}")
    if name not in SUBCOMMANDS:
        return COUNTERS.error(f"No such command '{name}'.")
    sub = parse(SUBCOMMANDS[name], rest)
    if isinstance(sub, Output):
        return sub
    v = sub.values
    if name == "detailed":
        return _portstat(data, sleep, view="std", interface=sub.arguments[0], detail=True, period=v["period"])
    view = {"errors": "errors", "fec-stats": "fec", "rates": "rates", "trim": "trim"}[name]
    return _portstat(data, sleep, view=view, interface=sub.arguments[0] if sub.arguments else None,
                     json=v["json"], nonzero=bool(v.get("nonzero")), period=v["period"])


def show_queue_counters(data: Hashes, args: Sequence[str]) -> Output:
    """`show queue counters [INTERFACE_NAME] [-a|-T|-V] [-nz] [-j]`: queuestat."""
    parsed = parse(QUEUE, args)
    if isinstance(parsed, Output):
        return parsed
    return _queuestat(data, parsed, parsed.arguments[0] if parsed.arguments else None)


def show_pfc_counters(data: Hashes, args: Sequence[str]) -> Output:
    """`show pfc counters [--history]`: pfcstat."""
    parsed = parse(PFC, args)
    if isinstance(parsed, Output):
        return parsed
    return Output(out=pfcstat.history(data) if parsed.values["history"] else pfcstat.counters(data))


def _portstat(data: Hashes, sleep: Sleep | None, view: str, interface: str | None, json: bool = False,
              nonzero: bool = False, detail: bool = False, period: int | None = None) -> Output:
    try:
        interfaces = portstat.parse_interfaces(interface)
    except ValueError as exc:
        return Output(err=f"Error: {exc}\n", status=1)
    if period is not None and period < 0:
        return Output(err="ValueError: sleep length must be non-negative\n", status=1)
    options = portstat.Options(view=view, interfaces=interfaces, json=json, nonzero=nonzero, detail=detail,
                               period=period or 0)
    return Output(out=portstat.portstat(data, options, sleep))


def _queuestat(data: Hashes, parsed: Parsed, port: str | None) -> Output:
    v = parsed.values
    options = queuestat.Options(port=port, all=v["all"], trim=v["trim"], voq=v["voq"], nonzero=v["nonzero"],
                                json=v["json"])
    text, status = queuestat.queuestat(data, options)
    return Output(out=text, status=status)


# -- the scripts themselves --------------------------------------------------------------------------

class _Exit(Exception):
    def __init__(self, output: Output) -> None:
        super().__init__(output.err or output.out)
        self.output = output


class _Parser(argparse.ArgumentParser):
    """argparse whose messages and exits come back as an Output instead of ending the process."""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            raise _Exit(Output(out=message))

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _Exit(Output(err=message or "", status=status))

    def error(self, message: str) -> NoReturn:
        raise _Exit(Output(err=f"{self.format_usage()}{self.prog}: error: {message}\n", status=2))


def _portstat_parser() -> _Parser:
    parser = _Parser(prog="portstat", description="Display the ports state and counters",
                     formatter_class=argparse.RawTextHelpFormatter,
                     epilog="Port state: (U)-Up (D)-Down (X)-Disabled\nExamples:\n  portstat -a\n  portstat -e\n"
                            "  portstat -R\n  portstat -p 20\n  portstat -l -i Ethernet4,Ethernet8,Ethernet12-20\n")
    for short, long, help_text in (
            ("-a", "--all", "Display all the stats counters"), ("-c", "--clear", "Copy & clear stats"),
            ("-d", "--delete", "Delete saved stats, either the uid or the specified tag"),
            ("-D", "--delete-all", "Delete all saved stats"), ("-e", "--errors", "Display interface errors"),
            ("-f", "--fec-stats", "Display FEC related statistics"), ("-fh", "--fec_hist", "Display FEC histogram"),
            ("-j", "--json", "Display in JSON format"), ("-r", "--raw", "Raw stats (unmodified output of netstat)"),
            ("-R", "--rate", "Display interface rates"), ("-T", "--trim", "Display trimming related statistics")):
        parser.add_argument(short, long, action="store_true", help=help_text)
    parser.add_argument("-t", "--tag", type=str, help="Save stats with name TAG", default=None)
    parser.add_argument("-p", "--period", type=int, help="Display stats over a specified period (in seconds).",
                        default=0)
    parser.add_argument("-i", "--interface", type=str, help="Display stats for interface lists.", default=None)
    parser.add_argument("-s", "--show", default="all", help="Display all interfaces or only external interfaces")
    parser.add_argument("-n", "--namespace", default=None, help="Display interfaces for specific namespace")
    parser.add_argument("-v", "--version", action="version", version="%(prog)s 1.0")
    parser.add_argument("-l", "--detail", action="store_true", help="Display detailed statistics.")
    parser.add_argument("-nz", "--non_zero", action="store_true", help="Display only non-zero counters")
    return parser


def _pfcstat_parser() -> _Parser:
    parser = _Parser(prog="pfcstat", description="Display the pfc counters",
                     formatter_class=argparse.RawTextHelpFormatter,
                     epilog="Examples:\n  pfcstat\n  pfcstat --history\n")
    parser.add_argument("-c", "--clear", action="store_true", help="Clear previous stats and save new ones")
    parser.add_argument("-d", "--delete", action="store_true", help="Delete saved stats")
    parser.add_argument("-s", "--show", default="all", help="Display all interfaces or only external interfaces")
    parser.add_argument("-n", "--namespace", default=None, help="Display interfaces for specific namespace")
    parser.add_argument("-v", "--version", action="version", version="%(prog)s 1.0")
    parser.add_argument("--history", action="store_true", help="Display historical PFC statistics, must be "
                        "supported by the platform-specific PFCWD detect script.")
    return parser


def _view(ns: argparse.Namespace) -> str:
    """portstat's choice among its tables, in its order of precedence."""
    for flag, view in (("all", "all"), ("errors", "errors"), ("fec_stats", "fec"), ("fec_hist", "fec_hist"),
                       ("rate", "rates"), ("trim", "trim")):
        if getattr(ns, flag):
            return view
    return "std"


def run_tool(data: Hashes, tool: str, args: Sequence[str], sleep: Sleep | None = None) -> Output:
    """`portstat`, `queuestat` or `pfcstat` with `args`, as the scripts answer."""
    if tool == "queuestat":
        parsed = parse(QUEUESTAT, args)
        if isinstance(parsed, Output):
            return parsed
        v = parsed.values
        if v["version"]:
            return Output(out="queuestat, version 1.0\n")
        for option, key in (("-c", "clear"), ("-d", "delete")):
            if v[key]:
                return Output(err=NO_CLEAR.format(tool=tool, option=option), status=1)
        return _queuestat(data, parsed, v["port"])
    try:
        ns = (_portstat_parser() if tool == "portstat" else _pfcstat_parser()).parse_args(list(args))
    except _Exit as done:
        return done.output
    clears = (("-c", "clear"), ("-d", "delete")) + ((("-D", "delete_all"), ("-t", "tag")) if tool == "portstat"
                                                     else ())
    for option, key in clears:
        if getattr(ns, key):
            return Output(err=NO_CLEAR.format(tool=tool, option=option), status=1)
    if tool == "pfcstat":
        return Output(out=pfcstat.history(data) if ns.history else pfcstat.counters(data))
    return _portstat(data, sleep, view=_view(ns), interface=ns.interface, json=ns.json, nonzero=ns.non_zero,
                     detail=ns.detail, period=ns.period)

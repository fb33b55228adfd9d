"""The switch's SSH shell without a switch: every allowed command -> its checked argv or request,
refused commands and FRR file commands (abbreviations included) -> refusal, files kept inside the
switch's directory, and SONiC's output shapes from FRR's JSON."""

from __future__ import annotations

import copy
import json
import os
import shlex
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from twin.stages.configdb import ConfigDb
from twin.switch.access.tls import write_private
from twin.switch.cli import cli_paths, config_cli, klish, show_cli
from twin.switch.cli.cli_argv import ArgvRefused, ip_argv, parse_redis_cli, ping_argv, traceroute_argv
from twin.switch.cli.cli_filters import Filter, FilterError, parse_filter
from twin.switch.cli.cli_output import Output
from twin.switch.cli.cli_paths import PathRefused, switch_file
from twin.switch.cli.cli_words import Op, pipeline, tokenize
from twin.switch.cli.config_cli import ConfigRequest, parse_config
from twin.switch.cli.redis_guard import redis_refusal
from twin.switch.cli.shell import (
    Config,
    DbCli,
    Enter,
    Exit,
    Hostname,
    InContainer,
    Piped,
    Run,
    Show,
    Switch,
    Text,
    translate,
    translate_redis,
)
from twin.switch.cli.show_format import bgp_summary, ip_routes, simple_table
from twin.switch.cli.sshd import EchoSwallow, filtered
from twin.switch.cli.switch_view import SwitchView
from twin.switch.cli.vtysh_guard import VtyshRefused, parse_vtysh, refusal
from twin.switch.redis.sonic_redis import as_stored

RUNDIR = Path("/run/twin/lab/nodes/leaf1")
NS = "tw.lab.leaf1"
SW = Switch(name="leaf1", netns=NS, rundir=RUNDIR)
DOCKER = Switch(name="leaf1", netns=NS, rundir=RUNDIR, container="tw-lab-leaf1")
SONIC = Switch(name="leaf1", netns=NS, rundir=RUNDIR, container="tw-lab-leaf1", sonic=True)
VTYSH = ["vtysh", "--vty_socket", str(RUNDIR), "--config_dir", str(RUNDIR), "-H", str(RUNDIR / ".vtysh_history")]


def status(action: Any) -> int:
    assert isinstance(action, Text), action
    return action.output.status


def error(action: Any) -> str:
    assert isinstance(action, Text), action
    return action.output.err


# -- the command set: every allowed command and what it becomes -------------------------------------

@pytest.mark.parametrize(("line", "argv"), [
    ("vtysh -c 'show ip bgp summary'", [*VTYSH, "-c", "show ip bgp summary"]),
    ("sudo vtysh -c 'conf t' -c 'router bgp 65101' -c 'neighbor 10.0.0.64 shutdown'",
     [*VTYSH, "-c", "conf t", "-c", "router bgp 65101", "-c", "neighbor 10.0.0.64 shutdown"]),
    ("vtysh -E -d bgpd --command='show bgp summary json'", [*VTYSH, "-E", "-d", "bgpd", "-c", "show bgp summary json"]),
    ("vtysh -c 'write memory'", [*VTYSH, "-c", "write memory"]),
    ("ping -c 3 10.0.0.64", ["ip", "netns", "exec", NS, "ping", "-c", "3", "10.0.0.64"]),
    ("sudo ping -c3 -i 0.5 -s 1400 -M do -W 1 -I Ethernet0 10.0.0.64",
     ["ip", "netns", "exec", NS, "ping", "-c3", "-i", "0.5", "-s", "1400", "-M", "do", "-W", "1", "-I", "Ethernet0",
      "10.0.0.64"]),
    ("ping6 -c 1 fc00::1", ["ip", "netns", "exec", NS, "ping", "-6", "-c", "1", "fc00::1"]),
    ("traceroute -n -q 1 -w 1 -m 5 10.1.0.1", ["ip", "netns", "exec", NS, "traceroute", "-n", "-q", "1", "-w", "1",
                                               "-m", "5", "10.1.0.1"]),
    ("traceroute -f 2 --fwmark=1 spine1 100", ["ip", "netns", "exec", NS, "traceroute", "-f", "2", "--fwmark=1",
                                               "spine1", "100"]),
    ("ip -br addr show lo", ["ip", "-n", NS, "-br", "addr", "show", "lo"]),
    ("ip -j route get 10.1.0.1", ["ip", "-n", NS, "-j", "route", "get", "10.1.0.1"]),
    ("ip -s link", ["ip", "-n", NS, "-s", "link"]),
    ("ip n", ["ip", "-n", NS, "n"]),
    ("redis-cli -n 4 hgetall 'PORT|Ethernet0'",
     ["redis-cli", "-s", str(RUNDIR / "redis.sock"), "-n", "4", "hgetall", "PORT|Ethernet0"]),
    ("redis-cli --raw -n 6 keys '*'", ["redis-cli", "-s", str(RUNDIR / "redis.sock"), "-n", "6", "--raw", "keys", "*"]),
])
def test_allowed_commands_become_fixed_argv(line: str, argv: list[str]) -> None:
    action = translate(line, SW)
    assert isinstance(action, Run) and list(action.argv) == argv and not action.vtysh


def test_sonic_commands_become_requests() -> None:
    assert translate("show ip bgp summary", SW) == Show(("ip", "bgp", "summary"))
    assert translate("sudo show version", SW) == Show(("version",))
    assert translate("sudo config interface shutdown Ethernet0", SW) == \
        Config(ConfigRequest("interface-admin", "Ethernet0", "down"))
    assert translate("config int startup Ethernet0", SW, root=True) == \
        Config(ConfigRequest("interface-admin", "Ethernet0", "up"))
    assert translate("sudo config bgp shut neigh 10.0.0.64", SW) == \
        Config(ConfigRequest("bgp-admin", "10.0.0.64", "down"))
    assert translate("sudo config bgp startup all", SW) == Config(ConfigRequest("bgp-admin", None, "up"))
    assert translate("sudo config save -y", SW) == Config(ConfigRequest("save", None))
    assert translate("sudo config reload -y -f", SW) == Config(ConfigRequest("reload", None))
    assert translate("sonic-db-cli CONFIG_DB hgetall 'PORT|Ethernet0'", SW) == \
        DbCli(("CONFIG_DB", "hgetall", "PORT|Ethernet0"))
    assert translate("hostname", SW) == Hostname()
    assert translate("sudo whoami", SW) == Text(Output(out="root\n"))


def test_session_words() -> None:
    assert translate("exit", SW) == Exit() and translate("logout", SW) == Exit()
    assert translate("sudo -s", SW) == Enter("root") and translate("sudo su", SW) == Enter("root")
    assert translate("sudo -i", SW) == Enter("root", home=True)
    assert translate("sudo su -", SW) == Enter("root", home=True)
    assert translate("sonic-cli", SW) == Enter("sonic-cli")
    assert translate("redis-cli -n 4", SW) == Enter("redis-cli", db=4)
    vtysh = translate("vtysh", SW)
    assert isinstance(vtysh, Run) and vtysh.vtysh and list(vtysh.argv) == VTYSH
    assert translate("", SW) == Text(Output()) and translate("# a comment", SW) == Text(Output())


def test_config_needs_root_as_on_sonic() -> None:
    assert error(translate("config save -y", SW)) == "Root privileges are required for this operation\n"
    assert isinstance(translate("config save -y", SW, root=True), Config)


def test_pipes_into_the_shells_filters() -> None:
    action = translate("show ip route | grep -i '^b ' | head -n 2", SW)
    assert isinstance(action, Piped) and action.action == Show(("ip", "route"))
    assert action.filters == (Filter("grep", ("-i", "^b ")), Filter("head", ("-n", "2")))
    out = filtered(Output(out="B 1\nC 2\nb 3\nB 4\n"), action.filters)
    assert out == Output(out="B 1\nb 3\n")
    assert filtered(Output(out="a\nb\n"), (Filter("grep", ("-c", "b")),)).out == "1\n"
    assert filtered(Output(out="a\nb\n"), (Filter("grep", ("z",)),)).status == 1
    assert filtered(Output(out="a\nb\nc\n"), (Filter("tail", ("-1",)),)).out == "c\n"
    assert filtered(Output(out="a\nb\nc\n"), (Filter("wc", ("-l",)),)).out == "3\n"
    assert filtered(Output(out="x|y\nz\n"), (Filter("grep", ("x\\|z",)),)).out == "x|y\nz\n"  # GNU BRE alternation
    assert filtered(Output(out="b\na\na\n"), (Filter("sort", ("-u",)),)).out == "a\nb\n"


# -- what is refused ----------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "less /etc/shadow", "bash", "bash -c 'touch /tmp/pwned'", "sh -c id", "echo x > /tmp/pwned", "python3",
    "vi /etc/passwd", "ls /", "touch /tmp/pwned", "/bin/bash", "nsenter -t 1 -m bash", "docker ps",
])
def test_anything_else_is_command_not_found(line: str) -> None:
    action = translate(line, SW)
    word = line.split()[0]
    assert status(action) == 127 and error(action) == f"-bash: {word}: command not found\n"


def test_sudo_of_an_unknown_command() -> None:
    assert error(translate("sudo bash", SW)) == "sudo: bash: command not found\n"
    assert status(translate("sudo -u root bash", SW)) == 1


@pytest.mark.parametrize("line", [
    "show version; cat /etc/shadow", "show version && bash", "show version || bash", "show version > /tmp/pwned",
    "show version >> /tmp/pwned", "sudo config save -y < /etc/passwd", "show ip route $(cat /etc/shadow)",
    "show ip route `id`", 'show ip route "$(id)"', "show version &", "ping -c 1 10.0.0.1 | tee /tmp/pwned",
    "show version | sh", "show version | bash", "show version | cat /etc/shadow", "show version | grep x /etc/shadow",
    "show version | head /etc/shadow",
])
def test_shell_operators_and_file_reading_filters_are_refused(line: str) -> None:
    action = translate(line, SW)
    assert status(action) in (1, 2, 127), action


@pytest.mark.parametrize("args", [
    ["-f", "10.0.0.1"], ["-l", "3", "10.0.0.1"], ["-A", "10.0.0.1"], ["-i", "0.01", "10.0.0.1"],
    ["10.0.0.1", "10.0.0.2"], [], ["-c", "x", "10.0.0.1"], ["--help"], [";id"], ["-c", "1", "-Ifoo;bar", "1.1.1.1"],
])
def test_ping_refuses_unsafe_options(args: list[str]) -> None:
    with pytest.raises(ArgvRefused):
        ping_argv(NS, args)


@pytest.mark.parametrize("args", [["-x", "1.1.1.1"], ["1.1.1.1", "x"], [], ["--file=/etc/passwd", "1.1.1.1"]])
def test_traceroute_refuses_unknown_options(args: list[str]) -> None:
    with pytest.raises(ArgvRefused):
        traceroute_argv(NS, args)


@pytest.mark.parametrize("args", [
    ["netns", "exec", "x", "bash"], ["-n", "tw.other.leaf2", "addr"], ["-netns", "x", "addr"], ["-b", "/etc/passwd"],
    ["-batch", "/etc/passwd"], ["-force", "addr"], ["route", "add", "1.2.3.0/24", "dev", "lo"],
    ["link", "set", "Ethernet0", "down"], ["route", "save"], ["route", "flush", "all"], ["monitor", "file", "/x"],
    ["vrf", "exec", "default", "bash"], ["net", "list"], ["addr", "s"], [],
])
def test_ip_is_read_only_and_stays_in_the_switch(args: list[str]) -> None:
    with pytest.raises(ArgvRefused):
        ip_argv(NS, args)


@pytest.mark.parametrize("args", [
    ["-h", "10.0.0.1", "ping"], ["-p", "6380", "ping"], ["-s", "/tmp/other.sock", "ping"], ["-u", "redis://x"],
    ["--rdb", "/tmp/dump"], ["--pipe"], ["-x", "set", "k"], ["--eval", "/etc/passwd"], ["-c", "ping"],
    ["config", "set", "dir", "/tmp"], ["CONFIG", "SET", "dbfilename", "x"], ["config", "rewrite"],
    ["module", "load", "/tmp/x.so"], ["debug", "sleep", "0"], ["replicaof", "10.0.0.1", "6379"],
    ["slaveof", "10.0.0.1", "6379"], ["migrate", "h", "1", "k", "0", "0"], ["acl", "save"], ["-n", "99", "ping"],
])
def test_redis_cli_only_talks_to_the_switchs_own_redis(args: list[str]) -> None:
    with pytest.raises(ArgvRefused):
        parse_redis_cli(args)


@pytest.mark.parametrize(("args", "named"), [
    (["shutdown"], "SHUTDOWN"), (["SHUTDOWN", "NOSAVE"], "SHUTDOWN"), (["acl", "setuser", "x", "on"], "ACL SETUSER"),
    (["ACL", "DELUSER", "default"], "ACL DELUSER"), (["acl", "save"], "ACL SAVE"), (["acl", "load"], "ACL LOAD"),
    (["client", "pause", "20000"], "CLIENT PAUSE"), (["CLIENT", "PAUSE", "100", "WRITE"], "CLIENT PAUSE"),
    (["client", "kill", "id", "3"], "CLIENT KILL"), (["client", "no-evict", "on"], "CLIENT NO-EVICT"),
    (["client", "unpause"], "CLIENT UNPAUSE"), (["config", "set", "maxclients", "1"], "CONFIG SET"),
    (["config", "resetstat"], "CONFIG RESETSTAT"), (["Config", "Rewrite"], "CONFIG REWRITE"),
    (["debug", "sleep", "30"], "DEBUG"), (["module", "list"], "MODULE"), (["monitor"], "MONITOR"),
    (["failover"], "FAILOVER"), (["psync", "?", "-1"], "PSYNC"),
])
def test_redis_admin_commands_are_refused_by_name(args: list[str], named: str) -> None:
    why = redis_refusal(args)
    assert why is not None and f"'{named}'" in why and "not available on this switch" in why
    with pytest.raises(ArgvRefused):
        parse_redis_cli(["-n", "4", *args])
    assert status(translate("redis-cli " + " ".join(args), SW)) == 1
    assert status(translate("sudo sonic-db-cli CONFIG_DB " + " ".join(args), SW)) == 1
    assert status(translate_redis(" ".join(args), SW, 4, True)) == 1


@pytest.mark.parametrize("args", [
    ["client", "list"], ["CLIENT", "SETNAME", "me"], ["client", "getname"], ["client", "id"], ["client", "info"],
    ["acl", "whoami"], ["acl", "list"], ["config", "get", "maxclients"], ["save"], ["bgsave"], ["flushdb"],
    ["eval", "return 1", "0"], ["subscribe", "x"], ["info"], ["hgetall", "PORT|Ethernet0"], ["client"],
])
def test_ordinary_redis_commands_pass(args: list[str]) -> None:
    assert redis_refusal(args) is None
    assert isinstance(translate("redis-cli " + " ".join(shlex.quote(a) for a in args), SW), Run)


@pytest.mark.parametrize("line", [
    "sonic-db-cli CONFIG_DB 'ACL SETUSER' intruder on nopass +@all",   # redis-py splits a first word holding spaces
    "sonic-db-cli CONFIG_DB 'CLIENT PAUSE' 10", "sonic-db-cli CONFIG_DB 'SHUTDOWN NOSAVE'",
    "sonic-db-cli CONFIG_DB ' config   set' dir /tmp",
    "redis-cli --quoted-input '\"\\x43LIENT\"' PAUSE 10",                # redis-cli decodes each argument
    "redis-cli --quoted-input 'C\"LIENT\"' PAUSE 10", "redis-cli --quoted-input \"'SHUTDOWN'\"",
    "redis-cli --quoted-input '\"\\x41\\x43L\"' setuser x on",
])
def test_a_refused_command_cannot_be_smuggled_past_the_guard(line: str) -> None:
    """What redis receives is judged, not how the shell spelt it (a review sent ACL SETUSER, CLIENT
    PAUSE and SHUTDOWN through these, and they ran)."""
    assert status(translate(line, SW)) == 1


@pytest.mark.parametrize(("word", "sent"), [
    ('"\\x43LIENT"', "CLIENT"), ('C"LIENT"', "CLIENT"), ("'a\\'b'", "a'b"), ("plain", "plain"),
    ('"a\\nb"', "a\nb"), ('"open', None), ("'CLI'\"ENT\"", None), ('CL"IE"NT', None), ("a b", None),
])
def test_quoted_input_is_read_as_redis_cli_reads_it(word: str, sent: str | None) -> None:
    """Checked against redis-cli 7.0's --quoted-input (C"LIENT" ran CLIENT ID; 'CLI'"ENT" and CL"IE"NT
    were 'Invalid quoted string')."""
    from twin.switch.cli.redis_guard import unquote_c_string

    assert unquote_c_string(word) == sent


def test_sonic_db_cli_refuses_what_redis_cli_refuses() -> None:
    assert "CONFIG SET" in error(translate("sonic-db-cli CONFIG_DB config set dir /tmp", SW))
    assert redis_refusal(["config", "get", "dir"]) is None and redis_refusal(["hgetall", "x"]) is None


def test_interactive_redis_cli_lines() -> None:
    assert translate_redis("select 4", SW, 0, True) == Enter("redis-cli", db=4)
    assert translate_redis("quit", SW, 4, True) == Exit()
    run = translate_redis("hget PORT|Ethernet0 mtu", SW, 4, True)
    assert isinstance(run, Run) and list(run.argv) == ["redis-cli", "-s", str(RUNDIR / "redis.sock"), "-n", "4",
                                                       "--no-raw", "hget", "PORT|Ethernet0", "mtu"]
    assert status(translate_redis("config set dir /tmp", SW, 4, True)) == 1
    assert status(translate_redis("-h 10.0.0.1 ping", SW, 4, True)) == 1
    assert status(translate_redis("select 99", SW, 4, True)) == 1


# -- vtysh: only -c lines, and no FRR command that names a file -------------------------------------

@pytest.mark.parametrize("args", [
    ["-f", "/etc/passwd"], ["-b"], ["-w"], ["-H", "/tmp/history"], ["-u", "root"], ["-N", "x"],
    ["--config_dir", "/etc"], ["--vty_socket", "/run/frr"], ["--inputfile=/etc/shadow"], ["-m", "-f", "/x"],
    ["-C", "-f", "/etc/passwd"], ["-d", "../x"], ["-c"],
])
def test_vtysh_options_other_than_c_are_refused(args: list[str]) -> None:
    with pytest.raises(VtyshRefused):
        parse_vtysh(args)


@pytest.mark.parametrize("line", [
    "log file /tmp/pwned", "lo fi /tmp/pwned", "log f /tmp/pwned", "LOG FILE /tmp/x", "no log file /tmp/x",
    "do log file /tmp/x", "log filtered-file /tmp/x", "lo filt /tmp/x", "log syslog", "log extended x",
    "destination file /tmp/x", "dump bgp all /tmp/x", "du b a /tmp/x", "no dump bgp all", "copy /etc/passwd running",
    "cop /etc/shadow running-config", "write file", "wr fi", "w f", "output file /tmp/x", "ou fi /tmp/x",
    "banner motd file /etc/shadow", "b m f /etc/shadow", "start-shell", "start-shell bash", "st", "terminal paginate",
    "ter pag", "service integrated-vtysh-config", "no service integrated-vtysh-config", "no serv int",
    "netns /proc/1/ns/net", "rpki", "show version\nlog file /tmp/x", "  log   file   /tmp/x", "show version\x1b",
    "password zebra", "pass zebra", "no password", "enable password x", "en pass x", "do enable password x",
    "line vty", "li vty", "l v", "agentx", "no agentx", "bmp targets x", "fpm address 10.0.0.1",
])
def test_frr_commands_that_name_a_file_are_refused_with_abbreviations(line: str) -> None:
    assert refusal(line) is not None
    with pytest.raises(VtyshRefused):
        parse_vtysh(["-c", "conf t", "-c", line])
    action = translate(f"vtysh -c 'conf t' -c {shlex.quote(line)}", SW)
    assert status(action) == 1


@pytest.mark.parametrize("line", [
    "show ip bgp summary", "sh ip bgp sum", "conf t", "configure terminal", "router bgp 65101",
    "neighbor 10.0.0.64 shutdown", "no neighbor 10.0.0.64 shutdown", "write memory", "wr mem", "write",
    "write terminal",
    "log timestamp precision 6", "log commands", "do show running-config", "end", "exit", "! a comment",
    "interface Ethernet0", "description uplink", "show logging", "enable", "neighbor 10.0.0.64 password s3cret",
    "bfd", "address-family ipv4 unicast", "ping 10.0.0.1", "list",
])
def test_ordinary_frr_commands_pass(line: str) -> None:
    assert refusal(line) is None
    assert parse_vtysh(["-c", line]).lines == (line,)


# -- containers --------------------------------------------------------------------------------------

def test_docker_switch_runs_other_lines_in_its_container() -> None:
    assert translate("bash -c 'touch /tmp/x'", DOCKER) == InContainer("tw-lab-leaf1", "bash -c 'touch /tmp/x'")
    assert translate("echo x > /tmp/pwned", DOCKER) == InContainer("tw-lab-leaf1", "echo x > /tmp/pwned")
    assert translate("sudo cat /etc/hostname", DOCKER) == InContainer("tw-lab-leaf1", "cat /etc/hostname")
    assert translate("show ip bgp summary", DOCKER) == Show(("ip", "bgp", "summary"))
    assert status(translate("vtysh -c 'log file /tmp/x'", DOCKER)) == 1
    assert status(translate("show version > /tmp/x", DOCKER)) == 1   # in the set: the shell's rules
    assert translate("exit", DOCKER) == Exit()


def test_sonic_vs_switch_answers_with_its_own_cli() -> None:
    assert translate("show ip bgp summary", SONIC) == InContainer("tw-lab-leaf1", "show ip bgp summary")
    assert translate("sudo config save -y", SONIC) == InContainer("tw-lab-leaf1", "sudo config save -y")
    assert translate("sudo -s", SONIC) == Enter("root") and translate("exit", SONIC) == Exit()


# -- files of config save/load/reload stay in the switch's directory -------------------------------

@pytest.mark.parametrize(("given", "name"), [
    (None, "config_db.json"), ("/etc/sonic/config_db.json", "config_db.json"),
    ("/etc/sonic/backup.json", "backup.json"),
    ("backup.json", "backup.json"), ("./backup.json", "backup.json"), ("~/backup.json", "backup.json"),
    ("/home/admin/backup.json", "backup.json"), (str(RUNDIR / "x.json"), "x.json"),
])
def test_sonic_paths_map_into_the_switch_directory(given: str | None, name: str) -> None:
    file = switch_file(RUNDIR, given)
    assert file.path == RUNDIR / name and file.shown == f"/etc/sonic/{name}"


@pytest.mark.parametrize("given", [
    "/tmp/pwned", "/etc/passwd", "/etc/shadow", "../x.json", "/etc/sonic/../passwd", "/etc/sonic/frr/x.conf",
    "sub/x.json", "/run/twin/lab/nodes/leaf2/config_db.json", "", "/", "/etc/sonic", "a\x00b", "~root/x",
])
def test_paths_outside_the_switch_are_refused(given: str) -> None:
    with pytest.raises(PathRefused):
        switch_file(RUNDIR, given)


def test_a_symlink_cannot_lead_a_load_out_of_the_directory(tmp_path: Path) -> None:
    rundir = tmp_path / "leaf1"
    rundir.mkdir()
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"PORT": {"EthernetX": {"mtu": "1"}}}))
    (rundir / "evil.json").symlink_to(secret)
    with pytest.raises(OSError):
        cli_paths.read_config(switch_file(rundir, "/etc/sonic/evil.json"))
    fake = FakeSwitch(rundir)
    before = fake.config()
    out = config_cli.execute(fake, ConfigRequest("load", "evil.json"))
    assert out.status == 1 and "cannot read /etc/sonic/evil.json" in out.err and fake.config() == before


def test_a_save_replaces_a_symlink_instead_of_following_it(tmp_path: Path) -> None:
    rundir = tmp_path / "leaf1"
    rundir.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    (rundir / "config_db.json").symlink_to(outside)
    out = config_cli.execute(FakeSwitch(rundir), ConfigRequest("save", None))
    assert out.status == 0 and outside.read_text() == "untouched"
    assert not (rundir / "config_db.json").is_symlink()
    assert json.loads((rundir / "config_db.json").read_text())["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf1"


# -- config: SONiC's words, CONFIG_DB's writes -----------------------------------------------------

class FakeSwitch:
    """SwitchData over the committed leaf1 config_db and canned FRR answers."""

    def __init__(self, rundir: Path, answers: dict[str, str] | None = None,
                 appl: dict[str, dict[str, str]] | None = None) -> None:
        from configdb_edits import LEAF1

        self.name, self.rundir = "leaf1", rundir
        self._config: ConfigDb = as_stored(json.loads(LEAF1.read_text()))
        self.answers = answers or {}
        self.appl = appl or {}
        self.asked: list[str] = []
        self.writes: list[tuple[str, str, dict[str, str]]] = []
        self.restarts: list[bool] = []   # each CONFIG_DB replaced: with the services restarted around it

    def vtysh(self, line: str) -> str:
        self.asked.append(line)
        return self.answers.get(line, "")

    def config(self) -> ConfigDb:
        return copy.deepcopy(self._config)

    def appl_table(self, table: str) -> dict[str, dict[str, str]]:
        return self.appl

    def mod_entry(self, table: str, key: str, fields: dict[str, str]) -> None:
        self.writes.append((table, key, fields))
        self._config.setdefault(table, {}).setdefault(key, {}).update(fields)

    def replace_config(self, old: ConfigDb, new: ConfigDb) -> None:
        self._config = copy.deepcopy(new)
        self.restarts.append(False)

    def hostname(self) -> str:
        return str(self._config["DEVICE_METADATA"]["localhost"]["hostname"])

    def reload_config(self, new: ConfigDb) -> None:
        self._config = copy.deepcopy(new)
        self.restarts.append(True)


def test_config_interface_writes_port_admin_status(tmp_path: Path) -> None:
    fake = FakeSwitch(tmp_path)
    assert config_cli.execute(fake, ConfigRequest("interface-admin", "Ethernet128", "down")) == Output()
    assert fake.writes == [("PORT", "Ethernet128", {"admin_status": "down"})]
    config_cli.execute(fake, ConfigRequest("interface-admin", "Ethernet128,Ethernet132", "up"))
    assert fake.config()["PORT"]["Ethernet132"]["admin_status"] == "up"
    bad = config_cli.execute(fake, ConfigRequest("interface-admin", "Ethernet999", "down"))
    assert bad.status == 2 and "Interface name is invalid" in bad.err
    assert config_cli.interface_names("Ethernet0-8") == [f"Ethernet{n}" for n in range(9)]


def test_config_bgp_writes_neighbor_admin_status(tmp_path: Path) -> None:
    fake = FakeSwitch(tmp_path)
    out = config_cli.execute(fake, ConfigRequest("bgp-admin", "10.0.0.64", "down"))
    assert out.out == "Shutting down BGP session with neighbor 10.0.0.64...\n"
    assert fake.writes == [("BGP_NEIGHBOR", "default|10.0.0.64", {"admin_status": "down"})]
    by_name = config_cli.execute(fake, ConfigRequest("bgp-admin", "spine2", "up"))
    assert by_name.out == "Starting up BGP session with neighbor 10.0.0.66...\n"
    everyone = config_cli.execute(fake, ConfigRequest("bgp-admin", None, "down"))
    assert everyone.out.count("Shutting down") == len(fake.config()["BGP_NEIGHBOR"])
    missing = config_cli.execute(fake, ConfigRequest("bgp-admin", "1.1.1.1", "down"))
    assert missing.status == 2 and "Could not locate neighbor '1.1.1.1'" in missing.err


def test_config_save_load_reload(tmp_path: Path) -> None:
    fake = FakeSwitch(tmp_path)
    saved = config_cli.execute(fake, ConfigRequest("save", "/etc/sonic/backup.json"))
    assert saved.out == "Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/backup.json\n"
    backup = json.loads((tmp_path / "backup.json").read_text())
    assert backup["PORT"]["Ethernet0"]["mtu"] == "9100"
    backup["PORT"]["Ethernet0"]["mtu"] = "1500"
    del backup["PORT"]["Ethernet128"]["fec"]
    (tmp_path / "backup.json").write_text(json.dumps(backup))
    config_cli.execute(fake, ConfigRequest("load", "backup.json"))
    assert fake.config()["PORT"]["Ethernet0"]["mtu"] == "1500" and "fec" in fake.config()["PORT"]["Ethernet128"]
    out = config_cli.execute(fake, ConfigRequest("reload", "backup.json"))
    assert "--write-to-db" in out.out and "fec" not in fake.config()["PORT"]["Ethernet128"]
    assert config_cli.execute(fake, ConfigRequest("load", "nothere.json")).out == \
        "The config_db file /etc/sonic/nothere.json doesn't exist\n"
    refused = config_cli.execute(fake, ConfigRequest("save", "/tmp/pwned"))
    assert refused.status == 1 and not Path("/tmp/pwned").exists()


def test_config_reload_restarts_the_services_around_the_new_config_unless_n(tmp_path: Path) -> None:
    """SONiC's reload stops sonic.target, writes the file into CONFIG_DB and restarts sonic.target (bgp
    renders FRR afresh); -n (--no_service_restart) only writes CONFIG_DB."""
    fake = FakeSwitch(tmp_path)
    config_cli.execute(fake, ConfigRequest("save", "/etc/sonic/backup.json"))
    fake.restarts.clear()
    out = config_cli.execute(fake, ConfigRequest("reload", "/etc/sonic/backup.json"))
    assert out == Output(out="Acquired lock on /etc/sonic/reload.lock\nStopping SONiC target ...\n"
                             "Running command: /usr/local/bin/sonic-cfggen -j /etc/sonic/backup.json --write-to-db\n"
                             "Restarting SONiC target ...\nReleased lock on /etc/sonic/reload.lock\n")
    quiet = parse_config(["reload", "-y", "-n", "backup.json"])
    assert quiet == ConfigRequest("reload", "backup.json", restart=False)
    out = config_cli.execute(fake, quiet)
    assert "SONiC target" not in out.out and "--write-to-db" in out.out
    assert fake.restarts == [True, False]
    assert parse_config(["reload", "-y", "--no_service_restart"]) == ConfigRequest("reload", None, restart=False)
    assert parse_config(["load", "-y", "-n"]) == Output(
        err="Usage: config load [OPTIONS] [FILENAME]\nTry 'config load -h' for help.\n\nError: No such option: -n\n",
        status=2)


def test_config_load_minigraph_is_refused_as_not_emulated() -> None:
    out = parse_config(["load_minigraph", "-y"])
    assert isinstance(out, Output) and out.status == 1 and out.out == ""
    assert out.err.startswith("config load_minigraph: not emulated: a twin switch has no minigraph")
    assert "sonic-cfggen -H -m minigraph.xml --print-data" in out.err and "config reload" in out.err


def test_config_parsing_as_sonic_click_parses() -> None:
    assert parse_config(["save"]) == ConfigRequest("save", None,
                                                   question="Existing files will be overwritten, continue?")
    assert parse_config(["load", "x.json"]) == ConfigRequest("load", "x.json",
                                                             question="Load config from the file(s) x.json ?")
    assert parse_config(["rel", "-y"]) == ConfigRequest("reload", None)
    assert parse_config(["interface", "mtu", "Ethernet0", "9000"]) == \
        ConfigRequest("interface-mtu", "Ethernet0", "9000")
    # click.INT takes any digits int() takes; CONFIG_DB gets the number's ASCII digits, as SONiC writes it
    assert parse_config(["interface", "mtu", "Ethernet0", "\u0669\u0661\u0660\u0660"]) == \
        ConfigRequest("interface-mtu", "Ethernet0", "9100")
    not_int = parse_config(["interface", "mtu", "Ethernet0", "9k"])
    assert isinstance(not_int, Output) and "'9k' is not a valid integer." in not_int.err
    too_many = parse_config(["lo"])
    assert isinstance(too_many, Output) and "Too many matches: load, load_mgmt_config, load_minigraph, loopback" \
        in too_many.err and too_many.status == 2
    unknown = parse_config(["frobnicate"])
    assert isinstance(unknown, Output) and "No such command 'frobnicate'." in unknown.err
    missing = parse_config(["interface", "shutdown"])
    assert isinstance(missing, Output) and "Missing argument '<interface_name>'." in missing.err
    other = parse_config(["vlan", "add", "10"])
    assert isinstance(other, Output) and other.status == 1 and "not available on this twin switch" in other.err


# -- show: SONiC's output from FRR's JSON -----------------------------------------------------------

SUMMARY = {"routerId": "10.1.4.1", "as": 65101, "vrfId": 0, "vrfName": "default", "tableVersion": 14, "ribCount": 11,
           "ribMemory": 2112, "peerCount": 2, "peerMemory": 1482928, "peerGroupCount": 1, "peerGroupMemory": 64,
           "peers": {"10.0.0.66": {"remoteAs": 65100, "version": 4, "msgRcvd": 361, "msgSent": 360,
                                   "tableVersion": 0, "outq": 0, "inq": 0, "peerUptime": "00:17:17", "pfxRcd": 3,
                                   "state": "Established"},
                     "10.0.0.64": {"remoteAs": 65100, "version": 4, "msgRcvd": 12, "msgSent": 10, "tableVersion": 0,
                                   "outq": 0, "inq": 0, "peerUptime": "never", "pfxRcd": 0, "state": "Idle (Admin)"}}}
ROUTES = {
    "10.1.4.2/32": [{"prefix": "10.1.4.2/32", "protocol": "bgp", "selected": True, "distance": 20, "metric": 0,
                     "installed": True, "uptime": "00:17:16",
                     "nexthops": [{"flags": 3, "fib": True, "ip": "10.0.0.64", "interfaceName": "Ethernet128",
                                   "active": True},
                                  {"flags": 3, "fib": True, "ip": "10.0.0.66", "interfaceName": "Ethernet132",
                                   "active": True}]}],
    "10.0.0.64/31": [{"prefix": "10.0.0.64/31", "protocol": "connected", "selected": True, "distance": 0,
                      "metric": 0, "installed": True, "uptime": "00:17:24",
                      "nexthops": [{"flags": 3, "directlyConnected": True, "interfaceName": "Ethernet128",
                                    "active": True}]}]}


def test_bgp_summary_as_sonic_prints_it() -> None:
    text = bgp_summary(SUMMARY, "v4", {"10.0.0.64": "spine1", "10.0.0.66": "spine2"})
    lines = text.splitlines()
    assert lines[1] == "IPv4 Unicast Summary:"
    assert lines[2] == "BGP router identifier 10.1.4.1, local AS number 65101 vrf-id 0"
    assert lines[5] == "Peers 2, using 1482928 KiB of memory"   # SONiC's own label for FRR's bytes
    header = next(i for i, line in enumerate(lines) if line.startswith("Neighbhor"))
    assert lines[header].split() == ["Neighbhor", "V", "AS", "MsgRcvd", "MsgSent", "TblVer", "InQ", "OutQ", "Up/Down",
                                     "State/PfxRcd", "NeighborName"]
    assert lines[header + 1].split() == ["-" * 11, "---", "-----", "-" * 9, "-" * 9, "-" * 8, "-----", "------",
                                         "-" * 9, "-" * 14, "-" * 14]
    assert lines[header + 2].split()[0] == "10.0.0.64" and "Idle (Admin)" in lines[header + 2]
    assert lines[header + 3].split() == ["10.0.0.66", "4", "65100", "361", "360", "0", "0", "0", "00:17:17", "3",
                                         "spine2"]
    assert lines[-1] == "Total number of neighbors 2"


def test_simple_table_pads_columns_to_their_header_plus_two() -> None:
    # python-tabulate's simple format strips each line's trailing spaces (tabulate 0.10 prints exactly this)
    assert simple_table(["V", "Name"], [[4, "a"]]) == "  V  Name\n---  ------\n  4  a"
    # numbers align on their decimal points, floats written as format "g" would
    assert simple_table(["P", "FLR(O)"], [["a", "4.21e-10"], ["b", "0"]], stralign="right") == \
        "  P    FLR(O)\n---  --------\n  a  4.21e-10\n  b  0"


def test_ip_route_as_sonic_prints_it() -> None:
    text = ip_routes(ROUTES, by_ip=False)
    assert text.startswith("Codes: K - kernel route, C - connected, S - static, R - RIP,\n")
    lines = text.splitlines()
    assert "C>*10.0.0.64/31 is directly connected, Ethernet128, 00:17:24" in lines
    assert "B>*10.1.4.2/32 [20/0] via 10.0.0.64, Ethernet128, 00:17:16" in lines
    assert "  *" + " " * len("10.1.4.2/32 [20/0]") + " via 10.0.0.66, Ethernet132, 00:17:16" in lines
    entry = ip_routes({"10.1.4.2/32": ROUTES["10.1.4.2/32"]}, by_ip=True)
    assert entry.splitlines()[:5] == ["Routing entry for 10.1.4.2/32", '  Known via "bgp", distance 20, metric 0, best',
                                      "  Last update 00:17:16 ago", "  * 10.0.0.64, via Ethernet128",
                                      "  * 10.0.0.66, via Ethernet132"]


def test_show_reads_frr_the_way_sonic_does(tmp_path: Path) -> None:
    fake = FakeSwitch(tmp_path, answers={
        "show ip bgp vrf default summary json": json.dumps({"ipv4Unicast": SUMMARY}),
        "show ip route json": json.dumps(ROUTES),
        "show ip route 10.1.4.2/32 json": json.dumps({"10.1.4.2/32": ROUTES["10.1.4.2/32"]}),
        "show ip route bgp": "B>* 10.1.4.2/32 ...",
        "show ip bgp vrf default neighbor 10.0.0.64": "BGP neighbor is 10.0.0.64",
    }, appl={"Ethernet0": {"oper_status": "up", "admin_status": "up", "mtu": "9100"}})
    summary = show_cli.run_show(fake, ["ip", "bgp", "sum"])
    assert "spine1" in summary.out and summary.out.rstrip().endswith("Total number of neighbors 2")
    assert show_cli.run_show(fake, ["ip", "route"]).out.startswith("Codes:")
    assert show_cli.run_show(fake, ["ip", "route", "10.1.4.2/32"]).out.startswith("Routing entry for 10.1.4.2/32")
    assert show_cli.run_show(fake, ["ip", "route", "bgp"]).out == ":\nB>* 10.1.4.2/32 ...\n"
    assert show_cli.run_show(fake, ["ip", "bgp", "neighbors", "10.0.0.64"]).out == "BGP neighbor is 10.0.0.64\n"
    status_out = show_cli.run_show(fake, ["int", "status"]).out.splitlines()
    assert status_out[0].split()[:3] == ["Interface", "Lanes", "Speed"]
    assert status_out[2].split() == ["Ethernet0", "17,18,19,20", "400G", "9100", "rs", "etp1a", "routed", "up", "up",
                                     "N/A", "N/A"]
    running = json.loads(show_cli.run_show(fake, ["runningconfiguration", "all"]).out)
    assert running["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf1" and "bgpraw" in running
    assert list(running["PORT"]) == ["Ethernet0", "Ethernet4", "Ethernet128", "Ethernet132", "Ethernet136",
                                     "Ethernet140"]   # sonic-cfggen's natural order
    assert "SONiC Software Version: SONiC.twin-" in show_cli.run_show(fake, ["version"]).out
    unknown = show_cli.run_show(fake, ["frobnicate"])
    assert unknown.status == 2 and "Error: No such command 'frobnicate'." in unknown.err
    assert show_cli.run_show(fake, ["vlan", "brief"]).status == 1
    # a newline smuggled into an argument never becomes a second FRR line
    from twin.switch.cli.switch_view import SwitchView

    view = SwitchView("leaf1", tmp_path)
    injected = show_cli.run_show(view, ["ip", "route", "10.0.0.0/8\nlog file /tmp/pwned"])
    assert injected.status == 1 and "log file" in injected.err


# -- sonic-cli (KLISH), as netmiko's dell_sonic drives it ----------------------------------------------

def test_klish_modes_and_changes(tmp_path: Path) -> None:
    fake = FakeSwitch(tmp_path)
    state = klish.Klish()
    assert state.prompt("leaf1") == "leaf1# "
    state, out = klish.handle(fake, state, "terminal length 0")
    assert out == Output()
    state, _ = klish.handle(fake, state, "configure terminal")
    assert state.prompt("leaf1") == "leaf1(config)# "
    state, _ = klish.handle(fake, state, "interface Ethernet128")
    assert state.prompt("leaf1") == "leaf1(conf-if-Ethernet128)# "
    state, _ = klish.handle(fake, state, "shutdown")
    assert fake.writes[-1] == ("PORT", "Ethernet128", {"admin_status": "down"})
    state, _ = klish.handle(fake, state, "no shutdown")
    assert fake.writes[-1] == ("PORT", "Ethernet128", {"admin_status": "up"})
    state, _ = klish.handle(fake, state, "exit")
    state, _ = klish.handle(fake, state, "router bgp 65101")
    state, _ = klish.handle(fake, state, "neighbor 10.0.0.64")
    assert state.prompt("leaf1") == "leaf1(config-router-bgp-neighbor)# "
    state, out = klish.handle(fake, state, "shutdown")
    assert fake.writes[-1] == ("BGP_NEIGHBOR", "default|10.0.0.64", {"admin_status": "down"}) and out.out == ""
    state, _ = klish.handle(fake, state, "end")
    assert state == klish.Klish()
    state, _ = klish.handle(fake, state, "write memory")
    assert (tmp_path / "config_db.json").exists()
    state, bad = klish.handle(fake, state, "frobnicate")
    assert bad.out.endswith('% Error: Invalid input detected at "^" marker.\n')
    state, _ = klish.handle(fake, state, "exit")
    assert state.left


# -- pieces --------------------------------------------------------------------------------------------

def test_tokenizer_keeps_quoted_operators_as_words() -> None:
    assert tokenize("vtysh -c 'show ip route | include B'") == ["vtysh", "-c", "show ip route | include B"]
    assert tokenize('a "b c" d\\ e') == ["a", "b c", "d e"]
    assert tokenize("a|b") == ["a", Op("|"), "b"]
    assert pipeline(tokenize("a >> b")) == Op(">>")
    assert pipeline(tokenize('a "$(b)"')) == Op("$(")


def test_filters_read_no_files() -> None:
    with pytest.raises(FilterError):
        parse_filter(["awk", "{print}", "/etc/shadow"])
    with pytest.raises(FilterError):
        Filter("grep", ("x", "/etc/shadow")).apply("x\n")
    with pytest.raises(FilterError):
        Filter("more", ("/etc/shadow",)).apply("x\n")


def test_vtysh_echo_is_swallowed() -> None:
    echo = EchoSwallow()
    assert echo.feed("leaf1# ") == "leaf1# "
    echo.expect("show version")
    assert echo.feed("show ver") == ""
    assert echo.feed("sion\nFRRouting 8.4\nleaf1# ") == "FRRouting 8.4\nleaf1# "
    echo.expect("conf t")
    assert echo.feed("leaf1# conf t\nleaf1(config)# ") == "leaf1# leaf1(config)# "


def test_secret_files_are_0600_from_creation(tmp_path: Path) -> None:
    path = tmp_path / "agent.json"
    path.write_text("old")
    path.chmod(0o644)
    old_umask = os.umask(0)
    try:
        write_private(path, b'{"password": "x"}')
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_bytes() == b'{"password": "x"}'
    assert [p.name for p in tmp_path.iterdir()] == ["agent.json"]


def test_twin_cli_passes_the_password_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from twin.cli import app as cli
    from twin.lab.running import RunningLab

    seen: dict[str, Any] = {}
    monkeypatch.setattr(cli, "_resolve_name", lambda name: "lab")
    lab = SimpleNamespace(ssh_target=lambda node: {
        "host": "172.20.1.6", "port": 22, "username": "admin", "password": "s3cret-pass"})
    monkeypatch.setattr(RunningLab, "read", classmethod(lambda cls, name: lab))
    monkeypatch.setattr(shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(os, "execvpe", lambda file, argv, env: seen.update(file=file, argv=argv, env=env))
    cli.cli("leaf1", None)
    assert seen["argv"][:2] == ["sshpass", "-e"] and "s3cret-pass" not in " ".join(seen["argv"])
    assert seen["env"]["SSHPASS"] == "s3cret-pass"


class _MetadataRedis:
    """Just what SwitchView.hostname asks of redis: DEVICE_METADATA|localhost's fields."""

    def __init__(self, meta: dict[str, str]) -> None:
        self.meta = meta

    def client(self, name: str) -> _MetadataRedis:
        assert name == "CONFIG_DB"
        return self

    def hget(self, key: str, field: str) -> str | None:
        assert key == "DEVICE_METADATA|localhost"
        return self.meta.get(field)


def test_the_hostname_is_device_metadata_s_and_vtysh_is_told_when_it_changes(tmp_path: Path) -> None:
    """SONiC's hostname-config makes DEVICE_METADATA's hostname the system's, which bash's prompt,
    `hostname` and a starting vtysh show; 'sonic' when there is none."""
    meta = {"hostname": "tor-a"}
    view = SwitchView("leaf1", tmp_path, db=_MetadataRedis(meta))  # type: ignore[arg-type]
    assert view.hostname() == "tor-a"
    view.vtysh_hostname()
    assert (tmp_path / "vtysh.conf").read_text() == "service integrated-vtysh-config\nhostname tor-a\n"
    meta["hostname"] = "tor-b"   # a gNMI Set of DEVICE_METADATA|localhost hostname
    view.vtysh_hostname()
    assert (tmp_path / "vtysh.conf").read_text().endswith("hostname tor-b\n")
    del meta["hostname"]
    assert view.hostname() == "sonic"


def test_klish_marks_errors_under_the_prompt_with_the_hostname(tmp_path: Path) -> None:
    fake = FakeSwitch(tmp_path)
    fake._config["DEVICE_METADATA"]["localhost"]["hostname"] = "tor-a"
    _, out = klish.handle(fake, klish.Klish(), "frobnicate")
    assert out.out.startswith(" " * len("tor-a# ") + "^")

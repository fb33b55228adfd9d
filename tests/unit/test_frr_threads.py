"""bench/frr_threads.py: FRR's own accounting of its event loops' CPU, summed over a lab's switches, and
the share that went to answering on the vty."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from frr_threads import frr_threads, parse, vty_dirs
from lab_up import vty_comparison

# bgpd 8.4's `show thread cpu` as it printed it on a spine of a 64 x 128 fabric (rows shortened)
BGPD = """Thread statistics for bgpd:

Showing statistics for pthread default
--------------------------------------
                               CPU (user+system): Real (wall-clock):
Active   Runtime(ms)   Invoked Avg uSec Max uSecs Avg uSec Max uSecs  CPU_Warn Wall_Warn Starv_Warn Type   Thread
    0        301.578     18574       16      2938      552    948645         0         0          0     E   bgp_process_packet
    0         14.325       107      133       712     2003     78469         0         0          0    T    bgp_announce_route_timer_expired
    0        148.354      1274      116      1079    13324    609016         0         0          0     E   bgp_event
    1          0.029         1       29        29       30        30         0         0          0  R      vtysh_accept
    0          0.030         1       30        30       30        30         0         0          0  R      vtysh_read
    0          0.012         2        6         8        7         9         0         0          0   W     vtysh_write
  128          0.570         2      285       296     9900     13032         0         0          0    T    (bgp_holdtime_timer)


Showing statistics for pthread BGP I/O thread
---------------------------------------------
                               CPU (user+system): Real (wall-clock):
Active   Runtime(ms)   Invoked Avg uSec Max uSecs Avg uSec Max uSecs  CPU_Warn Wall_Warn Starv_Warn Type   Thread
    0        309.750     13494       22       605     2441    762325         0         0          0   W     bgp_process_writes
  128        218.588     15416       14      3603      822    482610         0         0          0  R      bgp_process_reads


Showing statistics for pthread BGP Keepalives thread
----------------------------------------------------
                               CPU (user+system): Real (wall-clock):
Active   Runtime(ms)   Invoked Avg uSec Max uSecs Avg uSec Max uSecs  CPU_Warn Wall_Warn Starv_Warn Type   Thread
No data to display yet.


Total thread statistics
-------------------------
                               CPU (user+system): Real (wall-clock):
Active   Runtime(ms)   Invoked Avg uSec Max uSecs Avg uSec Max uSecs  CPU_Warn Wall_Warn  Type  Thread
  261       1225.305     75120       16     36371     1086    948645         0         0          0  RWTEX  TOTAL
"""  # noqa: E501 (FRR's own rows)

ZEBRA = """Showing statistics for pthread Zebra API client thread
------------------------------------------------------
Active   Runtime(ms)   Invoked Avg uSec Max uSecs Avg uSec Max uSecs  CPU_Warn Wall_Warn Starv_Warn Type   Thread
    0          0.559         9       62       515       62       515         0         0          0   W     zserv_write
    1         14.863       574       25       288       54     11742         0         0          0  R      zserv_read

Showing statistics for pthread Zebra API client thread
------------------------------------------------------
Active   Runtime(ms)   Invoked Avg uSec Max uSecs Avg uSec Max uSecs  CPU_Warn Wall_Warn Starv_Warn Type   Thread
    0          0.172         1      172       172      172       172         0         0          0   W     zserv_write
    0          2.000        10      200       300      210       310         0         0          0  R      vtysh_read
"""


def test_rows_are_read_per_task_and_the_grand_total_left_out() -> None:
    tasks = parse(BGPD)
    assert tasks["bgp_process_packet"] == (301.578, 18574)
    assert tasks["(bgp_holdtime_timer)"] == (0.570, 2)
    assert tasks["bgp_process_reads"] == (218.588, 15416)
    assert "TOTAL" not in tasks and "data" not in tasks
    assert len(tasks) == 9


def test_a_task_in_several_pthreads_is_summed() -> None:
    tasks = parse(ZEBRA)
    assert tasks["zserv_write"] == (0.559 + 0.172, 10)
    assert tasks["zserv_read"] == (14.863, 574)


def test_summed_over_switches_with_the_vty_share() -> None:
    texts = {("s0", "bgpd"): BGPD, ("s1", "bgpd"): BGPD, ("s0", "zebra"): ZEBRA, ("s1", "zebra"): ""}
    doc = frr_threads([Path("s0"), Path("s1")], read=lambda d, daemon: texts[(str(d), daemon)])
    assert doc["switches"] == 2
    bgpd, zebra = doc["bgpd"], doc["zebra"]
    assert bgpd["answered"] == 2 and zebra["answered"] == 1   # s1's zebra did not answer
    # vtysh_accept + vtysh_read + vtysh_write on each of two switches
    assert bgpd["vty_cpu_seconds"] == round(2 * (0.029 + 0.030 + 0.012) / 1000, 3)
    assert bgpd["vty_calls"] == 2 * (1 + 1 + 2)
    assert bgpd["cpu_seconds"] == round(2 * sum(ms for ms, _ in parse(BGPD).values()) / 1000, 2)
    assert list(bgpd["top"])[:2] == ["bgp_process_writes", "bgp_process_packet"]
    assert bgpd["top"]["bgp_process_writes"] == round(2 * 309.750 / 1000, 2)
    assert zebra["vty_cpu_seconds"] == 0.002 and zebra["vty_calls"] == 10


def test_a_switch_is_a_directory_holding_a_bgpd_socket(tmp_path: Path) -> None:
    for node in ("spine0", "leaf0", "server0"):
        (tmp_path / "nodes" / node).mkdir(parents=True)
    for node in ("spine0", "leaf0"):
        (tmp_path / "nodes" / node / "bgpd.vty").touch()
        (tmp_path / "nodes" / node / "zebra.vty").touch()
    assert vty_dirs(tmp_path) == [tmp_path / "nodes" / "leaf0", tmp_path / "nodes" / "spine0"]


def test_the_vty_cpu_of_twin_against_the_floor() -> None:
    def run(bgpd: float, zebra: float) -> dict[str, object]:
        return {"frr_threads": {"switches": 2, "bgpd": {"vty_cpu_seconds": bgpd}, "zebra": {"vty_cpu_seconds": zebra}}}

    twins = [run(0.7, 0.01), run(0.9, 0.03), run(0.5, 0.01)]
    floors = [run(0.01, 0.01), {"frr_threads": {"switches": 0}}, {}]   # runs without the figure are left out
    assert vty_comparison(twins, floors) == {"twin": 0.71, "floor": 0.02}
    assert vty_comparison(twins, []) == {"twin": 0.71}

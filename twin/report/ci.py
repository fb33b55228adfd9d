"""`twin ci`'s Markdown summary, ready for a pull-request comment."""

from __future__ import annotations

from twin.checks.effect import described
from twin.model.results import CiReport, RehearsalReport, Settle, SwitchEffect

ICON = {"success": "pass", "failure": "FAIL", "error": "ERROR", "skipped": "skip"}


def ci_markdown(r: CiReport) -> str:
    verdict = "passed" if r.passed else f"FAILED at {r.stopped_at or 'drills'}"
    lines = [f"## twin ci: {verdict}", "", f"Lab `{r.lab}` (run as `{r.name}`), {r.seconds:g} s.", "",
             "| check | result | details |", "|---|---|---|"]
    for c in r.results:
        bad = c.failures
        detail = "; ".join(f"{i.subject}: {i.message}" for i in bad[:3]) + (f" (+{len(bad) - 3} more)"
                                                                          if len(bad) > 3 else "")
        lines.append(f"| {c.name} | {ICON[c.status]} | {detail.replace('|', '/')} |")
    for step, settle in r.settles.items():
        lines += ["", f"After {step}, the fabric settled: {settled(settle)}."]
    if r.effects:
        lines += ["", *effect_lines(r.effects)]
    if r.drills:
        lines += ["", "| drill | detect | converge | longest outage | recovery | cycle | passed |",
                  "|---|---|---|---|---|---|---|"]
        for d in r.drills:
            def ms(v: float | None) -> str:
                return "-" if v is None else f"{v:g} ms"
            lines.append(f"| {d.drill} {d.target} | {ms(d.detect_ms)} | {ms(d.converge_ms)} | {ms(d.loss_ms)} | "
                         f"{ms(d.recovery.get('converge_ms'))} | {d.cycle_s:g} s | {'yes' if d.passed else 'NO'} |")
    return "\n".join(lines) + "\n"


def rehearsal_markdown(r: RehearsalReport) -> str:
    inert = [e.switch for e in r.effects if e.no_effect and e.fields]
    if r.passed and inert and len(inert) == len([e for e in r.effects if e.fields]):
        verdict = f"passed, but the change had no effect on {', '.join(inert)} (see below)"
    elif r.passed:
        verdict = "passed: the change is live on the twin"
    else:
        verdict = f"FAILED at {r.stopped_at}; " + ("every switch was rolled back and verified" if r.rolled_back
                                                   else "nothing was changed" if r.stopped_at in ("diff", "validate")
                                                   else "ROLLBACK INCOMPLETE, see below")
    lines = [f"## twin rehearse {r.change}: {verdict}", ""]
    for d in r.diffs:
        lines.append(f"### {d.switch}")
        lines += [f"- added {k}" for k in d.added] + [f"- removed {k}" for k in d.removed]
        lines += [f"- {c}" for c in d.changed]
        lines.append("")
    lines += effect_lines(r.effects)
    lines += ["| step | result | settled after | details |", "|---|---|---|---|"]
    for c in r.results:
        detail = "; ".join(f"{i.subject}: {i.message}" for i in c.failures[:3])
        settle = r.settles.get(c.name.removeprefix("verify "))
        lines.append(f"| {c.name} | {ICON[c.status]} | {settled(settle)} | {detail.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def settled(s: Settle | None) -> str:
    if s is None:
        return ""
    delay = f", FRR's route-map delay {s.frr_delay_ms / 1000:g} s" if s.frr_delay_ms else ""
    return (f"{s.settle_ms / 1000:.1f} s ({s.changes} changes{delay})" if s.settled
            else f"NOT after {s.waited_ms / 1000:.0f} s: {', '.join(s.still_changing)} still changing")


def effect_lines(effects: list[SwitchEffect]) -> list[str]:
    """What the change did, switch by switch, as Markdown."""
    if not effects:
        return []
    lines = ["### What the change did", ""]
    for e in effects:
        lines += [f"- **{e.switch}**: {line}" for line in described(e)]
    return [*lines, ""]

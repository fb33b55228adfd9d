"""`twin ci`'s Markdown summary, ready for a pull-request comment."""

from __future__ import annotations

from twin.ci import CiReport

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
    if r.drills:
        lines += ["", "| drill | detect | converge | longest outage | recovery | cycle | passed |",
                  "|---|---|---|---|---|---|---|"]
        for d in r.drills:
            def ms(v: float | None) -> str:
                return "-" if v is None else f"{v:g} ms"
            lines.append(f"| {d.drill} {d.target} | {ms(d.detect_ms)} | {ms(d.converge_ms)} | {ms(d.loss_ms)} | "
                         f"{ms(d.recovery.get('converge_ms'))} | {d.cycle_s:g} s | {'yes' if d.passed else 'NO'} |")
    return "\n".join(lines) + "\n"

"""One result model for every check (and later every drill), feeding every reporter."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Status = Literal["success", "failure", "skipped", "error"]


class ItemResult(BaseModel):
    subject: str            # the switch, peer, prefix or server pair the line is about
    status: Status
    message: str = ""


class CheckResult(BaseModel):
    name: str
    description: str
    status: Status
    items: list[ItemResult] = []
    measurements: dict[str, float] = {}

    @property
    def failures(self) -> list[ItemResult]:
        return [i for i in self.items if i.status != "success"]


def summarize(name: str, description: str, items: list[ItemResult],
              measurements: dict[str, float] | None = None) -> CheckResult:
    if any(i.status == "error" for i in items):
        status: Status = "error"
    elif any(i.status == "failure" for i in items):
        status = "failure"
    elif not items:
        status = "skipped"
    else:
        status = "success"
    return CheckResult(name=name, description=description, status=status, items=items,
                       measurements=measurements or {})

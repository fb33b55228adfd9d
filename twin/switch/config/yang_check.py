"""A whole CONFIG_DB judged by SONiC's YANG models with libyang, in process, as GCU judges it.

GCU's ConfigWrapper.validate_config_db_config loads the config into sonic_yang (sonic-utilities
generic_config_updater/gu_common.py): tables without a YANG model are cropped (left alone), the
rest is translated to YANG instance data and validated by libyang. Here the translation is
twin.stages.validate.yang's (the one `twin validate` uses), parsed by libyang's Python bindings with a
context per set of modules the config uses, kept for the agent's life: a switch's config
validates in a few milliseconds.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path

import libyang

from twin.stages.configdb import ConfigDb
from twin.stages.validate.yang import find_models, modules_to_load, prepare, to_xml

log = logging.getLogger("twin.yang")


class YangCheck:
    """SONiC's YANG models, loaded once; `errors(config)` judges a whole CONFIG_DB."""

    def __init__(self, models: Path) -> None:
        self.models = models
        self.cache = prepare(models)
        self.index = json.loads((self.cache / "index.json").read_text())
        self._contexts: dict[frozenset[str], libyang.Context] = {}
        self._lock = threading.Lock()

    @classmethod
    def find(cls, explicit: Path | None = None) -> YangCheck | None:
        """The checker over the models twin finds (twin.stages.validate.yang.find_models), or None."""
        models = find_models(explicit)
        return cls(models) if models is not None else None

    @property
    def tables(self) -> frozenset[str]:
        """The CONFIG_DB tables some model defines."""
        return frozenset(self.index)

    def module_versions(self) -> list[tuple[str, str]]:
        """(module, latest revision) of every model, as translib lists its models in Capabilities."""
        out = []
        for path in sorted(self.cache.glob("*.yang")):
            revisions = re.findall(r"^\s*revision\s+\"?(\d{4}-\d{2}-\d{2})", path.read_text(), re.M)
            out.append((path.stem, max(revisions) if revisions else ""))
        return out

    def cropped(self, config: ConfigDb) -> ConfigDb:
        """`config` without the tables no model defines (sonic_yang's _cropConfigDB)."""
        return {t: rows for t, rows in config.items() if t in self.index}

    def _context(self, modules: list[str]) -> libyang.Context:
        key = frozenset(modules)
        ctx = self._contexts.get(key)
        if ctx is None:
            ctx = libyang.Context(str(self.cache))
            for module in modules:
                ctx.load_module(module)
            self._contexts[key] = ctx
        return ctx

    def errors(self, config: ConfigDb) -> list[str]:
        """Why libyang refuses `config` (tables without a model left out); empty when valid."""
        xml, problems = to_xml(self.cropped(config), self.index)
        if problems:
            return [f"{where} {field}: {message}".replace("  ", " ") for where, field, message in problems]
        used = set(re.findall(r'<([\w-]+) xmlns="', xml))
        with self._lock:
            ctx = self._context(modules_to_load(self.cache, used))
            try:
                tree = ctx.parse_data_mem(xml, "xml", no_state=True, strict=True)
            except libyang.LibyangError as exc:
                return [str(exc).removeprefix("failed to parse data tree: ")]
            if tree is not None:
                tree.free()
        return []

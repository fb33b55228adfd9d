"""The kinds of fault a drill can cause: one module and one class per kind (`FaultKind` in base.py),
registered by name in registry.py; `Injector` (injector.py) injects and restores a resolved fault by
looking its kind up there. Adding a kind: see CONTRIBUTING-drills.md."""

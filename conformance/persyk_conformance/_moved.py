"""Former import paths of the packages that moved to ``persyk_maintainers`` (the gate, the site,
the benchmarks): each stays importable, with every submodule, as the same module objects, so
that code written against the old names keeps working
(tests/maintainers/test_maintainers_aliases.py).

The runner itself never imports them: ``persyk_conformance.gate``, ``.site`` and ``.bench`` are
aliases that only code using the old names loads.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

__all__ = ["alias"]


def alias(old: str, new: str) -> None:
    """Make ``old`` and each ``old.<submodule>`` name the module of ``new`` of the same path."""
    package = importlib.import_module(new)
    sys.modules[old] = package
    for found in pkgutil.walk_packages(package.__path__, new + "."):
        sys.modules[old + found.name[len(new):]] = importlib.import_module(found.name)

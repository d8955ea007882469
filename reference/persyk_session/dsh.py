"""The dsh-v0 backend's former import path: it is the package ``persyk_dsh`` now. This name
re-exports it, and its public submodules stay importable under it
(``persyk_session.dsh.operations``, ``persyk_session.dsh.cli``), so that code written against
them keeps working (tests/dsh/test_dsh_aliases.py)."""

import sys

from persyk_dsh import *  # noqa: F403
from persyk_dsh import __all__ as __all__
from persyk_dsh import cli, operations

# A module, not a folder, so that git follows the moved files; the submodules are the same
# module objects under both names.
sys.modules[f"{__name__}.cli"] = cli
sys.modules[f"{__name__}.operations"] = operations

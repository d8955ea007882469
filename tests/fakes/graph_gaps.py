"""The reference with the graph findings of the codes ``FAKE_GAPS`` names (comma-separated)
never reported: ``LABEL_TARGET_NOT_FOUND`` breaks TREE-4, ``REMOVAL_TARGET_NOT_FOUND`` TREE-5.
An implementation with known gaps, for ``fuzz --expected-failures``."""

import os
import sys
from typing import Any

from persyk_session import adapter
from persyk_session.fast import _lanes
from persyk_session.read import _graph, _index

GAPS = frozenset(code for code in os.environ.get("FAKE_GAPS", "").split(",") if code)
_findings = _graph.graph_findings


def graph_findings(*args: Any) -> Any:
    return [found for found in _findings(*args) if str(found.code) not in GAPS]


_index.graph_findings = graph_findings  # type: ignore[assignment]
_lanes.graph_findings = graph_findings  # type: ignore[assignment]
sys.exit(adapter.main())

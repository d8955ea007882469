"""Where the shared corpora live: real files nobody here wrote, used in place, never copied.

Looked up in order: the ``PERSYK_SHARED_CORPORA`` environment variable, ``../shared/corpora`` beside
the checkout (the workspace layout), then ``/work/shared/corpora`` (where a clean clone made
elsewhere, as CI does, still finds them). Tests that need a corpus skip with its path when none
of these exists.
"""

from __future__ import annotations

import os
from pathlib import Path


def shared_corpora() -> Path:
    """The first corpora folder that exists, else the workspace default (which then skips)."""
    candidates: list[Path] = []
    configured = os.environ.get("PERSYK_SHARED_CORPORA")
    if configured:
        candidates.append(Path(configured))
    workspace = Path(__file__).resolve().parents[2] / "shared" / "corpora"
    candidates += [workspace, Path("/work/shared/corpora")]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return workspace


CORPORA = shared_corpora()

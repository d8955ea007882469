"""A tiny fixture tree for the runner's self-tests, independent of the real fixtures.

Four cases: two golden (one needs context), two rejections. Expectations are written by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from persyk_conformance.cli import RunConfig, execute
from persyk_conformance.run._outcomes import RunRecord

FAKES = Path(__file__).resolve().parent

HEADER = b'{"type":"session","version":1,"id":"s1","timestamp":"2026-01-01T00:00:00Z"}\n'
USER = (
    b'{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01Z",'
    b'"message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1767225601000}}\n'
)

CASES: list[tuple[str, dict[str, Any], bytes]] = [
    (
        "golden/G-001-valid-session",
        {
            "id": "G-001", "kind": "golden", "title": "a valid session", "rules": ["REC-1"],
            "level": "MUST", "requires": ["read"],
            "steps": [{"op": "validate", "args": {"session": "session"},
                       "expect": {"valid": True, "errors": []},
                       "files": {"session/session.jsonl": {"unchanged": True}}}],
        },
        HEADER + USER,
    ),
    (
        "golden/G-002-valid-context",
        {
            "id": "G-002", "kind": "golden", "title": "a valid session and its context",
            "rules": ["CTX-1"], "level": "MUST", "requires": ["read"],
            "steps": [
                {"op": "validate", "args": {"session": "session"}, "expect": {"valid": True}},
                {"op": "context", "args": {"session": "session"},
                 "expect": {"leaf": "m1", "messages": [{"id": "m1"}], "custom": []}},
            ],
        },
        HEADER + USER,
    ),
    (
        "rejection/R-001-syntax-error",
        {
            "id": "R-001", "kind": "rejection", "title": "a trailing comma", "rules": ["REC-3"],
            "level": "MUST", "requires": ["read"],
            "steps": [{"op": "validate", "args": {"session": "session"},
                       "expect": {"valid": False,
                                  "errors": [{"code": "RECORD_JSON_SYNTAX", "line": 2}]}}],
        },
        HEADER + b'{"type":"custom",}\n',
    ),
    (
        "rejection/R-002-duplicate-key",
        {
            "id": "R-002", "kind": "rejection", "title": "a duplicate key", "rules": ["REC-7"],
            "level": "MUST", "requires": ["read"],
            "steps": [{"op": "validate", "args": {"session": "session"},
                       "expect": {"valid": False,
                                  "errors": [{"code": "RECORD_DUPLICATE_KEY", "line": 2}]}}],
        },
        HEADER + USER[:-2] + b',"id":"m2"}\n',
    ),
]


def write_cases(root: Path) -> Path:
    """Write the tree under ``root`` and return it (pass it as --fixtures)."""
    for rel, manifest, session in CASES:
        case_dir = root / rel
        (case_dir / "tree" / "session").mkdir(parents=True)
        (case_dir / "case.json").write_text(json.dumps(manifest, indent=2))
        (case_dir / "tree" / "session" / "session.jsonl").write_bytes(session)
    return root


def fake(name: str, *flags: str) -> str:
    """The --impl command line of a fake adapter."""
    import shlex

    return shlex.join([sys.executable, str(FAKES / f"{name}.py"), *flags])


# Fake adapters answer at once or never: a short deadline keeps the hang cases fast.
FAKE_TIMEOUT = 0.5


def run(
    tree: Path, impl: str, *only: str, harness: bool = False, timeout: float = FAKE_TIMEOUT
) -> RunRecord:
    """``persyk-conformance run`` over ``tree`` against ``impl``."""
    return execute(
        RunConfig(impl=impl, only=only, timeout=timeout, fixtures=tree, harness=harness)
    )

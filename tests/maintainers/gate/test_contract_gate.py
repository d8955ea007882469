"""The project gates its own contract changes in CI (docs/maintainers/maintainers.md).

This checkout is diffed against the last released contract, the newest archive in
``contract/releases/`` (docs/maintainers/maintainers.md, "This project's own gate"): a change of a
case, rule, code or schema must step the contract version, have its docs/changes.md section, carry
``revised`` on an edited case, and say *breaking* when it breaks readers or writers; a change
that refuses files valid under the release needs a new format version. Releasing a version
replaces the archive.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _paths import CHECKOUT
from persyk_maintainers.cli._gate import diff_sides
from persyk_maintainers.gate._release import verify_release
from persyk_maintainers.gate._report import render_diff_markdown
from persyk_maintainers.gate._sides import load_side

RELEASES = CHECKOUT / "contract" / "releases"


def released() -> Path:
    """The newest release archive (by contract version)."""
    archives = sorted(
        RELEASES.glob("persyk-contract-*.tar.gz"),
        key=lambda p: tuple(int(n) for n in p.name.removeprefix("persyk-contract-")
                            .removesuffix(".tar.gz").split(".")),
    )
    assert archives, f"no release archive in {RELEASES}: the gate has nothing to compare with"
    return archives[-1]


@pytest.mark.slow
def test_the_released_contract_archive_verifies() -> None:
    archive = released()
    assert archive.name == f"persyk-contract-{verify_release(archive)}.tar.gz"


@pytest.mark.slow
def test_this_checkout_keeps_the_promises_of_the_released_contract() -> None:
    base, head = load_side(str(released()), CHECKOUT), load_side(str(CHECKOUT), CHECKOUT)
    try:
        diff = diff_sides(base, head, run=True)
    finally:
        base.discard()
        head.discard()
    status = diff.exit_status(allow_documented=True)
    assert status == 0, render_diff_markdown(diff, status)

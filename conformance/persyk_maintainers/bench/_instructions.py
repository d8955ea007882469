"""Instruction counts, the deterministic second figure: ``persyk-conformance bench --instructions``.

For each CPU workload (the ones whose precision target is the CPU one: no fsync decides them),
the instructions one unit costs the implementation, through its adapter, and the floor, each
counted by valgrind as a difference of two runs (``_counted``), and their ratio. The ratio is
of *instructions, excluding the kernel's time*: valgrind counts what runs in user space, so the
system calls' work (reading the file, the page cache) is in neither side. Where valgrind is
missing or cannot run a side, the figure is its reason ("unsupported, because ..."), never a
number.

Why cachegrind with ``--cache-sim=no`` and not callgrind: both count the same instructions,
and cachegrind without its cache model is the cheapest tool that does (validating 2 MB through
the reference: 9.3 s under cachegrind, 23.2 s under callgrind, 0.34 s natively); callgrind's
call graph is not needed for one total.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from ._counted import CountFailed, CountPlan, Totals, Wrapper, count_workload
from ._workloads import CPU_PRECISION, Prepared, Workload

__all__ = ["LABEL", "VALGRIND", "counted", "instruction_members", "tool_description",
           "valgrind_unavailable"]

LABEL = "instructions, excluding the kernel's time"
SLOWDOWN = 60.0  # cachegrind runs Python 25-50x slower than natively


def valgrind_unavailable() -> str | None:
    """Why no instruction can be counted on this machine (None: valgrind is on PATH)."""
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (not on PATH)"
    return None


def tool_description() -> str:
    """``valgrind-3.19.0 --tool=cachegrind --cache-sim=no``, for the report."""
    try:
        version = subprocess.run(["valgrind", "--version"], capture_output=True, text=True,
                                 timeout=30, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        version = "valgrind"
    return f"{version or 'valgrind'} --tool=cachegrind --cache-sim=no"


def _prefix(out: Path) -> list[str]:
    # --trace-children: an adapter that is a wrapper script, or that starts worker processes
    # (the reference's search), is counted whole; one output file per process (%p).
    return ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
            "--vgdb=no", "-q", f"--cachegrind-out-file={out}/cachegrind.out.%p"]


def read_cachegrind(out: Path) -> Totals:
    """The instructions of every process counted in ``out``: the sum of the ``summary:`` lines
    of its cachegrind files. Raises CountFailed where there is none."""
    total, files = 0, 0
    for file in sorted(out.glob("cachegrind.out.*")):
        for line in file.read_text("utf-8", "replace").splitlines():
            if line.startswith("summary:"):
                total += int(line.split()[1])
                files += 1
    if files == 0:
        raise CountFailed("valgrind wrote no count (it could not run the process)")
    return {"instructions": float(total)}


# A count is quoted only where it repeats: two counts more than 1 % apart are no figure. Two
# counts of a Python adapter or floor of a few MB agree within 0.4 %; a JIT runtime's by no
# better than 9 %. Until 2026-12-06 the bar was 3 %, and three scale-1 runs that day quoted
# ratios up to 3.6 % apart (the Node example's validate-events, pi's context, and the
# reference's paged walk and search, whose worker processes share the work as they run).
AGREEMENT = 0.01
VALGRIND = Wrapper("valgrind", _prefix, read_cachegrind, SLOWDOWN, AGREEMENT)


def counted(workload: Workload) -> bool:
    """Whether the workload gets an instruction count: the CPU ones. Where an fsync decides
    the figure, the instructions say little; those get system calls instead (``_syscalls``)."""
    return workload.precision_target == CPU_PRECISION


def _member(totals: Totals | str, repetitions: int) -> dict[str, Any]:
    if isinstance(totals, str):
        return {"unsupported": f"because {totals}"}
    if totals["instructions"] <= 0:
        return {"unsupported": f"because {repetitions} requests counted no more instructions "
                               "than the warm-up alone"}
    return {"perUnit": round(totals["instructions"], 1), "requests": repetitions}


def instruction_members(
    workload: Workload, prepared: Prepared, commands: list[list[str] | None], plan: CountPlan,
    unavailable: str | None,
) -> tuple[dict[str, Any], list[dict[str, Any] | None]]:
    """The ``instructions`` member of the workload's floor and of each result (None: the result
    gets none, as for one whose timed runs failed)."""
    if unavailable is not None:
        floor: Totals | str = unavailable
        impls: list[Totals | str | None] = [None if c is None else unavailable for c in commands]
    else:
        floor, impls = count_workload(VALGRIND, workload, prepared, commands, plan)
    floor_member = _member(floor, plan.repetitions)
    members: list[dict[str, Any] | None] = []
    for totals in impls:
        if totals is None:
            members.append(None)
            continue
        member = _member(totals, plan.repetitions)
        # No ratio where the floor has no count: the Markdown gives the floor's reason.
        if "perUnit" in member and floor_member.get("perUnit", 0) > 0:
            member["ratio"] = member["perUnit"] / floor_member["perUnit"]
        members.append(member)
    return floor_member, members

"""Counts of a workload's work under a tool that wraps a process: valgrind (``_instructions``),
strace (``_syscalls``). Counts, not times: they do not move with the machine's load.

Rule: a count is a difference. The adapter is started under the tool, greeted, given one
untimed warm-up repetition and N more, then told to stop; from that run's totals the totals of
a run with the warm-up alone are taken away, and the difference is divided by the units of the
N repetitions. What both runs share (the interpreter's start, the imports, the hello, the
first request's lazy work, the exit) cancels. Where the wrapper asks for agreement (valgrind),
the run of N repetitions is made twice and the two differences must agree, or there is no
figure. The floor is counted the same way in a child
Python process that unpickles the workload, its input and its floor state and runs the floor 1
and 1 + N times: the same code the timed floor runs, in a process of its own so the tool sees
it alone.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from persyk_conformance._protocol import ProtocolViolation
from persyk_conformance.adapters._interface import AdapterCrashed, AdapterTimedOut
from persyk_conformance.adapters._subprocess import SubprocessAdapter

from ._workloads import AdapterFailed, Call, Invalid, NotSupported, Prepared, Workload

__all__ = ["CountFailed", "CountPlan", "Totals", "Wrapper", "count_workload"]

Totals = dict[str, float]

# The floor's child: the workload, its input and its floor state, pickled by the runner.
FLOOR_CHILD = """\
import pickle, sys
with open(sys.argv[1], "rb") as stream:
    workload, prepared, state = pickle.load(stream)
for _ in range(int(sys.argv[2])):
    workload.floor(prepared, state)
"""


class CountFailed(Exception):
    """The count could not be taken; the message completes "unsupported, because ..."."""


@dataclass(frozen=True, slots=True)
class Wrapper:
    """A tool that runs a command and leaves its totals in a directory."""

    name: str
    prefix: Callable[[Path], list[str]]  # the argv before the command, given the output dir
    read: Callable[[Path], Totals]  # the totals over every file it wrote there; CountFailed
    slowdown: float  # how many times longer than a timed repetition a wrapped one may take
    # When set, the N repetitions are counted twice, and two counts that differ by more than
    # this share are no figure: the work varies from run to run (a JIT runtime's compiler
    # threads), so the count is not the deterministic figure it claims to be.
    agreement: float | None = None


@dataclass(frozen=True, slots=True)
class CountPlan:
    """Where and how the counts of one run are taken."""

    repetitions: int  # N: the repetitions counted beyond the warm-up
    root: Path  # beneath the sandbox (a confined adapter may write only there)
    adapter_env: Mapping[str, str]
    confine_to: Path | None
    timeout: float  # of one timed repetition; times the wrapper's slowdown


def _deterministic(env: Mapping[str, str]) -> dict[str, str]:
    # PYTHONHASHSEED=0: a Python process iterates its sets and dicts of strings in the same
    # order in every run, so both runs of a difference do the same work. No bytecode written:
    # the first run would compile a stale module and write it, the second only read it (a
    # floor counted once with fewer instructions than the warm-up alone).
    return {**env, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}


def _adapter_totals(wrapper: Wrapper, command: Sequence[str], workload: Workload, state: Any,
                    repetitions: int, out: Path, plan: CountPlan) -> Totals:
    out.mkdir(parents=True)
    timeout = plan.timeout * wrapper.slowdown
    adapter = SubprocessAdapter([*wrapper.prefix(out), *command],
                                env=_deterministic(plan.adapter_env), confine_to=plan.confine_to)
    try:
        adapter.start(timeout)
        for _ in range(repetitions):
            workload.measure(Call(adapter, timeout), state)
    except (Invalid, NotSupported, AdapterFailed, AdapterCrashed, AdapterTimedOut,
            ProtocolViolation) as exc:
        adapter.kill()
        raise CountFailed(f"the adapter failed under {wrapper.name}: {exc}"[:300]) from None
    adapter.close(grace=timeout)
    if adapter.exit_status != 0:
        status = ("did not exit after stop" if adapter.exit_status is None
                  else f"exited with status {adapter.exit_status}")
        raise CountFailed(f"the adapter under {wrapper.name} {status}")
    return wrapper.read(out)


def _floor_totals(wrapper: Wrapper, workload: Workload, prepared: Prepared, state: Any,
                  repetitions: int, out: Path, plan: CountPlan) -> Totals:
    out.mkdir(parents=True)
    job = out.with_name(out.name + ".pickle")
    job.write_bytes(pickle.dumps((workload, prepared, state)))
    timeout = plan.timeout * wrapper.slowdown * repetitions
    argv = [*wrapper.prefix(out), sys.executable, "-c", FLOOR_CHILD, str(job), str(repetitions)]
    try:
        done = subprocess.run(argv, env=_deterministic(os.environ), timeout=timeout,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
    except subprocess.TimeoutExpired:
        raise CountFailed(f"the floor under {wrapper.name} took more than {timeout:g} s") from None
    except OSError as exc:
        raise CountFailed(f"{wrapper.name} did not start: {exc.strerror}") from None
    if done.returncode != 0:
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise CountFailed(f"the floor under {wrapper.name} exited with status "
                          f"{done.returncode}: {last[0][:200]}")
    return wrapper.read(out)


def _difference(run: Callable[[int, Path], Totals], repetitions: int, units: int,
                root: Path, agreement: float | None = None) -> Totals:
    base = run(1, root / "warm-up")
    counts = [run(1 + repetitions, root / f"warm-up+{repetitions}")]
    if agreement is not None:
        counts.append(run(1 + repetitions, root / f"warm-up+{repetitions}.again"))
    keys = sorted(set(base).union(*counts))
    per_unit = [{key: (c.get(key, 0.0) - base.get(key, 0.0)) / (repetitions * units)
                 for key in keys} for c in counts]
    if agreement is not None:
        for key in keys:
            first, second = per_unit[0][key], per_unit[1][key]
            apart = abs(first - second) / max(abs(first), abs(second), 1e-9)
            if apart > agreement:
                raise CountFailed(f"two counts of the same {repetitions} requests differed by "
                                  f"{apart:.1%} (more than {agreement:.0%}): the work varies "
                                  "from run to run")
    return {key: sum(p[key] for p in per_unit) / len(per_unit) for key in keys}


def count_workload(
    wrapper: Wrapper, workload: Workload, prepared: Prepared,
    commands: Sequence[Sequence[str] | None], plan: CountPlan,
) -> tuple[Totals | str, list[Totals | str | None]]:
    """Per unit of ``workload``: the floor's totals, and each command's (None: not counted, as
    for an implementation whose timed runs failed). A count that could not be taken is its
    reason instead, a sentence that completes "unsupported, because ..."."""
    units = workload.units(prepared)
    root = plan.root / workload.key / wrapper.name

    def floor_run(repetitions: int, out: Path) -> Totals:
        state = workload.setup(prepared, out.with_name(out.name + ".state"))
        return _floor_totals(wrapper, workload, prepared, state, repetitions, out, plan)

    try:
        floor: Totals | str = _difference(floor_run, plan.repetitions, units, root / "floor",
                                          wrapper.agreement)
    except CountFailed as exc:
        floor = str(exc)
    results: list[Totals | str | None] = []
    for number, command in enumerate(commands):
        if command is None:
            results.append(None)
            continue
        state = workload.setup(prepared, root / f"impl{number}.state")

        def impl_run(repetitions: int, out: Path, command: Sequence[str] = command,
                     state: Any = state) -> Totals:
            return _adapter_totals(wrapper, command, workload, state, repetitions, out, plan)

        try:
            results.append(_difference(impl_run, plan.repetitions, units, root / f"impl{number}",
                                       wrapper.agreement))
        except CountFailed as exc:
            results.append(str(exc))
    return floor, results

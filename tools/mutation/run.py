"""Mutation score of the conformance cases: mutate the reference, run the cases, count the kills.

    python tools/mutation/run.py run --sample 400 --seed 17 --budget 2400 --out mutants.jsonl
    python tools/mutation/run.py report mutants.jsonl [--survivors survivors.json]
    python tools/mutation/run.py show read/_records.py:12  # the mutant's change, as a diff

``run`` enumerates every mutation point (``_operators.py``) of the chosen modules, samples
``--sample`` of them with ``--seed``, and for each, in that sampled order until ``--budget``
seconds have passed: writes the mutated module into a private copy of ``persyk_session`` (the
working tree is never touched), starts ``_worker.py`` under ``nice -n 15`` with that copy first
on ``PYTHONPATH``, which runs the conformance cases in-process and stops at the first failing
one. Only the cases judge: the project's unit tests play no part. One mutant at a time. A
mutant past ``--mutant-timeout`` is killed and counted as killed (``timeout``), as a runner
would count an implementation that hangs. Results are appended to ``--out`` as JSON lines
(``--resume`` skips the mutants already there). Cases that killed earlier mutants are tried
first, which changes the time a kill takes, never whether it happens.

The readable core runs with ``PERSYK_SESSION_MODE=readable``, the fast engine (``fast/``,
``_live.py``) with ``fast``: a mutant is run in the mode that executes its module.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _operators import error_codes, mutate, points
from _report import render_report

# The checkout whose reference and cases are measured (PERSYK_MUTATION_ROOT: another one).
ROOT = Path(os.environ.get("PERSYK_MUTATION_ROOT") or Path(__file__).resolve().parents[2])
PACKAGE = ROOT / "reference" / "persyk_session"
WORKER = Path(__file__).resolve().parent / "_worker.py"

# The readable core (docs/maintainers/architecture.md), then the modules around it.
CORE: tuple[str, ...] = (
    "read/_records.py", "read/_grammar.py", "read/_schema.py", "read/_graph.py",
    "read/_entries.py", "write/_append_plan.py", "write/_recovery_plan.py", "read/_context.py",
    "_lines.py", "write/_append.py", "write/_recovery.py", "write/_lock.py", "read/_paging.py",
    "media/_assets.py", "media/_wav.py", "media/_capture.py", "operations/_media.py",
    "search/_judge.py", "realtime/_sanitize.py", "realtime/_evidence.py",
)
FAST: tuple[str, ...] = (
    "fast/_records_fast.py", "fast/_schema_fast.py", "fast/_entries_fast.py", "read/_live.py",
)
# Run only in readable mode (the fast mode replaces them).
READABLE_ONLY: frozenset[str] = frozenset(
    {"read/_records.py", "read/_grammar.py", "read/_schema.py", "read/_entries.py"})
# H-104 kills a recovery at every system call; it needs an adapter process (--with-h104).
RECOVERY: frozenset[str] = frozenset(
    {"write/_recovery.py", "write/_recovery_plan.py", "_fsutil.py"})
SLOW_CHECKS: frozenset[str] = frozenset({"H-101", "H-102", "H-103", "H-104"})
GROUPS: dict[str, tuple[str, ...]] = {"core": CORE, "fast": FAST, "all": CORE + FAST}


@dataclass(frozen=True, slots=True)
class Mutant:
    module: str
    index: int
    operator: str
    line: int
    description: str
    scope: tuple[int, str] | None  # the function around it (_operators.Point.scope)

    @property
    def key(self) -> str:
        return f"{self.module}:{self.index}"

    @property
    def function(self) -> str | None:
        return None if self.scope is None else f"{self.module}:{self.scope[0]}:{self.scope[1]}"


def resolve_modules(names: Iterable[str]) -> list[str]:
    """The modules that ``names`` choose, each as its slash path under persyk_session
    (``read/_grammar.py``, the form of CORE, FAST and the mutant keys): a group (core, fast,
    all), a subpackage folder (``read``, ``read/``: its modules), or a module path, which may
    start with ``reference/persyk_session/`` or ``persyk_session/``. Raises SystemExit for a
    name that is none of these, rather than mutating nothing."""
    chosen: list[str] = []
    for name in names:
        if name in GROUPS:
            chosen += GROUPS[name]
            continue
        path = name.replace("\\", "/").strip("/")
        for prefix in ("reference/persyk_session/", "persyk_session/"):
            path = path.removeprefix(prefix)
        if (PACKAGE / path).is_dir() and (PACKAGE / path / "__init__.py").is_file():
            chosen += sorted(p.relative_to(PACKAGE).as_posix()
                             for p in (PACKAGE / path).rglob("*.py") if p.name != "__init__.py")
        elif path.endswith(".py") and (PACKAGE / path).is_file():
            chosen.append(path)
        else:
            raise SystemExit(f"{name}: no module or subpackage of persyk_session (use a path "
                             "such as read/_grammar.py, a folder such as read, or core, fast, "
                             "all)")
    return list(dict.fromkeys(chosen))  # each once, in the order named


def _codes() -> list[str]:
    return error_codes((PACKAGE / "_errors.py").read_text("utf-8"))


def enumerate_mutants(modules: Iterable[str]) -> list[Mutant]:
    codes = _codes()
    found: list[Mutant] = []
    for module in modules:
        source = (PACKAGE / module).read_text("utf-8")
        found += [Mutant(module, p.index, p.operator, p.line, p.description, p.scope)
                  for p in points(source, codes)]
    return found


def sample(mutants: Sequence[Mutant], size: int, seed: int) -> list[Mutant]:
    """A uniform sample over every point of the chosen modules, in a random order (so that a
    run cut short by its budget is still a uniform sample)."""
    return random.Random(seed).sample(list(mutants), min(size, len(mutants)))


class Workspace:
    """A private copy of persyk_session; one module at a time is swapped for its mutant."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="persyk-mutation-"))
        self.path = self.root / "pkg"
        self.scratch = self.root / "scratch"
        self.scratch.mkdir()
        # The reference as it is when the run starts (mutated from, restored from).
        self.pristine = self.root / "pristine"
        shutil.copytree(PACKAGE, self.pristine, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(self.pristine, self.path / "persyk_session")
        # The cases as they are when the run starts: editing fixtures meanwhile changes nothing.
        self.fixtures = self.root / "fixtures"
        shutil.copytree(ROOT / "fixtures" / "v1", self.fixtures)
        self.order = self.root / "order.txt"
        self.order.write_text("", "utf-8")

    def write(self, module: str, source: str) -> None:
        (self.path / "persyk_session" / module).write_text(source, "utf-8")

    def restore(self, module: str) -> None:
        shutil.copy2(self.pristine / module, self.path / "persyk_session" / module)

    def source(self, module: str) -> str:
        return (self.pristine / module).read_text("utf-8")

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def run_worker(space: Workspace, mode: str, timeout: float, reach: Path | None = None
               ) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(space.path), "PERSYK_SESSION_MODE": mode,
           "PYTHONDONTWRITEBYTECODE": "1"}
    command = ["nice", "-n", "15", sys.executable, str(WORKER)]
    if reach is not None:
        space.order.write_text("", "utf-8")  # every case
        command += ["--reach", str(reach)]
    command += [str(space.order), str(space.path), str(space.fixtures)]
    proc = subprocess.Popen(command, cwd=space.scratch, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"verdict": "killed", "case": "(mutant timeout)", "outcome": "timeout",
                "reason": f"the whole run passed {timeout:g} s"}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    for line in reversed(out.decode("utf-8", "replace").splitlines()):
        if line.startswith("{"):
            result: dict[str, Any] = json.loads(line)
            return result
    tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    return {"verdict": "killed", "case": "(worker crash)", "outcome": "crash",
            "reason": f"exit {proc.returncode}: {tail[0][:160]}"}


def _done(out: Path) -> dict[str, dict[str, Any]]:
    if not out.exists():
        return {}
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines() if line.strip()]
    return {row["key"]: row for row in rows}


Reach = dict[str, list[str]]  # case id -> the functions it calls ("module:line:name")


def reach_maps(space: Workspace, timeout: float, cache: Path, reuse: bool) -> dict[str, Reach]:
    """Run every case against the unmutated copy in both modes, recording which functions each
    case calls. Every case must pass, or nothing is measured. A mutant inside a function is
    then run against the cases that call that function only: the others execute exactly the
    unmutated code, so they cannot kill it."""
    if reuse and cache.exists():
        maps: dict[str, Reach] = json.loads(cache.read_text("utf-8"))
        return maps
    maps = {}
    for mode in ("readable", "fast"):
        out = space.root / f"reach-{mode}.json"
        result = run_worker(space, mode, timeout, reach=out)
        if result.get("verdict") != "survived":
            raise SystemExit(f"the unmutated reference fails ({mode}): {result}")
        maps[mode] = json.loads(out.read_text("utf-8"))
    cache.write_text(json.dumps(maps), "utf-8")
    return maps


def mode_for(mutant: Mutant, maps: dict[str, Reach]) -> str:
    """The mode that executes the mutant's module. A module both modes run is run in the fast
    mode (the cases take half the time there) unless only the readable mode reaches its
    function (the fast mode's live index skips some whole-file checks)."""
    if mutant.module in FAST:
        return "fast"
    if mutant.module in READABLE_ONLY or mutant.function is None:
        return "readable" if mutant.module in READABLE_ONLY else "fast"
    reached_fast = any(mutant.function in f for f in maps["fast"].values())
    reached_readable = any(mutant.function in f for f in maps["readable"].values())
    return "readable" if reached_readable and not reached_fast else "fast"


def cases_for(mutant: Mutant, reach: Reach, kills: Counter[str], h104: bool = False
              ) -> list[str]:
    """The cases that can see the mutant, those that killed most mutants so far first.
    ``h104``: recovery's mutants also meet H-104 (through a subprocess adapter), last."""
    function = mutant.function
    chosen = [case for case, functions in reach.items()
              if (function is None or function in functions) and case != "H-104"]
    if h104 and mutant.module in RECOVERY and chosen:
        chosen.append("H-104")
    rank = {case: n for n, (case, _) in enumerate(kills.most_common())}
    # The write harness (H-101 torn tails at every offset, H-102, H-103) takes seconds where a
    # case takes milliseconds: it comes last, when no case has killed the mutant.
    return sorted(chosen, key=lambda case: (case in SLOW_CHECKS, rank.get(case, len(rank))))


def cmd_run(args: argparse.Namespace) -> int:
    modules = resolve_modules(args.modules)
    chosen = sample(enumerate_mutants(modules), args.sample, args.seed)
    if args.mutants:
        wanted = {mutant_key(key) for key in args.mutants}
        chosen = [m for m in enumerate_mutants(sorted({k.split(":")[0] for k in wanted}))
                  if m.key in wanted]
    if args.cases:
        return _check_cases(chosen, args.cases.split(","), args.mode, args.mutant_timeout)
    done = _done(args.out) if args.resume else {}
    kills = Counter(row["case"] for row in done.values() if row["verdict"] == "killed")
    codes = _codes()
    space = Workspace()
    began = time.monotonic()
    try:
        maps = reach_maps(space, args.mutant_timeout * 3, Path(f"{args.out}.reach.json"),
                          args.resume)
        print(f"baseline: every case passes in both modes; {len(chosen)} mutants",
              file=sys.stderr)
        with args.out.open("a", encoding="utf-8") as sink:
            for number, mutant in enumerate(chosen, start=1):
                if mutant.key in done:
                    continue
                if time.monotonic() - began > args.budget:
                    print(f"budget of {args.budget:g} s spent after {number - 1} mutants",
                          file=sys.stderr)
                    break
                mode = mode_for(mutant, maps)
                row = _run_one(space, mutant, mode, codes,
                               cases_for(mutant, maps[mode], kills, args.with_h104),
                               args.mutant_timeout)
                if row["verdict"] == "killed":
                    kills[row["case"]] += 1
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                print(f"[{number}/{len(chosen)}] {mutant.key} {mutant.operator}: "
                      f"{row['verdict']} {row.get('case', '')} ({row['seconds']:.1f} s)",
                      file=sys.stderr)
    finally:
        space.remove()
    return 0


def _run_one(space: Workspace, mutant: Mutant, mode: str, codes: list[str], cases: list[str],
             timeout: float) -> dict[str, Any]:
    row: dict[str, Any] = {"key": mutant.key, **asdict(mutant), "mode": mode}
    if not cases:
        return {**row, "verdict": "survived", "reason": "no case calls its function",
                "cases": 0, "seconds": 0.0}
    source = space.source(mutant.module)
    space.order.write_text("".join(f"{case}\n" for case in cases), "utf-8")
    space.write(mutant.module, mutate(source, mutant.index, codes))
    started = time.monotonic()
    try:
        result = run_worker(space, mode, timeout)
    finally:
        space.restore(mutant.module)
    if result.get("verdict") == "broken":
        raise SystemExit(f"the worker did not import the mutant: {result}")
    return {**row, **result, "seconds": round(time.monotonic() - started, 2)}


def _check_cases(mutants: Sequence[Mutant], cases: list[str], mode: str | None,
                 timeout: float) -> int:
    """Run the given mutants against the given cases only (does a new case kill them?), in
    ``mode`` or, without one, in the mode that runs their module (readable for the readable
    core, fast otherwise). Prints one line per mutant; nothing is recorded."""
    codes = _codes()
    space = Workspace()
    try:
        for mutant in mutants:
            chosen = mode or ("readable" if mutant.module in READABLE_ONLY else "fast")
            row = _run_one(space, mutant, chosen, codes, cases, timeout)
            print(f"{mutant.key} ({chosen}): {row['verdict']} {row.get('case', '')} "
                  f"{row.get('reason', '')} "
                  f"{row.get('outcome', '')}")
    finally:
        space.remove()
    return 0


def mutant_key(text: str) -> str:
    """``module:index`` with the module as resolve_modules writes it (``read/_grammar.py:12``)."""
    module, _, index = text.rpartition(":")
    if not module.endswith(".py") or not index.isdigit():
        raise SystemExit(f"{text}: not module:index (e.g. read/_grammar.py:12)")
    [path] = resolve_modules([module])  # a .py path resolves to itself alone
    return f"{path}:{index}"


def cmd_show(args: argparse.Namespace) -> int:
    module, index = mutant_key(args.mutant).split(":")
    source = (PACKAGE / module).read_text("utf-8")
    import ast

    before = ast.unparse(ast.parse(source)).splitlines(keepends=True)
    after = mutate(source, int(index), _codes()).splitlines(keepends=True)
    sys.stdout.writelines(difflib.unified_diff(before, after, module, f"{module} (mutant)", n=2))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    rows = list(_done(args.results).values())
    notes = json.loads(args.survivors.read_text("utf-8")) if args.survivors else {}
    sys.stdout.write(render_report(rows, notes))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="mutate, run the cases, append the verdicts")
    run.add_argument("--modules", nargs="+", default=["core"],
                     help="core, fast, all, subpackage folders (read) or module paths "
                          "(read/_grammar.py) (default: core)")
    run.add_argument("--sample", type=int, default=400)
    run.add_argument("--seed", type=int, default=17)
    run.add_argument("--budget", type=float, default=2400.0, help="seconds (default 2400)")
    run.add_argument("--mutant-timeout", type=float, default=180.0,
                     help="seconds for one mutant's whole run; past it: killed (timeout)")
    run.add_argument("--mutants", nargs="*", help="run these module:index mutants only")
    run.add_argument("--cases", help="with --mutants: run these cases only (comma-separated)"
                     " and print the verdicts; no reach maps, nothing recorded")
    run.add_argument("--with-h104", action="store_true",
                     help="also run H-104 (about a minute, through a subprocess adapter) "
                     "against mutants of recovery that no other case kills")
    run.add_argument("--mode", choices=["readable", "fast"], help="with --cases: the mode")
    run.add_argument("--out", type=Path, default=Path("mutants.jsonl"))
    run.add_argument("--resume", action="store_true", help="skip the mutants already in --out")
    run.set_defaults(func=cmd_run)
    show = sub.add_parser("show", help="the change a mutant makes, as a diff")
    show.add_argument("mutant", help="module:index, e.g. read/_records.py:12")
    show.set_defaults(func=cmd_show)
    report = sub.add_parser("report", help="the markdown summary of a results file")
    report.add_argument("results", type=Path)
    report.add_argument("--survivors", type=Path, help="JSON: key -> how each survivor ends")
    report.set_defaults(func=cmd_report)
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())

"""Run the whole suite against each mistake of tests/mistakes/ and publish the kill score.

    .venv/bin/python tools/mistakes/run.py run --stage after    # every mistake, every case
    .venv/bin/python tools/mistakes/run.py run --stage before --fixtures OLD_FIXTURES
    .venv/bin/python tools/mistakes/run.py run --only go-case-insensitive-names  # prints only
    .venv/bin/python tools/mistakes/run.py render               # the .md again from the .json

It needs the suite installed (the checkout's venv, README's second command). A run of
``--only`` mistakes prints their verdicts and writes nothing unless ``--record`` asks it to
merge them into the committed kill score.

Each mistake runs in process against every case of fixtures/v1 and the runner's harness cases
(``mistakes._run.Suite``); a mistake is killed when a MUST case fails on it. ``--stage`` names
the column of tests/mistakes/kill-score.json it fills ("before": the cases before
the mistake-killing ones, "after": today's); the .md is rendered from both. ``--fixtures`` runs
another case folder (a checkout of an earlier commit).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

try:
    import persyk_contract
    from mistakes._report import STAGES, mistake_rows, render
    from mistakes._run import Suite
    from mistakes.registry import CATCHING_FILE, MISTAKES
except ImportError as missing:  # an interpreter without the suite: say which one to use
    sys.exit(f"tools/mistakes/run.py: {missing.name} is not importable by {sys.executable}; "
             "run it with the checkout's venv: .venv/bin/python tools/mistakes/run.py ...")

RESULTS = ROOT / "tests" / "mistakes" / "kill-score.json"
NOTES = [
    "* Each mistake is a layer over the reference's `dispatch` (tests/mistakes/_model.py): "
    "reading habits hand the reference the view of session.jsonl the mistaken reader would "
    "have (a private copy; what an append writes there is written after the real file's "
    "bytes), writing habits change the bytes the reference wrote or replace one of its "
    "functions (`unittest.mock`). A layer that raised is reported as a fault, never as a kill.",
    "* The whole suite ran against every mistake until three MUST cases had failed on it "
    "(`--enough 3`), so `killed by` lists the first three in suite order; a survivor and an "
    "allowed mistake ran every case. One process, one mistake at a time, `nice -n 15`, on 2 "
    "cores shared with other jobs.",
    "* In the test suite (tests/maintainers/strength/test_mistakes.py) each mistake runs "
    "only the cases its registry entry names in `catching`; a mistake with neither a catching "
    "case nor an allowed reason fails the build, and so does one that the recorded full run "
    "did not kill.",
    "* Out of scope: fsync mistakes (the power-loss harness), the write-harness checks "
    "H-101..H-104 (they need adapter processes or take minutes).",
    "* Before: the cases of main at 41ee242 (contract 1.13.0), 2026-12-03 09:00-09:22 UTC. "
    "After: the same corpus against contract 1.14.0 (eleven new cases of "
    "fixtures/_cases/mistake_kills.py, and the `equalsRecords` check that refuses a CR "
    "before the LF, REC-22). Two mistakes were read as allowed after the first run, before "
    "any new case (`cursor-resyncs-to-next-entry`, `create-leaves-temp-file`: no rule "
    "decides them; both are counted as allowed in both columns and left to the contract). "
    "`java-numbers-as-double` and `js-float64-integers` are allowed by the REC-9 decision.",
    "* Reproduce: `python tools/mistakes/run.py run` (about 20 minutes on the shared machine; "
    "`--only NAME` for one mistake). A reading mistake also runs as an adapter process: "
    "`persyk-conformance run --impl \"python tests/mistakes/adapter.py NAME\"`.",
]


def run(stage: str, only: list[str], fixtures: Path | None, enough: int | None, *,
        record: bool = False) -> int:
    chosen = [m for m in MISTAKES if not only or m.name in only]
    suite = Suite(fixtures=fixtures)
    verdicts: dict[str, dict[str, object]] = {}
    quickest: dict[str, list[str]] = {}
    faults = 0
    try:
        for mistake in chosen:
            verdict = suite.run_mistake(mistake, enough=None if mistake.allowed else enough)
            verdicts[mistake.name] = {"mustFailed": list(verdict.must_failed),
                                      "otherFailed": list(verdict.other_failed)}
            faults += bool(verdict.faults)
            if verdict.killed and mistake.allowed is None:
                quickest[mistake.name] = list(suite.quickest(verdict))
            state = "killed" if verdict.killed else "survived"
            fault = f" FAULT {verdict.faults[0]}" if verdict.faults else ""
            print(f"{mistake.name}: {state} ({len(verdict.must_failed)} MUST cases, "
                  f"{verdict.seconds:.1f} s){fault}", flush=True)
        cases = len(suite.cases)
    finally:
        suite.close()
    if only and not record:
        # A few mistakes rerun: the committed score is the whole run's, left as it is.
        print("(not recorded: --record merges these verdicts into the kill score)")
        return 1 if faults else 0
    document = json.loads(RESULTS.read_text("utf-8")) if RESULTS.exists() else {"stages": {}}
    previous = document["stages"].get(stage, {}).get("verdicts", {}) if only else {}
    merged = {**previous, **verdicts}
    earlier = document["stages"].get(stage, {}) if only else {}
    document["stages"][stage] = {
        # --only reruns a few mistakes of a stage: it keeps the stage's contract (a "before"
        # rerun against old fixtures runs today's contract package beside them).
        "cases": cases, "contract": earlier.get("contract", persyk_contract.contract_version()),
        "date": time.strftime("%Y-%m-%d"), "verdicts": merged,
        "rows": mistake_rows(MISTAKES, merged),
    }
    document["notes"] = NOTES
    if stage == "after" and fixtures is None:
        known = json.loads(CATCHING_FILE.read_text("utf-8")) if CATCHING_FILE.exists() else {}
        known.update(quickest)
        for name in verdicts:
            if name not in quickest:
                known.pop(name, None)
        CATCHING_FILE.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n",
                                 "utf-8")
    RESULTS.write_text(json.dumps(document, indent=1) + "\n", "utf-8")
    RESULTS.with_suffix(".md").write_text(render(document), "utf-8")
    return 1 if faults else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    running = commands.add_parser("run")
    running.add_argument("--stage", choices=STAGES, default="after")
    running.add_argument("--only", nargs="*", default=[])
    running.add_argument("--record", action="store_true",
                         help="with --only: merge the verdicts into the committed kill score")
    running.add_argument("--fixtures", type=Path)
    running.add_argument("--enough", type=int, default=3,
                         help="stop a mistake's run after this many MUST cases failed (0: never)")
    commands.add_parser("render")
    options = parser.parse_args(argv)
    if options.command == "render":
        document = json.loads(RESULTS.read_text("utf-8"))
        for stage in document["stages"].values():
            stage["rows"] = mistake_rows(MISTAKES, stage["verdicts"])
        document["notes"] = NOTES
        RESULTS.write_text(json.dumps(document, indent=1) + "\n", "utf-8")
        RESULTS.with_suffix(".md").write_text(render(document), "utf-8")
        return 0
    return run(options.stage, options.only, options.fixtures, options.enough or None,
               record=options.record)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

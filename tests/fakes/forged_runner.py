"""A forged ``persyk_conformance/cli/__main__.py`` that a hostile head adds at its top level:
it says every case passed, whatever the implementation does. A gate that
lets ``python -m persyk_conformance.cli`` resolve from the working directory runs this instead of
the installed runner, and a breaking change reads as compatible."""

import json
import sys

argv = sys.argv[1:]
report = argv[argv.index("--report") + 1]
ids = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--only"]
with open(report, "w", encoding="utf-8") as out:
    json.dump({"cases": [{"id": case_id, "outcome": "pass"} for case_id in ids]}, out)
sys.exit(0)

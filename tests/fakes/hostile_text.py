"""Puts tests/fakes/_hostile.py's text into the field its flag names: --name, --version,
--language or --homepage (hello); --internal (an internal error's message); --stderr (a line on
stderr, then a failing result); --diagnostic (a diagnostic's message and pointer); --unsupported
(the message of an unsupported reply); --refused-hello (a name past hello's 200 characters, so
that the schema's complaint quoting it is the reason every start fails). Every other field is
ordinary."""

import sys

from _fake import serve
from _hostile import HOSTILE

FIELD = sys.argv[1]
NAMES = {"--name": "name", "--version": "version", "--language": "language",
         "--homepage": "homepage"}

implementation = {"name": "hostile", "version": "0", "language": "python"}
if FIELD in NAMES:
    implementation[NAMES[FIELD]] = HOSTILE
if FIELD == "--refused-hello":
    implementation["name"] = HOSTILE * 3
hello = {"protocol": 1, "implementation": implementation, "capabilities": ["read"]}


def answer(request):
    if FIELD == "--internal":
        return {"internal": {"message": HOSTILE, "traceback": HOSTILE}}
    if FIELD == "--unsupported":
        return {"unsupported": True, "message": HOSTILE}
    if FIELD == "--stderr":
        sys.stderr.write(HOSTILE + "\n")
        sys.stderr.flush()
    if request["op"] != "validate":
        return {"unsupported": True}
    error = {"code": "HOSTILE", "line": 1, "message": "fixed"}
    if FIELD == "--diagnostic":
        error = {"code": "HOSTILE", "line": 1, "message": HOSTILE, "pointer": "/" + HOSTILE}
    return {"result": {"valid": False, "errors": [error], "truncated": False}}


sys.exit(serve(answer, hello=hello))

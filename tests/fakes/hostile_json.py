"""Replies with JSON that is valid text but hostile data, written by hand so no encoder can
tame it: --surrogate-hello (an implementation name holding a lone surrogate, ``"\\udc80"``),
--surrogate (a validate result whose error message holds two, ``"\\ud800 \\udfff"``), or
--deep (a validate result nested 200,000 arrays deep, which a recursive parser or printer
cannot follow)."""

import json
import sys

MODE = sys.argv[1]
DEPTH = 200_000
NAME = "hostile \\udc80 json" if MODE == "--surrogate-hello" else "hostile json"
HELLO = ('{"protocol": 1, "capabilities": ["read"], "implementation": '
         f'{{"name": "{NAME}", "version": "0", "language": "python"}}}}')


def reply(seq: int) -> str:
    if MODE == "--surrogate":
        return (f'{{"seq": {seq}, "result": {{"valid": false, "truncated": false, "errors": '
                '[{"code": "RECORD_INVALID", "line": 1, "message": "lone \\ud800 \\udfff"}]}}')
    deep = "[" * DEPTH + "]" * DEPTH
    return f'{{"seq": {seq}, "result": {{"valid": {deep}, "errors": [], "truncated": false}}}}'


for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "stop":
        break
    sys.stdout.write((HELLO if request["cmd"] == "hello" else reply(request["seq"])) + "\n")
    sys.stdout.flush()

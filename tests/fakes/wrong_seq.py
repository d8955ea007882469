"""Answers with a seq one higher than the request's."""

import json
import sys

from _fake import VALID


def main() -> int:
    for line in sys.stdin:
        request = json.loads(line)
        if request["cmd"] == "hello":
            reply = {"protocol": 1, "capabilities": ["read"],
                     "implementation": {"name": "wrong_seq", "version": "0", "language": "python"}}
        elif request["cmd"] == "stop":
            return 0
        else:
            reply = {"seq": request["seq"] + 1, "result": VALID}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


sys.exit(main())

"""Says every session is invalid at line 1: golden cases must fail."""

import sys

from _fake import only_validate, serve

ERROR = {"code": "RECORD_JSON_SYNTAX", "line": 1, "message": "RECORD_JSON_SYNTAX: always"}
sys.exit(serve(only_validate(lambda args: {"valid": False, "errors": [ERROR], "truncated": False})))

"""Answers validate with a result that breaks results.json (no 'truncated', 'valid' a string)."""

import sys

from _fake import only_validate, serve

sys.exit(serve(only_validate(lambda args: {"valid": "yes", "errors": []})))

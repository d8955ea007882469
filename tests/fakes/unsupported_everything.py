"""Declares read, then answers unsupported to every operation."""

import sys

from _fake import serve

sys.exit(serve(lambda request: {"unsupported": True, "message": "not yet"}))

"""Cannot perform anything: every run is an internal error."""

import sys

from _fake import serve

sys.exit(serve(lambda request: {"internal": {"message": "database is on fire"}}))

"""Says every session is valid: rejection cases must fail."""

import sys

from _fake import VALID, only_validate, serve

sys.exit(serve(only_validate(lambda args: VALID)))

"""Dies before the handshake, after a word on stderr."""

import sys

sys.stderr.write("crash_at_start: giving up at once\n")
sys.exit(3)

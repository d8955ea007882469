"""The reference with one rule broken: context leaves custom_message entries out of the
history (CTX-6 says they are conversation content). The fuzzer must find, shrink and save it."""

import sys

from persyk_session import adapter
from persyk_session.read import _context

_context.CONVERSATION_TYPES = frozenset({"message"})
sys.exit(adapter.main())

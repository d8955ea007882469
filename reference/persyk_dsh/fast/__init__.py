"""The fast twin of dsh-v0's codec: orjson and jsonschema-rs, and a scan that checks the common
record inline. The core never imports it; ``persyk_dsh.operations`` passes it in when
``PERSYK_SESSION_MODE`` is ``fast`` (the default)."""

from ._codec import FastCodec

__all__ = ["FastCodec"]

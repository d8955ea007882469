"""The version of persyk_session: one place any layer may import it from (not the facade)."""

__version__ = "0.1.0"

"""Conformance runner for the Persyk session format v1 (see docs/protocol.md)."""

__all__: list[str] = []
__version__ = "0.1.0"

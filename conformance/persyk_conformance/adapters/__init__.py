"""The ways to reach an implementation (docs/implementers/protocol.md): an adapter subprocess, owned
and confined (Linux), read through bounded pipes, or the reference in-process.
"""

"""Writing a session (docs/spec.md sections APP and RCV): the append planner and its I/O edge, the
session lock, the format-version refusal, the one mutation prologue (``_prologue``: every write
of the session file, capture's included, enters there: APP-5, APP-24, APP-26), the recovery
planner and explicit recovery. Imports the base and ``read`` only.
"""

"""Writing a session (docs/spec.md sections APP and RCV): the append planner and its I/O edge, the
session lock, the format-version refusal, the recovery planner and explicit recovery. Imports the
base and ``read`` only.
"""

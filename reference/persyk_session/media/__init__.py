"""Assets and capture (docs/spec.md sections AST and CAP): assets opened without following links,
WAV headers and interrupted-WAV recovery, live capture and staged whole-session deletion. Imports
the base, ``read`` and ``write``.
"""

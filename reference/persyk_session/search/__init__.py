"""Searching many sessions (docs/spec.md section SRCH): roots, discovery of headers, literal
case-insensitive matching, the sort key, cursors and pinned results. Never writes; imports the
base and ``read``.
"""

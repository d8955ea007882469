"""The format gate (docs/maintainers/maintainers.md): the two sides of a contract change, the
evidence gathered by running them, the classified diff and its report, and release archives.
"""

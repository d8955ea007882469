"""Reference implementation of the Persyk session format v1 (see docs/spec.md)."""

from ._errors import Code, ContractError, Diagnostic, PersykError, UsageError

__all__ = ["Code", "ContractError", "Diagnostic", "PersykError", "UsageError"]
__version__ = "0.1.0"

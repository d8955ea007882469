"""Reference backend of the dsh JSONL session persistence, format version 0 (profile ``dsh-v0``).

See docs/spec-dsh-v0.md. Independent of the Persyk v1 reference: it shares only the durable-write
primitives of ``persyk_session._fsutil`` (and, at its command line, the exit-status table of
``persyk_session._exit``). A sans-IO core (``_layout``, ``_header``, ``_records``, ``_scan``,
``_recover``, ``_encode``) taking its codec as an argument (``_codec``: the readable one here,
the fast twin in ``fast/``), one I/O edge (``_store``), and the operations that choose the codec
by the mode.
"""

from ._codec import DshCodec
from ._errors import DshCode, DshDiagnostic, DshError
from ._layout import NO_CWD_BUCKET, bucket_name, encode_id, log_name
from ._readable import ReadableCodec
from ._recover import INTERRUPTED_TEXT, closers, orphaned_turn_start
from ._scan import LogScan, scan_log
from ._schemas import DataValidator
from ._store import AppendResult, DshStore, Loaded, make_header
from .operations import DSH_OPERATIONS, mode_codec, op_append, op_create, op_list, op_load

__all__ = [
    "DSH_OPERATIONS",
    "INTERRUPTED_TEXT",
    "NO_CWD_BUCKET",
    "AppendResult",
    "DataValidator",
    "DshCode",
    "DshCodec",
    "DshDiagnostic",
    "DshError",
    "DshStore",
    "Loaded",
    "LogScan",
    "ReadableCodec",
    "bucket_name",
    "closers",
    "encode_id",
    "log_name",
    "make_header",
    "mode_codec",
    "op_append",
    "op_create",
    "op_list",
    "op_load",
    "orphaned_turn_start",
    "scan_log",
]

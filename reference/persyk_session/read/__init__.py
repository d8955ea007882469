"""Reading a session (docs/spec.md sections REC, HDR, ENV, ID, TREE, CTX, MSG, BLK, ENT): the
strict JSON grammar and record layer, the schema checks, the entry index and graph rules, the
engine interface (``_engine``) and the per-line rules (``_feed``), leaf selection and context,
paged reads, the read-only store and the live index. No mode: the engine is a parameter, and no
module here imports ``persyk_session.fast``. Imports only the base.
"""

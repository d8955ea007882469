"""Reading a session (docs/spec.md sections REC, HDR, ENV, ID, TREE, CTX, MSG, BLK, ENT): the
strict JSON grammar and record layer, the schema checks, the entry index and graph rules, leaf
selection and context, paged reads, the read-only store and the live index; the fast paths sit
beside their readable twins (``*_fast.py``, chosen by ``_mode``). Imports only the base.
"""

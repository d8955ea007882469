"""Hypothesis strategies for Persyk v1 sessions, for implementers' property tests and for
``persyk-conformance fuzz`` (docs/implementers/strategies.md).

Three families, all drawn from one vocabulary of records (the record kit's spelling,
``persyk_conformance.records``, and the value strategies below):

* **valid input**: ``valid_entries`` (one entry of any of the twelve types, every role and
  block), ``sessions`` (a header and entries whose graph holds: branching trees, labels,
  removals, recordings, session info; spelled every way a reader must accept; perhaps a record
  at a limit: an id of 128 characters, 128 nested containers, exactly 1,048,576 bytes);
* **single-fault mutants**: ``faulty_sessions`` draws a valid session and breaks it once, in one
  of ``FAULT_CLASSES`` (each byte-level, schema and graph fault of the read phase's error
  catalog); the ``Fault`` says which code at which line every conforming reader reports first;
* **append scenarios**: ``append_scenarios`` draws a valid session and the appends and removals
  a writer sends to it (batches, continuations, retries, conflicting retries, leaf mismatches,
  batches refused part-way or at the size limit).

Every strategy is deterministic under hypothesis's seed and shrinks like any other. Hypothesis
is needed to use them: install the suite's ``[fuzz]`` extra (``pip install '.[fuzz]'`` in its
checkout; README, "Dependencies").
"""

from __future__ import annotations

from .fuzz._strategies_append import APPEND_STEP_KINDS, AppendScenario, AppendStep, append_scenarios
from .fuzz._strategies_faults import FAULT_CLASSES, Fault, FaultClass, faulty_sessions
from .fuzz._strategies_sessions import (
    NEAR_LIMITS,
    SPELLINGS,
    EntryGraph,
    Line,
    Session,
    draw_entry,
    near_limit_entry,
    sessions,
    spell,
)
from .fuzz._strategies_values import (
    ENTRY_TYPES,
    asset_refs,
    available_assets,
    blocks,
    contents,
    entry_members,
    epoch_ms,
    headers,
    ids,
    json_scalars,
    json_values,
    messages,
    scalar_text,
    timestamps,
    valid_entries,
)

__all__ = [
    "APPEND_STEP_KINDS",
    "ENTRY_TYPES",
    "FAULT_CLASSES",
    "NEAR_LIMITS",
    "SPELLINGS",
    "AppendScenario",
    "AppendStep",
    "EntryGraph",
    "Fault",
    "FaultClass",
    "Line",
    "Session",
    "append_scenarios",
    "asset_refs",
    "available_assets",
    "blocks",
    "contents",
    "draw_entry",
    "entry_members",
    "epoch_ms",
    "faulty_sessions",
    "headers",
    "ids",
    "json_scalars",
    "json_values",
    "messages",
    "near_limit_entry",
    "scalar_text",
    "sessions",
    "spell",
    "timestamps",
    "valid_entries",
]

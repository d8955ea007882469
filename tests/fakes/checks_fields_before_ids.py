"""The reference with one unstated choice made the other way: a batch record whose id is
already taken is checked against the read-phase rules first, so a record that both reuses an
id with other content (APP-13) and breaks a read rule (HDR-7, ENV-3 ...) reports the read code.
docs/spec.md leaves that order open (decision on the order of refusals within one batch
record), so the fuzzer must find nothing against it (tests/conformance/fuzz/test_fuzz.py)."""

import sys
from typing import Any

from persyk_session import adapter
from persyk_session._errors import Code
from persyk_session.write import _append_plan
from persyk_session.write._append_plan import BatchItem

_take = _append_plan._Batch.take


def _conflicts(self: _append_plan._Batch, value: dict[str, Any]) -> bool:
    """APP-13: the id is taken, by a record with other content (an identical retry is APP-12's,
    judged as the reference judges it)."""
    entry_id = value.get("id")
    if not isinstance(entry_id, str) or entry_id not in self.builder:
        return False
    earlier = self.in_batch.get(entry_id)
    if earlier is None:
        meta = self.builder.get(entry_id)
        assert meta is not None
        earlier = self.load_committed(meta)
    return not _append_plan.json_equal(earlier, value)


def _take_fields_first(self: _append_plan._Batch, item: BatchItem, **options: Any) -> bool:
    value: Any = item.value
    if item.fault is None and isinstance(value, dict) and _conflicts(self, value):
        found = [d for d in self.builder.check_entry(value, line=self.line)
                 if d.code != Code.ID_DUPLICATE]
        if found:
            self.error = found[0]
            return False
    return _take(self, item, **options)  # options: the planner's own (plain=...)


_append_plan._Batch.take = _take_fields_first  # type: ignore[method-assign]
sys.exit(adapter.main())

"""Context in one pass: with the fast engine the bodies on the selected path come from the
validating pass (``fast/_bodies_fast.KeptBodies``), parsed once, and the history is the one the
readable engine gets by reading each body again (CTX-4..CTX-11 unchanged).

Each guarantee has a check, shown to fail on a store lacking exactly it
(tests/fakes/kept_bodies.py).
"""

from __future__ import annotations

import gc
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _writes import header_line, line, write_session
from fakes.kept_bodies import ForgetsBodies, IgnoresBudget, KeepsEveryType, KeyedCoarsely
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from persyk_conformance.records import custom, custom_message, removed, text, user
from persyk_conformance.records import message as message_entry
from persyk_session.fast import FAST_ENGINE
from persyk_session.fast._bodies_fast import KeptBodies
from persyk_session.operations import op_context
from persyk_session.read._context import (
    HISTORY_BODY_TYPES,
    History,
    LeafSelector,
    effective_history,
    select_leaf,
)
from persyk_session.read._engine import READABLE_ENGINE
from persyk_session.read._feed import NO_BODIES
from persyk_session.read._store import OpenSession, index_stream, open_session

StoreClass = Callable[[frozenset[str], int], KeptBodies]


def opened(file: Path, store: KeptBodies | None) -> OpenSession:
    """The session as ``open_session`` builds it, with ``store`` as its kept bodies (None: the
    readable engine's, which keeps none)."""
    kept = NO_BODIES if store is None else store
    with open(file, "rb") as stream:
        index = index_stream(stream.read, kept=kept)
    return OpenSession(path=file, index=index, kept=kept)


def history_of(session: OpenSession, selector: LeafSelector) -> tuple[History, int]:
    """The history of the selected leaf, and how many bodies were read and parsed again."""
    leaf = select_leaf(session.index, selector)
    with session.bodies() as load:
        history = effective_history(session.index, leaf, load)
        return history, load.reads


def assistant(entry_id: str, parent: str | None) -> dict[str, Any]:
    return message_entry(entry_id, parent, {
        "role": "assistant", "content": [text("an answer")], "timestamp": 1767225602000,
        "api": "openai-responses", "provider": "openai", "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                           "total": 0}},
        "stopReason": "stop"})


def branched(count: int) -> bytes:
    """``count`` conversation entries forking every 7, custom state and removals among them."""
    out = header_line()
    parent: str | None = None
    for i in range(count):
        entry_id = f"e{i}"
        if i % 7 == 6:
            parent = f"e{i - 4}"  # a fork
        if i % 5 == 4 and parent is not None and parent.startswith("e"):
            record = custom(entry_id, parent, data={"n": i})
        elif i % 11 == 10 and parent is not None:
            record = custom_message(entry_id, parent)
        else:
            record = user(entry_id, parent, f"message {i}")
        out += line(record)
        parent = entry_id
    return out


# --- the checks --------------------------------------------------------------------------------


def check_path_bodies_are_parsed_once(store_class: StoreClass, directory: Path) -> None:
    file = write_session(directory, branched(60))
    session = opened(file, store_class(HISTORY_BODY_TYPES, 1 << 20))
    history, reads = history_of(session, LeafSelector.default())
    assert history.messages
    assert reads == 0  # every body on the path came from the validating pass


def check_kept_bytes_stay_within_the_budget(store_class: StoreClass, directory: Path) -> None:
    file = write_session(directory, branched(60))
    budget = 2000
    store = store_class(HISTORY_BODY_TYPES, budget)
    session = opened(file, store)
    fresh, _ = history_of(opened(file, None), LeafSelector.default())
    history, reads = history_of(session, LeafSelector.default())
    assert 0 < store.kept_bytes <= budget
    assert history == fresh
    assert reads > 0  # the bodies past the budget are read again


def check_only_projected_types_are_kept(store_class: StoreClass, directory: Path) -> None:
    data = header_line() + line(user("m0", None))
    data += b"".join(line(removed(f"r{i}", "m0" if i == 0 else f"r{i - 1}", "m0"))
                     for i in range(5))
    file = write_session(directory, data)
    store = store_class(HISTORY_BODY_TYPES, 1 << 20)
    opened(file, store)
    assert len(store) == 1  # the message; removals and the header are never asked for


CHECKS = [
    (check_path_bodies_are_parsed_once, ForgetsBodies),
    (check_kept_bytes_stay_within_the_budget, IgnoresBudget),
    (check_only_projected_types_are_kept, KeepsEveryType),
]
CHECK_IDS = [check.__name__.removeprefix("check_") for check, _ in CHECKS]


@pytest.mark.parametrize(("check", "fake"), CHECKS, ids=CHECK_IDS)
def test_kept_bodies_keep_their_guarantee(
    tmp_path: Path, check: Callable[[StoreClass, Path], None], fake: StoreClass
) -> None:
    check(KeptBodies, tmp_path / "s")


@pytest.mark.parametrize(("check", "fake"), CHECKS, ids=CHECK_IDS)
def test_check_catches_the_store_that_lacks_it(
    tmp_path: Path, check: Callable[[StoreClass, Path], None], fake: StoreClass
) -> None:
    with pytest.raises(AssertionError):
        check(fake, tmp_path / "s")


# --- equality with the readable twin ------------------------------------------------------------

_KINDS = st.sampled_from(["user", "assistant", "custom", "custom_message", "removed"])


def equal_to_the_readable_twin(store_class: StoreClass, *, shrink: bool = True) -> None:
    """The property: for random branched sessions, leaves and budgets, the history projected
    from kept bodies is the one projected from bodies read again. ``shrink``: minimise a
    failure (skipped where a failure is the expected outcome)."""
    phases = list(Phase) if shrink else [Phase.explicit, Phase.generate]

    @settings(phases=phases, max_examples=80, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(
        shape=st.lists(st.tuples(_KINDS, st.integers(0, 10**6), st.integers(0, 10**6)),
                       min_size=0, max_size=25),
        leaf_pick=st.integers(0, 10**6),
        budget=st.sampled_from([0, 300, 1500, 1 << 20]),
    )
    def prove(shape: list[tuple[str, int, int]], leaf_pick: int, budget: int) -> None:
        records = _records(shape)
        choice = leaf_pick % (len(records) + 2)
        selector = (LeafSelector.default() if choice == 0 else LeafSelector.null()
                    if choice == 1 else LeafSelector.explicit(f"e{choice - 2}"))
        with tempfile.TemporaryDirectory() as root:
            file = write_session(Path(root) / "s", header_line() + b"".join(map(line, records)))
            readable = opened(file, None)
            assume(readable.index.valid)
            fast = opened(file, store_class(HISTORY_BODY_TYPES, budget))
            assert _projected(fast, selector) == _projected(readable, selector)

    prove()


def _projected(session: OpenSession, selector: LeafSelector) -> object:
    """The history, or the kind of exception projecting it raised (a wrong body may lack a
    member the projection reads)."""
    try:
        return history_of(session, selector)[0]
    except Exception as error:  # compared, not hidden: the readable twin raises nothing here
        return type(error).__name__


def _records(shape: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    messages: list[str] = []
    for i, (kind, parent_pick, target_pick) in enumerate(shape):
        entry_id = f"e{i}"
        parent = records[parent_pick % len(records)]["id"] if records and parent_pick % 4 else None
        if kind == "removed" and messages:
            record = removed(entry_id, parent, messages[target_pick % len(messages)])
        elif kind == "custom":
            record = custom(entry_id, parent, data={"i": i})
        elif kind == "custom_message":
            record = custom_message(entry_id, parent, details={"k": i})
            messages.append(entry_id)
        elif kind == "assistant":
            record = assistant(entry_id, parent)
            messages.append(entry_id)
        else:
            record = user(entry_id, parent, f"text {i}")
            messages.append(entry_id)
        records.append(record)
    return records


def test_one_pass_history_equals_the_readable_twin() -> None:
    equal_to_the_readable_twin(KeptBodies)


def test_twin_property_catches_a_store_that_mixes_bodies() -> None:
    with pytest.raises(AssertionError):
        equal_to_the_readable_twin(KeyedCoarsely, shrink=False)


# --- the operation and the collector ------------------------------------------------------------


def test_context_operation_reads_no_body_twice(tmp_path: Path) -> None:
    write_session(tmp_path / "s", branched(40))
    kept = open_session(tmp_path / "s", keep=HISTORY_BODY_TYPES, engine=FAST_ENGINE)
    reread = open_session(tmp_path / "s")
    assert history_of(kept, LeafSelector.default()) == (
        history_of(reread, LeafSelector.default())[0], 0)
    assert op_context({"session": str(tmp_path / "s")}) == history_of(
        reread, LeafSelector.default())[0].to_json()


def test_collector_resumes_after_a_one_pass_read(tmp_path: Path) -> None:
    write_session(tmp_path / "s", branched(10))
    session = open_session(tmp_path / "s", keep=HISTORY_BODY_TYPES, engine=FAST_ENGINE)
    assert gc.isenabled()
    with session.bodies():
        assert not gc.isenabled()  # paused while the history is projected
    assert gc.isenabled()


def test_collector_left_off_by_the_caller_stays_off(tmp_path: Path) -> None:
    write_session(tmp_path / "s", branched(10))
    gc.disable()
    try:
        session = open_session(tmp_path / "s", keep=HISTORY_BODY_TYPES, engine=FAST_ENGINE)
        with session.bodies():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_readable_engine_keeps_no_body(tmp_path: Path) -> None:
    write_session(tmp_path / "s", branched(10))
    session = open_session(tmp_path / "s", keep=HISTORY_BODY_TYPES, engine=READABLE_ENGINE)
    assert session.kept is NO_BODIES
    with session.bodies():
        assert gc.isenabled()  # nothing held, nothing paused

"""The fast preparation of batch records (fast/_items_fast.py) gives exactly the items of the
careful path, and leaves to it every value its proofs cannot vouch for."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
import uuid
from collections import OrderedDict
from typing import Any

import pytest
from persyk_conformance.records import custom, user
from persyk_session.fast import FAST_ENGINE
from persyk_session.fast._items_fast import encode_and_read_back
from persyk_session.read._engine import READABLE_ENGINE
from persyk_session.write._append_plan import BatchItem
from persyk_session.write._append_plan import _item_from_object as _item_of_engine

# The fast engine without its batch lane: its careful path (encode, then parse back).
CAREFUL = dataclasses.replace(FAST_ENGINE, batch=READABLE_ENGINE.batch)


def _item_from_object(value: Any) -> BatchItem:
    return _item_of_engine(value, FAST_ENGINE)


def _item_carefully(value: Any) -> BatchItem:
    return _item_of_engine(value, CAREFUL)


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    ONE = 1


class Name(str):
    pass


@dataclasses.dataclass
class Point:
    x: int


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def _with(data: Any) -> dict[str, Any]:
    return custom("c", None, data=data)


# Values the fast path writes itself: the same bytes and value as the careful path.
ACCEPTED = [
    ("message", user("u", None)),
    ("unicode", _with("é ☃ 𝄞")),
    ("int-64-bit", _with(2**63 + 5)),
    ("negative-zero", _with(-0.0)),
    ("float", _with(0.1)),
    ("true-and-one", _with([True, 1, 1.0, None])),
    ("int-enum", _with(Level.ONE)),
    ("depth-128", _with(_deep(127))),
]
# Values it must leave to the careful path, which refuses them or writes them otherwise.
DEFERRED = [
    ("nan", _with(math.nan)),
    ("infinity", _with(math.inf)),
    ("tuple", _with((1, 2))),
    ("uuid", _with(uuid.UUID(int=1))),
    ("enum", _with(Colour.RED)),
    ("datetime", _with(datetime.datetime(2026, 1, 1))),
    ("dataclass", _with(Point(1))),
    ("str-subclass", _with(Name("x"))),
    ("non-str-key", _with({1: "x"})),
    ("lone-surrogate", _with("\ud800")),
    ("lone-surrogate-key", _with({"\udfff": 1})),
    ("int-beyond-64-bits", _with(2**64)),
    ("depth-129", _with(_deep(128))),
    ("depth-300", _with(_deep(300))),
    ("too-large", _with("x" * (1 << 20))),
    ("bytes", _with(b"x")),
    ("dict-subclass", OrderedDict(_with(1))),
    ("not-an-object", [1]),
]


@pytest.mark.parametrize("value", [v for _, v in ACCEPTED], ids=[i for i, _ in ACCEPTED])
def test_fast_item_is_the_careful_item(value: Any) -> None:
    assert encode_and_read_back(value) is not None
    assert _item_from_object(value) == _item_carefully(value)


@pytest.mark.parametrize("value", [v for _, v in DEFERRED], ids=[i for i, _ in DEFERRED])
def test_values_the_proofs_cannot_vouch_for_take_the_careful_path(value: Any) -> None:
    assert encode_and_read_back(value) is None
    assert _item_from_object(value) == _item_carefully(value)


def test_a_non_finite_number_is_refused_not_written_as_null() -> None:
    item = _item_from_object(_with(math.nan))
    assert item.fault is not None and item.data == b""
    assert str(item.fault.code) == "RECORD_NUMBER_OUT_OF_RANGE"

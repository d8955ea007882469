"""dsh-v0 layout: buckets and id encoding (DSH-1, DSH-2, DSH-3)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from persyk_dsh import DshCode, DshError, bucket_name, encode_id, log_name
from persyk_dsh._layout import is_log_name


def test_bucket_is_sha256_prefix_of_the_cwd() -> None:
    digest = hashlib.sha256(b"/home/a/proj").hexdigest()
    assert bucket_name("/home/a/proj") == "cwd-" + digest[:12]


def test_bucket_without_cwd_is_no_cwd() -> None:
    assert bucket_name(None) == "_no-cwd"


@pytest.mark.parametrize(
    ("session_id", "name"),
    [("abc-1_2", "abc-1_2"), ("..", "%2E%2E"), (".", "%2E"), ("a/b", "a%2Fb"),
     ("%41", "%2541"), ("é", "%C3%A9"), ("a b", "a%20b")],
    ids=["literal", "dotdot", "dot", "slash", "percent", "non-ascii", "space"],
)
def test_encode_id_escapes_every_byte_outside_the_literal_set(session_id: str, name: str) -> None:
    assert encode_id(session_id) == name


@pytest.mark.parametrize("session_id", ["", "\ud800", "x" * 250, 7],
                         ids=["empty", "lone-surrogate", "too-long", "not-a-string"])
def test_encode_id_refuses_ids_without_a_file_name(session_id: object) -> None:
    with pytest.raises(DshError) as caught:
        encode_id(session_id)
    assert caught.value.diagnostic.code is DshCode.ID_INVALID


@given(st.text(min_size=1, max_size=40))
def test_encoded_ids_are_one_safe_segment(session_id: str) -> None:
    try:
        name = log_name(session_id)
    except DshError:
        return  # lone surrogates have no file name (DSH-3)
    assert "/" not in name and name not in (".", "..") and is_log_name(name)


@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_distinct_ids_never_share_a_file_name(a: str, b: str) -> None:
    try:
        same = encode_id(a) == encode_id(b)
    except DshError:
        return
    assert same == (a == b)

"""A capture write's ``pcm`` argument is decoded exactly as ``base64.b64decode(validate=True)``
decodes it, by bytes methods instead of its regular expression."""

from __future__ import annotations

import base64
import binascii

import pytest
from hypothesis import given
from hypothesis import strategies as st
from persyk_session import UsageError
from persyk_session.operations._media import _pcm_arg


def _expected(value: str) -> bytes | None:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _decoded(value: str) -> bytes | None:
    try:
        return _pcm_arg(value)
    except UsageError:
        return None


@pytest.mark.parametrize(
    "value",
    ["", "QUJD", "QQ==", "QUI=", "QQ=", "QQ===", "QQ", "QQ==QQ==", "QU=J", "QQ\n==", " QUJD",
     "QUJD\n", "é", "QUJ-", "QUJ_", "====", "Q===", "=", "==", "Q="],
    ids=["empty", "whole", "two-pads", "one-pad", "short-pad", "three-pads", "no-pad",
         "pad-inside", "pad-mid", "newline", "leading-space", "trailing-newline", "non-ascii",
         "url-safe-minus", "url-safe-underscore", "only-pads", "one-digit-three-pads",
         "one-pad-alone", "two-pads-alone", "one-digit-one-pad"],
)
def test_pcm_decodes_as_b64decode_with_validation(value: str) -> None:
    assert _decoded(value) == _expected(value)


@given(st.text("QUJDab01+/=-_ \n\xe9", max_size=24))
def test_pcm_agrees_with_b64decode_on_any_text(value: str) -> None:
    assert _decoded(value) == _expected(value)


def test_pcm_that_is_not_a_string_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        _pcm_arg(b"QUJD")

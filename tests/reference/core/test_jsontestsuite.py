"""Every JSONTestSuite parsing case, wrapped as the value of /data inside an otherwise valid record.

The corpus is nst/JSONTestSuite ``test_parsing/`` in ../shared/corpora (never copied into the
project). A case file becomes the record ``ENVELOPE + case + b"}"``:

* one trailing LF of the case file is dropped (it ends the file, not the value);
* an interior LF that is JSON whitespace (outside any string) is replaced by a space, which is
  also JSON whitespace, so the case means the same (``LF_AS_WHITESPACE``);
* an LF inside a string cannot be inside one record: a reader splits the line there. Those
  cases are checked the way a reader meets them: the first line of the split is the record
  (``LF_IN_STRING``).

Expected outcomes:

* ``y_`` cases are accepted, except where Persyk's stricter rules apply (``Y_REJECTED``);
* ``n_`` cases are rejected with ``RECORD_JSON_SYNTAX`` unless ``N_CODES`` names another code.
  No ``n_`` case becomes valid inside the wrapper: the cases invalid only as whole documents
  (trailing garbage such as ``n_structure_trailing_#``, a lone ``]``, ``{}}``, ``[][]``, empty or
  whitespace-only files) stay invalid because the wrapper's closing ``}`` must follow the value;
  ``N_CODES`` lists those whose first fault, by REC-19/REC-20 order, is not a syntax error;
* ``i_`` cases follow the decisions of docs/spec.md (``I_DECISIONS``), with None for accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from _corpora import CORPORA
from persyk_session._errors import Code, ContractError, Diagnostic
from persyk_session._lines import split_lines
from persyk_session.fast._records_fast import parse_record as fast_parse_record
from persyk_session.read._records import parse_record

CORPUS = CORPORA / "jsontestsuite"
CASES_DIR = CORPUS / "test_parsing"
# JSONTestSuite at commit 1ef36fa (see the corpus's SOURCE.md): 95 y_, 188 n_, 35 i_.
EXPECTED_COUNTS = {"y": 95, "n": 188, "i": 35}

ENVELOPE = (
    b'{"type":"custom","id":"c1","parentId":null,'
    b'"timestamp":"2026-01-01T00:00:00.000Z","customType":"jsontestsuite","data":'
)

LF_AS_WHITESPACE = {
    "n_array_newlines_unclosed.json",
    "n_array_unclosed_with_new_lines.json",
    "y_array_with_1_and_newline.json",
    "y_object_with_newlines.json",
}
LF_IN_STRING = {"n_string_unescaped_newline.json"}

# y_ cases that Persyk rejects on purpose.
Y_REJECTED: dict[str, Code] = {
    "y_object_duplicated_key.json": Code.RECORD_DUPLICATE_KEY,  # REC-7
    "y_object_duplicated_key_and_value.json": Code.RECORD_DUPLICATE_KEY,  # REC-7
}

# n_ cases whose first fault (REC-19 order, then lowest offset) is not RECORD_JSON_SYNTAX.
N_CODES: dict[str, Code] = {
    # REC-2: the bytes are checked before the grammar.
    "n_array_a_invalid_utf8.json": Code.RECORD_INVALID_UTF8,
    "n_array_invalid_utf8.json": Code.RECORD_INVALID_UTF8,
    "n_number_invalid-utf-8-in-bigger-int.json": Code.RECORD_INVALID_UTF8,
    "n_number_invalid-utf-8-in-exponent.json": Code.RECORD_INVALID_UTF8,
    "n_number_invalid-utf-8-in-int.json": Code.RECORD_INVALID_UTF8,
    "n_number_real_with_invalid_utf8_after_e.json": Code.RECORD_INVALID_UTF8,
    "n_object_lone_continuation_byte_in_key_and_trailing_comma.json": Code.RECORD_INVALID_UTF8,
    "n_string_invalid-utf-8-in-escape.json": Code.RECORD_INVALID_UTF8,
    "n_string_invalid_utf8_after_escape.json": Code.RECORD_INVALID_UTF8,
    "n_structure_incomplete_UTF8_BOM.json": Code.RECORD_INVALID_UTF8,
    "n_structure_lone-invalid-utf-8.json": Code.RECORD_INVALID_UTF8,
    "n_structure_single_eacute.json": Code.RECORD_INVALID_UTF8,
    # REC-5 + REC-20: an escaped high surrogate not followed by a complete low-surrogate escape
    # comes before the broken escape or unterminated string after it.
    "n_string_1_surrogate_then_escape.json": Code.RECORD_LONE_SURROGATE,
    "n_string_1_surrogate_then_escape_u.json": Code.RECORD_LONE_SURROGATE,
    "n_string_1_surrogate_then_escape_u1.json": Code.RECORD_LONE_SURROGATE,
    "n_string_1_surrogate_then_escape_u1x.json": Code.RECORD_LONE_SURROGATE,
    "n_string_incomplete_surrogate.json": Code.RECORD_LONE_SURROGATE,
    "n_string_incomplete_surrogate_escape_invalid.json": Code.RECORD_LONE_SURROGATE,
    # REC-12 + REC-20: container 129 opens before the input ends unclosed.
    "n_structure_100000_opening_arrays.json": Code.RECORD_TOO_DEEP,
    "n_structure_open_array_object.json": Code.RECORD_TOO_DEEP,
}

# i_ decisions (docs/spec.md); None = accepted.
I_DECISIONS: dict[str, Code | None] = {
    # REC-10: underflow is accepted.
    "i_number_double_huge_neg_exp.json": None,
    "i_number_real_underflow.json": None,
    # REC-8: overflow to infinity.
    "i_number_huge_exp.json": Code.RECORD_NUMBER_OUT_OF_RANGE,
    "i_number_neg_int_huge_exp.json": Code.RECORD_NUMBER_OUT_OF_RANGE,
    "i_number_pos_double_huge_exp.json": Code.RECORD_NUMBER_OUT_OF_RANGE,
    "i_number_real_neg_overflow.json": Code.RECORD_NUMBER_OUT_OF_RANGE,
    "i_number_real_pos_overflow.json": Code.RECORD_NUMBER_OUT_OF_RANGE,
    # REC-9 (rev. 2): integer literals beyond 2^53-1 are accepted unless they overflow a double.
    "i_number_too_big_neg_int.json": None,
    "i_number_too_big_pos_int.json": None,
    "i_number_very_big_negative_int.json": None,
    # REC-5: escaped lone surrogates, in keys and values.
    "i_object_key_lone_2nd_surrogate.json": Code.RECORD_LONE_SURROGATE,
    "i_string_1st_surrogate_but_2nd_missing.json": Code.RECORD_LONE_SURROGATE,
    "i_string_1st_valid_surrogate_2nd_invalid.json": Code.RECORD_LONE_SURROGATE,
    "i_string_incomplete_surrogate_and_escape_valid.json": Code.RECORD_LONE_SURROGATE,
    "i_string_incomplete_surrogate_pair.json": Code.RECORD_LONE_SURROGATE,
    "i_string_incomplete_surrogates_escape_valid.json": Code.RECORD_LONE_SURROGATE,
    "i_string_invalid_lonely_surrogate.json": Code.RECORD_LONE_SURROGATE,
    "i_string_invalid_surrogate.json": Code.RECORD_LONE_SURROGATE,
    "i_string_inverted_surrogates_U+1D11E.json": Code.RECORD_LONE_SURROGATE,
    "i_string_lone_second_surrogate.json": Code.RECORD_LONE_SURROGATE,
    # REC-2: ill-formed UTF-8, encoded surrogates included.
    "i_string_UTF-8_invalid_sequence.json": Code.RECORD_INVALID_UTF8,
    "i_string_UTF8_surrogate_U+D800.json": Code.RECORD_INVALID_UTF8,
    "i_string_invalid_utf-8.json": Code.RECORD_INVALID_UTF8,
    "i_string_iso_latin_1.json": Code.RECORD_INVALID_UTF8,
    "i_string_lone_utf8_continuation_byte.json": Code.RECORD_INVALID_UTF8,
    "i_string_not_in_unicode_range.json": Code.RECORD_INVALID_UTF8,
    "i_string_overlong_sequence_2_bytes.json": Code.RECORD_INVALID_UTF8,
    "i_string_overlong_sequence_6_bytes.json": Code.RECORD_INVALID_UTF8,
    "i_string_overlong_sequence_6_bytes_null.json": Code.RECORD_INVALID_UTF8,
    "i_string_truncated-utf-8.json": Code.RECORD_INVALID_UTF8,
    # UTF-16 text is not UTF-8: FF FE, and e9 followed by 00, are ill-formed (REC-2 before REC-3).
    "i_string_UTF-16LE_with_BOM.json": Code.RECORD_INVALID_UTF8,
    "i_string_utf16BE_no_BOM.json": Code.RECORD_INVALID_UTF8,
    "i_string_utf16LE_no_BOM.json": Code.RECORD_INVALID_UTF8,
    # REC-12: 500 nested arrays exceed 128 containers.
    "i_structure_500_nested_arrays.json": Code.RECORD_TOO_DEEP,
    # REC-13 covers a BOM at the start of a record only; inside the wrapper it is a byte that is
    # not JSON whitespace (REC-3). As a record of its own it would be RECORD_BYTE_ORDER_MARK.
    "i_structure_UTF-8_BOM_empty_object.json": Code.RECORD_JSON_SYNTAX,
}


def _case_names() -> list[str]:
    if not CASES_DIR.is_dir():
        return []
    return sorted(path.name for path in CASES_DIR.iterdir() if path.suffix == ".json")


CASE_NAMES = _case_names()
needs_corpus = pytest.mark.skipif(
    not CASE_NAMES, reason=f"JSONTestSuite corpus not found at {CASES_DIR}"
)


def wrapped_record(name: str) -> bytes:
    """The record a reader meets for the case: its first line, with the rules of the docstring."""
    case = (CASES_DIR / name).read_bytes()
    if case.endswith(b"\n"):
        case = case[:-1]
    if name in LF_AS_WHITESPACE:
        case = case.replace(b"\n", b" ")
    first_line = next(split_lines(ENVELOPE + case + b"}"))
    return first_line.data


def expected_code(name: str) -> Code | None:
    kind = name[0]
    if kind == "y":
        return Y_REJECTED.get(name)
    if kind == "n":
        return N_CODES.get(name, Code.RECORD_JSON_SYNTAX)
    return I_DECISIONS[name]


@needs_corpus
def test_discovery_finds_every_case() -> None:
    counts = {kind: sum(name[0] == kind for name in CASE_NAMES) for kind in EXPECTED_COUNTS}
    assert counts == EXPECTED_COUNTS


@needs_corpus
def test_i_decisions_cover_exactly_the_i_cases() -> None:
    assert set(I_DECISIONS) == {name for name in CASE_NAMES if name.startswith("i_")}


@needs_corpus
def test_exception_tables_name_existing_cases() -> None:
    named = set(Y_REJECTED) | set(N_CODES) | LF_AS_WHITESPACE | LF_IN_STRING
    assert named <= set(CASE_NAMES)


@needs_corpus
def test_lf_tables_list_exactly_the_cases_with_an_interior_lf() -> None:
    with_lf = set()
    for name in CASE_NAMES:
        case = (CASES_DIR / name).read_bytes()
        if b"\n" in case.removesuffix(b"\n"):
            with_lf.add(name)
    assert with_lf == LF_AS_WHITESPACE | LF_IN_STRING


ACCEPTED = [name for name in CASE_NAMES if expected_code(name) is None]
REJECTED = [(name, code) for name in CASE_NAMES if (code := expected_code(name)) is not None]


@needs_corpus
@pytest.mark.parametrize("name", ACCEPTED or ["(corpus missing)"])
def test_accept_wrapped_case(name: str) -> None:
    assert "data" in parse_record(wrapped_record(name), line=2)


@needs_corpus
@pytest.mark.parametrize(
    ("name", "code"),
    REJECTED or [("(corpus missing)", Code.RECORD_JSON_SYNTAX)],
    ids=[name for name, _ in REJECTED] or ["(corpus missing)"],
)
def test_reject_wrapped_case(name: str, code: Code) -> None:
    with pytest.raises(ContractError) as caught:
        parse_record(wrapped_record(name), line=2)
    assert caught.value.code == code
    assert caught.value.diagnostics[0].line == 2


def _outcome(parse: Callable[..., dict[str, Any]], record: bytes) -> dict[str, Any] | Diagnostic:
    try:
        return parse(record, line=2)
    except ContractError as error:
        return error.diagnostics[0]


@needs_corpus
@pytest.mark.parametrize("name", CASE_NAMES or ["(corpus missing)"])
def test_fast_path_agrees_with_readable_reader(name: str) -> None:
    record = wrapped_record(name)
    assert _outcome(fast_parse_record, record) == _outcome(parse_record, record)

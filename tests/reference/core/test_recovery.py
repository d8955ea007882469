"""Explicit recovery: RCV-1..RCV-15, and the prefix classifier behind it."""

from __future__ import annotations

from pathlib import Path

import pytest
from _writes import custom, header_line, line, new_session, user, write_session
from persyk_session import Code
from persyk_session.operations import OPERATIONS
from persyk_session.read._grammar import Incomplete, JsonFault, parse_json
from persyk_session.write._recovery import recover
from persyk_session.write._recovery_plan import FragmentVerdict, classify_fragment


def _no_faults(value: object, line_no: int) -> list[object]:
    return []


def _verdict(fragment: bytes) -> FragmentVerdict:
    return classify_fragment(fragment, line=2, check_record=_no_faults)  # type: ignore[arg-type]


INCOMPLETE = [
    b"{",
    b"   ",
    b'{"type"',
    b'{"type":',
    b'{"type":"mess',
    b'{"a":1,',
    b'{"a":[1,2',
    b'{"a":[1,',
    b'{"a":tr',
    b'{"a":nul',
    b'{"a":-',
    b'{"a":1.',
    b'{"a":1e',
    b'{"a":1e+',
    b'{"a":12345678901234567890',  # more could follow: 1234...890.5 is in range
    b'{"a":"x\\',
    b'{"a":"x\\u',
    b'{"a":"x\\u00',
    b'{"a":"\\ud800',  # a low surrogate may follow
    b'{"a":"\\ud800\\',
    b'{"a":"\\ud800\\ud',
    b'{"a":"\xe2\x82',  # RCV-12: a UTF-8 sequence cut at the end
    b'{"a":"\xf0\x9f\x98',
    b'{"\xc3',
    b'{"a":{"b":{"c":',
    b'{"a" ',
    b'{"a":1 , "b"',
    b'{"ab',
    b'{"a":1,"a',  # the key may still become "ab"
    b'{"a":123456789012345678,',  # a big integer is valid (REC-9, rev. 2)
]

SYNTAX = [
    b'{"a":1,]',
    b'{"a":1}}',
    b'{"a":01',
    b'{"a":1.e',
    b'{"a":--',
    b'{"a":tx',
    b'{"a":"\\x',
    b'{"a":"\\u12g',
    b'{"a":"\x01',
    b"{'a'",
    b'{"a":1 "b"',
    b'{"a":[1 2',
    b'{"a":"\xff',
    b'{"a":"\xe0\x80',  # overlong start
    b'{"a":"\xed\xa0',  # an encoded surrogate, cut
    b"\xef\xbb\xbf{",  # a byte order mark
    b'{"a":1\xe2\x82',  # a cut character outside a string
    b'{"a":"x\\\xc3',
    b'{"a":1}x',
]

INVALID_RECORD = [
    b'{"a":1}',  # complete: with the callback it would be judged; see below
    b"[1,2",
    b'"abc',
    b"12",
    b'{"a":1,"a":',  # the key is complete: a duplicate whatever follows
    b'{"a":"\\udc00',  # a lone low surrogate whatever follows
    b'{"a":"\\ud800\\u0',  # a high surrogate then a non-low escape
    b'{"a":1e400,',  # a complete number out of range
    b'{"a":' + b"9" * 400 + b",",  # a complete integer that overflows a double (REC-8)
]


@pytest.mark.parametrize("fragment", INCOMPLETE, ids=[repr(f) for f in INCOMPLETE])
def test_incomplete_fragments_are_truncation_candidates(fragment: bytes) -> None:
    assert _verdict(fragment) is FragmentVerdict.INCOMPLETE


@pytest.mark.parametrize("fragment", SYNTAX, ids=[repr(f) for f in SYNTAX])
def test_definite_syntax_errors_are_refused(fragment: bytes) -> None:
    assert _verdict(fragment) is FragmentVerdict.SYNTAX


@pytest.mark.parametrize("fragment", INVALID_RECORD[1:], ids=[repr(f) for f in INVALID_RECORD[1:]])
def test_fragments_that_cannot_become_records_are_refused(fragment: bytes) -> None:
    assert _verdict(fragment) is FragmentVerdict.INVALID_RECORD


def test_complete_fragment_is_judged_by_the_record_rules() -> None:
    def refuse(value: object, line_no: int) -> list[object]:
        return ["fault"]

    assert _verdict(b'{"a":1}') is FragmentVerdict.VALID_RECORD
    assert classify_fragment(
        b'{"a":1}', line=2, check_record=refuse  # type: ignore[arg-type]
    ) is FragmentVerdict.INVALID_RECORD
    # A CR before the missing LF is whitespace once terminated (REC-14, rev. 2).
    assert _verdict(b'{"a":1}\r') is FragmentVerdict.VALID_RECORD


@pytest.mark.parametrize(
    ("fragment", "verdict"),
    [
        (b"[" * 129, FragmentVerdict.LIMIT),
        (b'{"a":' * 128 + b"1", FragmentVerdict.INCOMPLETE),
        (b'{"a":' * 129, FragmentVerdict.LIMIT),
        (b'{"a":"' + b"x" * (1_048_576 - 6), FragmentVerdict.LIMIT),  # 1 MiB + closing > limit
        (b'{"a":"' + b"x" * 1_048_576, FragmentVerdict.LIMIT),
    ],
    ids=["depth-129", "depth-128", "object-depth-129", "no-room-to-close", "over-1-MiB"],
)
def test_limits(fragment: bytes, verdict: FragmentVerdict) -> None:
    assert _verdict(fragment) is verdict


@pytest.mark.parametrize(
    ("fragment", "result"),
    [
        (b"", Incomplete(object_root=True, in_string=False, open_containers=0)),
        (b'{"a":[1,{"b":"x', Incomplete(object_root=True, in_string=True, open_containers=3)),
        (b"[1,", Incomplete(object_root=False, in_string=False, open_containers=1)),
        (b'{"a":[1,{"b":null}]}', {"a": [1, {"b": None}]}),
        (b"{} ", {}),
    ],
    ids=["nothing", "open-string", "array", "complete", "complete-then-space"],
)
def test_prefix_mode_of_the_one_grammar(fragment: bytes, result: object) -> None:
    # Recovery reads a fragment with the grammar that reads every record.
    assert parse_json(fragment, prefix=True) == result


def test_prefix_mode_reports_a_grammar_fault_after_a_complete_value() -> None:
    with pytest.raises(JsonFault) as caught:
        parse_json(b"{}{", prefix=True)
    assert caught.value.code is Code.RECORD_JSON_SYNTAX and caught.value.offset == 2


# --- recovery on disk --------------------------------------------------------------------------

BASE = header_line() + line(user("m0", None)) + line(user("m1", "m0"))


def test_valid_session_needs_nothing(tmp_path: Path) -> None:
    file = write_session(tmp_path / "s", BASE)
    assert recover(tmp_path / "s").to_json() == {"action": "none", "preserved": None}
    assert file.read_bytes() == BASE


def test_complete_valid_last_record_gets_its_newline(tmp_path: Path) -> None:
    last = line(user("m2", "m1"))
    file = write_session(tmp_path / "s", BASE + last[:-1])
    assert recover(tmp_path / "s").action == "newline-added"
    assert file.read_bytes() == BASE + last
    assert recover(tmp_path / "s").action == "none"  # RCV-13


def test_incomplete_fragment_is_preserved_then_truncated(tmp_path: Path) -> None:
    fragment = line(user("m2", "m1", "é" * 10))[:57]
    file = write_session(tmp_path / "s", BASE + fragment)
    result = recover(tmp_path / "s")
    assert result.action == "truncated"
    assert result.preserved is not None and result.preserved.startswith("recovery/")
    assert (tmp_path / "s" / result.preserved).read_bytes() == fragment  # RCV-6, byte-exact
    assert file.read_bytes() == BASE  # RCV-7
    assert recover(tmp_path / "s").action == "none"  # RCV-13


def test_rerun_after_crash_between_preserve_and_truncate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    fragment = b'{"type":"message","id":"m2"'
    file = write_session(tmp_path / "s", BASE + fragment)
    real = os.ftruncate

    def crash(fd: int, size: int) -> None:
        raise OSError(5, "EIO")

    monkeypatch.setattr(os, "ftruncate", crash)
    failed = recover(tmp_path / "s")
    assert failed.error is not None and failed.error.code is Code.IO_FAILED
    assert file.read_bytes() == BASE + fragment
    monkeypatch.setattr(os, "ftruncate", real)
    again = recover(tmp_path / "s")
    assert again.action == "truncated"
    assert (tmp_path / "s" / (again.preserved or "")).read_bytes() == fragment
    assert file.read_bytes() == BASE


@pytest.mark.parametrize(
    ("data", "code", "line_no"),
    [
        (BASE + b'{"a":1,]', Code.RECOVER_TAIL_SYNTAX, 4),
        (BASE + b"[" * 129, Code.RECOVER_TAIL_LIMIT, 4),
        (BASE + b'{"a":"' + b"x" * 1_048_600, Code.RECOVER_TAIL_LIMIT, 4),
        (BASE + line(user("m2", "nowhere"))[:-1], Code.RECOVER_TAIL_INVALID_RECORD, 4),
        (BASE + line(user("m1", "m0"))[:-1], Code.RECOVER_TAIL_INVALID_RECORD, 4),
        (BASE + b"[1,", Code.RECOVER_TAIL_INVALID_RECORD, 4),
        (header_line() + b"garbage\n" + line(user("m0", None)), Code.RECOVER_INTERIOR_DAMAGE, 2),
        (BASE + line(user("x", "nowhere")), Code.RECOVER_INTERIOR_DAMAGE, 4),
        (header_line() + b"garbage\n" + line(user("m0", None))[:-1],
         Code.RECOVER_INTERIOR_DAMAGE, 2),
        (header_line() + b"garbage\n" + b'{"a" 1', Code.RECOVER_TAIL_SYNTAX, 3),
        (b'{"type":"session","version":1,"id":"h"}', Code.RECOVER_TAIL_INVALID_RECORD, 1),
        (b'{"type":"session","version":2,"id":"h","timestamp":"2026-01-01T00:00:00Z"}',
         Code.HEADER_VERSION_UNSUPPORTED, 1),
        (b'{"type":"session","version":2,"id":"h","timestamp":"2026-01-01T00:00:00Z"}\n{"ty',
         Code.HEADER_VERSION_UNSUPPORTED, 1),
    ],
    ids=["tail-syntax", "tail-depth", "tail-size", "tail-missing-parent", "tail-duplicate-id",
         "tail-not-object", "interior-syntax", "last-complete-line-invalid",
         "interior-before-complete-tail", "broken-tail-judged-alone", "unterminated-bad-header",
         "unterminated-v2-header", "v2-session-with-torn-tail"],
)
def test_refusals_leave_the_file_unchanged(
    tmp_path: Path, data: bytes, code: Code, line_no: int | None
) -> None:
    file = write_session(tmp_path / "s", data)
    result = recover(tmp_path / "s")
    assert result.error is not None and result.error.code is code
    assert result.error.line == line_no
    assert file.read_bytes() == data
    assert not (tmp_path / "s" / "recovery").exists()
    if code is Code.HEADER_VERSION_UNSUPPORTED:  # RCV-17: refused before the lock is taken
        assert not (tmp_path / "s" / "session.lock").exists()


def test_complete_last_record_ending_in_cr_gets_its_lf(tmp_path: Path) -> None:
    # REC-14 (rev. 2): the CR is whitespace, so the record is complete and valid.
    data = BASE + line(custom("c", None))[:-1] + b"\r"
    file = write_session(tmp_path / "s", data)
    assert recover(tmp_path / "s").action == "newline-added"
    assert file.read_bytes() == data + b"\n"


@pytest.mark.parametrize(
    "data",
    [b"", b"\n\r\n", b'{"type":"session","vers', b"\n" + b'{"type":"session","vers'],
    ids=["zero-bytes", "blank-lines", "torn-header", "blank-line-then-torn-header"],
)
def test_file_without_a_complete_record_is_preserved_then_removed(
    tmp_path: Path, data: bytes
) -> None:
    # RCV-16: nothing committed is lost; the bytes (if any) are kept under recovery/ first.
    file = write_session(tmp_path / "s", data)
    result = recover(tmp_path / "s")
    assert result.action == "removed"
    assert not file.exists()
    if data:
        assert result.preserved is not None
        assert (tmp_path / "s" / result.preserved).read_bytes() == data
    else:
        assert result.preserved is None


def test_incomplete_tail_is_truncated_without_judging_the_interior(tmp_path: Path) -> None:
    # RCV-15: an incomplete fragment is judged by its own bytes; the interior damage stays for
    # validate to report, and the fragment is kept before the cut.
    data = header_line() + b"garbage\n"
    file = write_session(tmp_path / "s", data + b'{"type":"mess')
    result = recover(tmp_path / "s")
    assert result.action == "truncated"
    assert file.read_bytes() == data
    assert result.preserved is not None
    assert (tmp_path / "s" / result.preserved).read_bytes() == b'{"type":"mess'


def test_torn_tail_recovery_reads_only_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RCV-15: cost proportional to the tail. Opening the whole session would go through
    # open_session; a truncation must never call it.
    import persyk_session.write._recovery as recovery_module

    def refuse_whole_file(*args: object, **kwargs: object) -> None:
        raise AssertionError("recovery of an incomplete tail validated the whole file")

    monkeypatch.setattr(recovery_module, "open_session", refuse_whole_file)
    write_session(tmp_path / "s", BASE + b'{"type":"message","id":"m3","par')
    assert recover(tmp_path / "s").action == "truncated"


def test_unterminated_valid_header_gets_its_newline(tmp_path: Path) -> None:
    file = write_session(tmp_path / "s", header_line()[:-1])
    assert recover(tmp_path / "s").action == "newline-added"
    assert file.read_bytes() == header_line()


def test_reading_never_repairs(tmp_path: Path) -> None:
    data = BASE + b'{"type":"mess'
    file = write_session(tmp_path / "s", data)
    for op, args in [("validate", {}), ("context", {}), ("info", {}), ("read", {"pageSize": 5})]:
        OPERATIONS[op]({"session": str(tmp_path / "s"), **args})
    assert file.read_bytes() == data
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["session.jsonl"]


def test_recovered_session_accepts_appends(tmp_path: Path) -> None:
    new_session(tmp_path / "s", user("m0", None))
    with open(tmp_path / "s" / "session.jsonl", "ab") as stream:
        stream.write(line(user("m1", "m0"))[:30])
    assert recover(tmp_path / "s").action == "truncated"
    result = OPERATIONS["append"]({"session": str(tmp_path / "s"), "records": [user("m1", "m0")]})
    assert result["committed"] == ["m1"]

"""The power-loss harness (H-201..H-211, DH-103, DH-104): the trace parser and the
persistence model on recorded text, and the checks against the reference and against fakes that
each lack one sync."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from _paths import TESTS_DIR
from persyk_conformance.adapters._in_process import InProcessAdapter
from persyk_conformance.adapters._interface import Adapter
from persyk_conformance.adapters._subprocess import SubprocessAdapter
from persyk_conformance.harness import _crash
from persyk_conformance.harness._fsmodel import CrashState, FileSystemModel
from persyk_conformance.harness._powerloss import FAKES_CAUGHT, SCENARIOS, Acked, _judge_files
from persyk_conformance.harness._powerloss import _recover_wav as recover_wav
from persyk_conformance.harness._registry import HarnessResult, run_harness
from persyk_conformance.harness._syncorder import missing_syncs
from persyk_conformance.harness._trace import TraceError, decode_c_string, parse_trace
from test_harness_write import STRACE_PATHS, _attach_works, use_strace_path

FAKES = TESTS_DIR / "fakes"
REFERENCE = [sys.executable, "-m", "persyk_session.cli", "adapter"]
ROOT = "/w"


def _strace_works() -> bool:
    try:
        _crash.strace_prefix()
    except _crash.CrashCheckUnsupported:
        return False
    return True


needs_strace = pytest.mark.skipif(not _strace_works(),
                                  reason="the power-loss checks need strace and ptrace (Linux)")


# --- the parser, on recorded trace text -------------------------------------------------------

APPEND_TRACE = """\
700 write(1<pipe:[9]>, "{\\"protocol\\":1}\\n", 15) = 15
700 openat(-100</cwd>, "/w/s/session.jsonl", 0xa0c02) = 5</w/s/session.jsonl>
700 write(5</w/s/session.jsonl>, "{\\"id\\":\\"a1\\"}\\n\\xc3\\xa9", 15) = 15
700 fsync(5</w/s/session.jsonl>) = 0
700 write(1<pipe:[9]>, "{\\"seq\\":1}\\n", 11) = 11
"""


def test_parse_write_keeps_the_exact_bytes_written() -> None:
    ops = parse_trace(APPEND_TRACE)
    assert [op.kind for op in ops] == ["write", "open", "write", "sync", "write"]
    assert ops[2].data == b'{"id":"a1"}\n\xc3\xa9'
    assert ops[1].path == "/w/s/session.jsonl" and ops[1].fd == 5


def test_parse_keeps_only_the_bytes_a_short_write_wrote() -> None:
    [op] = parse_trace('1 write(3</w/f>, "abcdef", 6) = 2\n')
    assert op.data == b"ab"


def test_parse_joins_a_call_split_by_another_thread() -> None:
    text = ('7 write(3</w/f>, "abc", 3 <unfinished ...>\n'
            '8 fsync(4</w/g>) = 0\n'
            "7 <... write resumed>) = 3\n")
    kinds = [(op.kind, op.data) for op in parse_trace(text)]
    assert ("write", b"abc") in kinds and ("sync", b"") in kinds


def test_parse_drops_failed_calls() -> None:
    assert parse_trace('1 unlink("/w/x") = -1 ENOENT (No such file or directory)\n') == []


def test_parse_refuses_data_that_strace_cut() -> None:
    with pytest.raises(TraceError, match="line 1"):
        parse_trace('1 write(3</w/f>, "abc"..., 3000) = 3000\n')


def test_parse_resolves_at_calls_against_their_directory_descriptor() -> None:
    [op] = parse_trace('1 linkat(4</w/s>, ".tmp1", 4</w/s>, "session.jsonl", 0) = 0\n')
    assert (op.kind, op.path, op.target) == ("link", "/w/s/.tmp1", "/w/s/session.jsonl")


def test_parse_reads_a_descriptor_whose_file_was_removed() -> None:
    [op] = parse_trace("1 close(4</w/s/session.jsonl>(deleted)) = 0\n")
    assert (op.kind, op.fd, op.path) == ("close", 4, "/w/s/session.jsonl")


def test_decode_c_string_reads_octal_and_named_escapes() -> None:
    assert decode_c_string(r"a\tb\0\377\\") == b"a\tb\x00\xff\\"


# --- the model ---------------------------------------------------------------------------------

def _model(text: str, files: dict[str, bytes] | None = None) -> FileSystemModel:
    model = FileSystemModel.start(ROOT, files or {}, ["s"])
    for op in parse_trace(text):
        model.apply(op)
    return model


WRITE = ('1 openat(-100</c>, "/w/s/f", 0x441, 0644) = 3</w/s/f>\n'
         '2 write(3</w/s/f>, "abcdef", 6) = 6\n')
DIR_SYNC = ('3 openat(-100</c>, "/w/s", 0x90000) = 4</w/s>\n'
            "4 fsync(4</w/s>) = 0\n")


def _contents(model: FileSystemModel) -> set[bytes | None]:
    return {state.files.get("s/f") for state in model.crash_states(100, 0)}


def test_an_unsynced_write_may_be_lost_or_torn_and_its_new_name_too() -> None:
    assert _contents(_model(WRITE + DIR_SYNC)) == {b"", b"abc", b"abcdef"}
    assert None in _contents(_model(WRITE))  # DUR-3: no directory fsync, the name may go


def test_a_file_fsync_keeps_the_bytes_but_not_the_new_name() -> None:
    synced = WRITE + "5 fsync(3</w/s/f>) = 0\n"
    assert _contents(_model(synced + DIR_SYNC)) == {b"abcdef"}
    assert _contents(_model(synced)) == {None, b"abcdef"}


def test_fdatasync_counts_like_fsync() -> None:
    assert _contents(_model(WRITE + "5 fdatasync(3</w/s/f>) = 0\n" + DIR_SYNC)) == {b"abcdef"}


def test_a_write_through_o_dsync_is_durable_on_return() -> None:
    text = ('1 openat(-100</c>, "/w/s/f", 0x1441, 0644) = 3</w/s/f>\n' + DIR_SYNC
            + '5 write(3</w/s/f>, "abcdef", 6) = 6\n')
    assert _contents(_model(text)) == {b"abcdef"}


def test_files_outside_the_workspace_are_ignored() -> None:
    model = _model('1 openat(-100</c>, "/usr/lib/x", 0x441, 0644) = 3</usr/lib/x>\n'
                   '2 write(3</usr/lib/x>, "zz", 2) = 2\n')
    assert model.pending().files == {} and model.pending().directories == {}


def test_sampled_crash_states_are_bounded_and_the_same_for_a_seed() -> None:
    text = WRITE + "".join(f'{n} write(3</w/s/f>, "x{n}", 2) = 2\n' for n in range(10, 40))
    first = _model(text).crash_states(5, 7)
    assert len(first) == 5
    assert [s.key() for s in first] == [s.key() for s in _model(text).crash_states(5, 7)]
    assert b"" in {s.files.get("s/f") for s in first}  # "nothing unsynced kept" is always built


# --- the sync-order analysis -------------------------------------------------------------------

def test_a_missing_file_fsync_is_named_with_its_calls() -> None:
    model = _model(WRITE + DIR_SYNC)
    assert missing_syncs(model, "the reply at call 9") == [
        "no fsync of s/f between the write at call 2 and the reply at call 9"]


def test_a_missing_directory_fsync_is_named_and_a_gone_temporary_file_is_not() -> None:
    text = ('1 openat(-100</c>, "/w/s/.t", 0x441, 0644) = 3</w/s/.t>\n'
            "2 fsync(3</w/s/.t>) = 0\n"
            '3 link("/w/s/.t", "/w/s/session.jsonl") = 0\n'
            '4 unlink("/w/s/.t") = 0\n')
    assert missing_syncs(_model(text), "the reply at call 5") == [
        "the directory s was not fsynced after session.jsonl was linked at call 3 "
        "(the reply at call 5)"]


# --- H-211's judgments, on states built here -------------------------------------------------

def _recording_state(wav: bytes, log: bytes) -> CrashState:
    scenario = SCENARIOS["H-211"]()
    files = {**scenario.setup, "session/assets/pl-rec.wav": wav}
    files["session/session.jsonl"] += log
    return CrashState(files, frozenset({"", "session", "session/assets"}), "built here")


def _repaired() -> bytes:
    s = SCENARIOS["H-211"]()
    return s.setup["session/assets/pl-rec.wav"][:44 + len(s.frames)]  # sizes aside


def test_recording_interrupted_before_its_wav_repair_is_an_ordering_failure() -> None:
    s = replace(SCENARIOS["H-211"](), repaired=_repaired())
    entry = b'{"type":"recording.interrupted","id":"ri1"}\n'
    unrepaired = _recording_state(s.setup["session/assets/pl-rec.wav"], entry)
    assert any("recording.interrupted persisted while the repair" in p
               for p in _judge_files(s, Acked(), unrepaired))
    # a torn line is no persisted entry; the repaired WAV with the entry is fine
    torn = _recording_state(s.setup["session/assets/pl-rec.wav"], entry[:-1])
    assert _judge_files(s, Acked(), torn) == []
    assert _judge_files(s, Acked(), _recording_state(_repaired(), entry)) == []
    assert any("acknowledged at call 7 is not durable (CAP-25, DUR-5)" in p
               for p in _judge_files(s, Acked(repaired=True, at=7), unrepaired))


def test_a_clean_recovery_that_finds_fewer_frames_reports_them_lost(tmp_path: Path) -> None:
    s = SCENARIOS["H-211"]()
    for name, data in s.setup.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    assert recover_wav(InProcessAdapter(), tmp_path / "session", s, 10.0) is None
    wav = tmp_path / "session" / s.recording
    wav.write_bytes(wav.read_bytes()[:-20])  # 10 whole frames gone
    assert recover_wav(InProcessAdapter(), tmp_path / "session", s, 10.0) == (
        "10 durable frame(s) of the recording lost (CAP-5)")


# --- the checks --------------------------------------------------------------------------------

def _factory(argv: list[str], check: str) -> Callable[[], Adapter]:
    profile = "dsh-v0" if check.startswith("DH-") else "v1"
    return lambda: SubprocessAdapter(argv, env=dict(os.environ), profile=profile)


def _run(argv: list[str], tmp_path: Path) -> dict[str, HarnessResult]:
    results = {}
    for check in SCENARIOS:
        [result] = run_harness(_factory(argv, check), tmp_path, only={check}, profile=None,
                               states=8)
        results[check] = result
    return results


@needs_strace
@pytest.mark.parametrize("strace_path", STRACE_PATHS)
def test_reference_survives_a_power_cut_at_every_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strace_path: str
) -> None:
    use_strace_path(monkeypatch, strace_path)
    results = _run(REFERENCE, tmp_path)
    assert {c: (r.error, r.skipped, r.problems) for c, r in results.items() if not r.passed
            or r.skipped or r.error} == {}


# What each fake's report must say: the missing sync in words, and what a cut loses.
WORDS = {
    "powerloss_no_fsync": ("missing sync: ",),
    "powerloss_append_no_file_fsync": (
        "missing sync: no fsync of session/session.jsonl between the write at call",
        "crash just after the reply to append #1"),
    "powerloss_reply_before_fsync": (
        "missing sync: no fsync of session/session.jsonl between the write at call",
        "crash just after the reply to append #1"),
    "powerloss_create_no_dir_fsync": (
        "the directory session was not fsynced after session.jsonl was linked",
        "the session acknowledged as created"),
    "powerloss_fragment_no_fsync": (
        "no fsync of session/recovery/", "the torn fragment is lost"),
    "powerloss_dsh_temp_no_fsync": ("no fsync of cwd-d1bb8ca35467/s1.jsonl between the write",),
    "powerloss_asset_no_fsync": (
        "missing sync: no fsync of session/assets/protocol-", "is lost or not whole (AST-18)"),
    "powerloss_delete_no_dir_fsync": (
        "the directory .persyk-deleted was not fsynced after session was renamed to",
        "the session acknowledged as deleted"),
    "powerloss_capture_no_fsync": (
        "missing sync: no fsync of session/assets/pl-rec.wav between the write at call",
        "has no durable WAV header (CAP-1, CAP-20)"),
    "powerloss_media_no_fsync": (
        "missing sync: no fsync of session/assets/protocol-",
        "persisted before the media bytes it names (RT-7)"),
    "powerloss_recover_recording_no_fsync": (
        "missing sync: no fsync of session/assets/pl-rec.wav between the truncation at call",
        "recording.interrupted persisted while the repair of assets/pl-rec.wav it reports is "
        "not durable (CAP-7, DUR-4)",
        "the repair of assets/pl-rec.wav acknowledged at call"),
    "powerloss_dsh_dir_no_fsync": (
        "the directory cwd-d1bb8ca35467 was not fsynced after s1.jsonl was linked",
        "acknowledged record(s) 0, 1 lost"),
}


# Every fake on the way this machine traces (attached where permitted), and three of them, one
# per kind of sync (file, directory, before the reply), on the other way too: the two ways differ
# only in where the trace starts, which the reference's run on both ways and these pin down;
# twelve fakes twice over cost CI a minute and a half for nothing more.
_OTHER_WAY = ("powerloss_append_no_file_fsync", "powerloss_create_no_dir_fsync",
              "powerloss_reply_before_fsync")
_MAIN_PATH, _OTHER_PATH = (STRACE_PATHS if _attach_works() else STRACE_PATHS[::-1])


@needs_strace
@pytest.mark.parametrize(("fake", "strace_path"), [
    *(pytest.param(fake, _MAIN_PATH.values[0], marks=_MAIN_PATH.marks,
                   id=f"{fake}-{_MAIN_PATH.id}") for fake in sorted(FAKES_CAUGHT)),
    *(pytest.param(fake, _OTHER_PATH.values[0], marks=_OTHER_PATH.marks,
                   id=f"{fake}-{_OTHER_PATH.id}") for fake in _OTHER_WAY),
])
def test_each_fake_fails_exactly_the_checks_of_its_missing_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: str, strace_path: str
) -> None:
    use_strace_path(monkeypatch, strace_path)
    results = _run([sys.executable, str(FAKES / f"{fake}.py")], tmp_path)
    assert {c: r.error for c, r in results.items() if r.error or r.skipped} == {}
    assert {c for c, r in results.items() if not r.passed} == FAKES_CAUGHT[fake]
    for check in FAKES_CAUGHT[fake]:
        report = "\n".join(results[check].problems)
        for words in WORDS[fake]:
            assert words in report or not _applies(words, check), (check, words, report)


def _applies(words: str, check: str) -> bool:
    """A phrase about v1 files applies to v1 checks, one about dsh logs to dsh checks, one
    about neither to all."""
    if "session" in words:
        return check.startswith("H-")
    if "cwd-" in words or "0, 1" in words:
        return check.startswith("DH-")
    return True


def test_an_in_process_adapter_is_unsupported_with_the_reason(tmp_path: Path) -> None:
    [result] = run_harness(InProcessAdapter, tmp_path, only={"H-202"})
    assert result.skipped is not None
    assert "adapter process" in result.skipped or "strace" in result.skipped

"""The persistence model's descriptors (harness/_fsmodel.py): per process, through fork, dup,
fcntl, close and execve, checked against the path strace prints; a sync counts only for the
object it names; what the model cannot follow makes the check unverifiable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _trace_text import call, fd, hx, openat, write
from persyk_conformance.adapters._in_process import InProcessAdapter
from persyk_conformance.harness import _registry
from persyk_conformance.harness._fsmodel import FileSystemModel, Unverifiable
from persyk_conformance.harness._powerloss_run import on_the_same_file_system
from persyk_conformance.harness._trace import O_DIRECT, parse_trace
from persyk_conformance.run._outcomes import Outcome

F = "/w/s/f"
CREATE = 0x441  # O_WRONLY | O_CREAT | O_APPEND
FORK = "child_stack=NULL, flags=0x1200000|17"  # what os.fork() asks: no CLONE_FILES
THREAD = "child_stack=0x7f00, flags=0x3d0f00"  # a thread: CLONE_FILES among the flags


def _model(text: str, same_fs: tuple[str, ...] = ()) -> FileSystemModel:
    model = FileSystemModel.start("/w", {}, ["s"], same_fs)
    for op in parse_trace(text):
        model.apply(op)
    return model


def _unsynced(model: FileSystemModel) -> bool:
    """Whether s/f still has bytes that are not durable."""
    return bool(model.pending().files)


SESSION = openat(1, F, CREATE, 3) + write(1, 3, F, b"record\n")


def test_a_forked_child_that_dup2s_another_file_onto_the_number_syncs_nothing_of_ours() -> None:
    text = (SESSION + call(1, "clone", FORK, ret="2")
            + openat(2, "/tmp/decoy", 0x1, 4)
            + call(2, "dup2", fd(4, "/tmp/decoy"), fd(3, F), ret=fd(3, "/tmp/decoy"))
            + call(2, "fsync", fd(3, "/tmp/decoy")))
    assert _unsynced(_model(text))


def test_a_forked_child_that_fsyncs_the_inherited_descriptor_syncs_the_file() -> None:
    assert not _unsynced(_model(SESSION + call(1, "clone", FORK, ret="2")
                                + call(2, "fsync", fd(3, F))))


def test_a_thread_shares_the_table_both_ways() -> None:
    text = (call(1, "clone", THREAD, ret="2") + openat(2, F, CREATE, 3)
            + write(2, 3, F, b"x") + call(1, "fsync", fd(3, F)))
    assert not _unsynced(_model(text))


def test_a_child_closing_its_copy_leaves_the_parents_descriptor() -> None:
    text = (SESSION + call(1, "clone", FORK, ret="2") + call(2, "close", fd(3, F))
            + call(1, "fsync", fd(3, F)))
    assert not _unsynced(_model(text))


def test_an_open_outside_the_workspace_replaces_the_number() -> None:
    text = (SESSION + call(1, "clone", FORK, ret="2") + call(2, "close", fd(3, F))
            + openat(2, "/tmp/other", 0x1, 3) + call(2, "fsync", fd(3, "/tmp/other")))
    assert _unsynced(_model(text))


def test_execve_closes_exactly_the_close_on_exec_descriptors() -> None:
    g = "/w/s/g"
    text = (openat(1, F, CREATE | 0o2000000, 3) + write(1, 3, F, b"x")
            + openat(1, g, CREATE, 4) + write(1, 4, g, b"y")
            + call(1, "clone", FORK, ret="2") + call(2, "execve", '"\\x2f"', "[]", "0x0")
            + call(2, "fsync", fd(4, g)))
    model = _model(text)
    assert set(model.pending().files) == {model.names["s/f"]}  # g synced through the child
    assert 3 not in model.fds.tables[2] and 3 in model.fds.tables[1]


def test_fcntl_dupfd_shares_the_file_and_setfd_marks_close_on_exec() -> None:
    text = (SESSION + call(1, "fcntl", fd(3, F), "0x406", "10", ret=fd(10, F))
            + call(1, "close", fd(3, F)) + call(1, "fsync", fd(10, F)))
    model = _model(text)
    assert not _unsynced(model) and model.fds.tables[1][10].cloexec


def test_close_range_closes_the_range() -> None:
    text = SESSION + call(1, "close_range", "3", "10", "0") + openat(1, "/tmp/x", 0x1, 3)
    assert _model(text).fds.tables[1][3].description is None


@pytest.mark.parametrize(("path", "same_fs", "synced"), [
    ("/proc/1", (), False),
    ("/dev/shm", (), False),
    ("/elsewhere", ("/elsewhere",), True),
    ("/w/s", (), True),
], ids=["proc", "another-tmpfs", "another-path-on-the-same-device", "the-workspace"])
def test_syncfs_counts_only_for_the_file_system_it_names(
    path: str, same_fs: tuple[str, ...], synced: bool
) -> None:
    text = SESSION + openat(1, path, 0x90000, 5) + call(1, "syncfs", fd(5, path))
    assert _unsynced(_model(text, same_fs)) is not synced


def test_a_workspace_descriptor_the_model_does_not_hold_is_unverifiable() -> None:
    with pytest.raises(Unverifiable, match=r"^unverifiable: write at call 1: strace names "
                                           r"descriptor 3 of process 1 s/f"):
        _model(write(1, 3, F, b"x"))


UNVERIFIABLE = {
    "mmap-shared-writable": ("mmap", call(1, "mmap", "NULL", "4096", "0x3", "0x1", fd(3, F),
                                          "0", ret="0x7f0000")),
    "copy_file_range-into": ("copy_file_range", call(
        1, "copy_file_range", fd(4, "/tmp/x"), "NULL", fd(3, F), "NULL", "5", "0", ret="5")),
    "sendfile-into": ("sendfile", call(1, "sendfile", fd(3, F), fd(4, "/tmp/x"), "NULL", "5",
                                       ret="5")),
    "splice-into": ("splice", call(1, "splice", fd(4, "pipe:[1]"), "NULL", fd(3, F), "NULL",
                                   "5", "0", ret="5")),
    "fallocate": ("fallocate", call(1, "fallocate", fd(3, F), "0x3", "0", "4096")),
    "io_uring": ("io_uring_setup", call(1, "io_uring_setup", "8", "0x7ffd", ret="9")),
    "o_direct": ("openat with O_DIRECT", openat(1, F, CREATE | O_DIRECT, 6)),
    "exchange": (r"renameat2 \(RENAME_EXCHANGE\)", call(
        1, "renameat2", f'-100<{hx("/")}>', f'"{hx(F)}"', f'-100<{hx("/")}>',
        f'"{hx("/w/s/g")}"', "0x2")),
    "moved-in": ("rename at call", call(1, "rename", f'"{hx("/tmp/made")}"',
                                        f'"{hx("/w/s/new")}"')),
}


@pytest.mark.parametrize(("named", "line"), list(UNVERIFIABLE.values()), ids=list(UNVERIFIABLE))
def test_a_call_the_model_cannot_follow_on_the_workspace_is_unverifiable(
    named: str, line: str
) -> None:
    with pytest.raises(Unverifiable, match=rf"^unverifiable: {named}"):
        _model(SESSION + openat(1, "/tmp/x", 0x0, 4) + line)


def test_the_same_calls_outside_the_workspace_are_harmless() -> None:
    text = (openat(1, "/tmp/x", 0x2, 4)
            + call(1, "mmap", "NULL", "4096", "0x3", "0x1", fd(4, "/tmp/x"), "0", ret="0x7f00")
            + call(1, "sendfile", fd(4, "/tmp/x"), fd(4, "/tmp/x"), "NULL", "5", ret="5")
            + call(1, "mmap", "NULL", "4096", "0x1", "0x2", fd(4, "/tmp/x"), "0", ret="0x7f00"))
    assert _model(text).pending().files == {}


def test_the_edge_finds_which_paths_share_the_workspaces_file_system(tmp_path: Path) -> None:
    beside = tmp_path / "beside"
    beside.write_bytes(b"")
    (tmp_path / "w").mkdir()
    root = str(tmp_path / "w")
    paths = [str(beside), "/proc/self", "/proc", str(tmp_path / "gone")]
    if Path("/dev/shm").is_dir() and os.stat("/dev/shm").st_dev != os.stat(root).st_dev:
        paths.append("/dev/shm")
    assert on_the_same_file_system(root, paths) == {str(beside)}


@pytest.mark.parametrize("problem", [
    "unverifiable: mmap of session/session.jsonl at call 9 (the model cannot see ...)",
    "TRACE_TOO_LARGE: one step wrote more than the budget of 1 bytes or 1 lines of trace",
], ids=["unverifiable", "too-large"])
def test_a_check_that_could_not_judge_fails_with_that_as_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, problem: str
) -> None:
    check = _registry.check_named("H-202")
    verdict = _registry.HarnessResult(check.id, check.title, check.rules, False, (problem,))
    monkeypatch.setattr(_registry, "_run_one", lambda *args: verdict)
    [result] = _registry.harness_results(InProcessAdapter, tmp_path, ["H-202"], {}, None)
    assert (result.outcome, result.reason) == (Outcome.FAIL, problem)


def test_a_helper_started_by_vfork_and_execve_syncs_what_it_inherited() -> None:
    text = (SESSION + "1 vfork( <unfinished ...>\n"
            + call(2, "execve", f'"{hx("/usr/bin/helper")}"', "[]", "0x0")
            + "1 <... vfork resumed>) = 2\n"
            + call(2, "fsync", fd(3, F)))
    assert not _unsynced(_model(text))

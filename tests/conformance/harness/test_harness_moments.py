"""Which kill moments the crash checks explore: every distinct kind of call at its
first and last occurrence, then a seeded sample up to the budget; strace text in, points out."""

from __future__ import annotations

import pytest
from persyk_conformance.harness._moments import (
    KillPoint,
    choose_moments,
    file_role,
    kill_points,
)

# A recovery as ``strace -f -yy -o`` writes it (the reference's, shortened).
TRACE = b"""\
12547 write(1<pipe:[27126]>, "{\\"protocol\\":1}"..., 262) = 262
12547 mkdirat(5</w/s/session>, "recovery", 0777) = 0
12547 fsync(5</w/s/session>)       = 0
12547 write(7</w/s/session/recovery/.session.jsonl.0b9411175890b464.tmp>, "{}", 2) = 2
12547 fsync(7</w/s/session/recovery/.session.jsonl.0b9411175890b464.tmp>) = 0
12547 linkat(6</w/s/recovery>, ".session.jsonl.0b9411175890b464.tmp", 6</w/s/recovery>, "f", 0) = 0
12547 ftruncate(6</w/s/session/session.jsonl>, 450) = 0
[pid 12548] fsync(6</w/s/session/session.jsonl>) = 0
12547 fsync(6</w/s/session/session.jsonl>) = 0
12547 <... write resumed>) = 122
+++ exited with 0 +++
12547 write(1<pipe:[27126]>, "{\\"seq\\":1}", 122) = 122
"""


def test_kill_points_count_each_call_per_thread_and_name_its_file() -> None:
    assert kill_points(TRACE) == [
        KillPoint("write", 1, "reply"),
        KillPoint("mkdirat", 1, "recovery"),
        KillPoint("fsync", 1, "session"),
        KillPoint("write", 2, ".session.jsonl.#.tmp"),
        KillPoint("fsync", 2, ".session.jsonl.#.tmp"),
        KillPoint("linkat", 1, ".session.jsonl.#.tmp"),
        KillPoint("ftruncate", 1, "session.jsonl"),
        # Thread 12548's first fsync is the point ("fsync", 1) again: named once.
        KillPoint("fsync", 3, "session.jsonl"),
        KillPoint("write", 3, "reply"),
    ]


@pytest.mark.parametrize(
    ("syscall", "arguments", "role"),
    [
        ("write", '1<pipe:[27126]>, "{}", 2', "reply"),
        ("write", '3<socket:[9]>, "{}", 2', "reply"),
        ("pwrite64", '4</w/s/assets/harness-rec.wav>, "RIFF", 4, 4', "harness-rec.wav"),
        ("unlinkat", '6</w/s/recovery>, ".tmp.123", 0', ".tmp.#"),
        ("renameat2", '3</w/s>, "a-17.tmp", 3</w/s>, "b", 0', "a-#.tmp"),
        ("rename", '"/w/s/x.tmp", "/w/s/session.jsonl"', "x.tmp"),
        ("fsync", "5</w/s/session>", "session"),
        ("fsync", "5", "?"),
    ],
    ids=["pipe", "socket", "wav", "unlinkat-path-not-dirfd", "renameat-source", "rename",
         "directory", "no-annotation"],
)
def test_file_role_names_the_file_a_call_changes(syscall: str, arguments: str,
                                                 role: str) -> None:
    assert file_role(syscall, arguments) == role


def _kind(point: tuple[str, int]) -> str:
    return point[0]


# Twenty calls of three kinds: a at 0..9, b at 10..17, c at 18 and 19.
POINTS = [("a", n) for n in range(10)] + [("b", n) for n in range(8)] + [("c", 0), ("c", 1)]


def test_every_kind_is_killed_at_its_first_and_last_call_whatever_the_budget() -> None:
    choice = choose_moments(POINTS, _kind, budget=1, seed=7)
    assert choice.chosen == (("a", 0), ("a", 9), ("b", 0), ("b", 7), ("c", 0), ("c", 1))
    assert (choice.total, choice.kinds, choice.covering) == (20, 3, 6)


def test_the_rest_of_the_budget_is_a_seeded_sample_in_recording_order() -> None:
    choice = choose_moments(POINTS, _kind, budget=10, seed=7)
    assert len(choice.chosen) == 10
    assert set(choose_moments(POINTS, _kind, budget=1, seed=7).chosen) <= set(choice.chosen)
    assert list(choice.chosen) == sorted(choice.chosen, key=POINTS.index)
    assert choice == choose_moments(POINTS, _kind, budget=10, seed=7)
    assert choice.chosen != choose_moments(POINTS, _kind, budget=10, seed=8).chosen
    assert choice.describe() == (
        "explored 10 of 20 kill moments: the first and last of each of 3 distinct kinds of "
        "call (6), then 4 sampled, seed 7")


def test_a_budget_that_covers_every_call_explores_every_call() -> None:
    choice = choose_moments(POINTS, _kind, budget=20, seed=7)
    assert choice.chosen == tuple(POINTS)
    assert choice.describe() == "explored 20 of 20 kill moments (every one; 3 distinct kinds " \
        "of call)"

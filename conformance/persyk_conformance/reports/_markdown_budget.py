"""Markdown within a size limit: GitHub refuses a step summary over 1 MiB, so a report that
would exceed the limit is cut, and says where and how many cases it leaves out."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MARKDOWN_LIMIT", "BoundedMarkdown"]

# GitHub's limit of one step summary is 1 MiB; a report that would exceed it is cut, and says
# so where it is cut. The margin leaves room for what a CI step appends around it.
MARKDOWN_LIMIT = 1024 * 1024 - 128 * 1024


class BoundedMarkdown:
    """Markdown lines within MARKDOWN_LIMIT bytes: past it every further line is dropped, the
    cases its rows held counted, and the cut said where it happened (after closing any open
    ``<details>``)."""

    def __init__(self, limit: int) -> None:
        self.lines: list[str] = []
        self.limit = limit - 2048  # room for the cut's own lines
        self.size = 0
        self.open_details = 0
        self.dropped: set[str] = set()
        self.cut = False

    def add(self, *lines: str, ids: Iterable[str] = ()) -> None:
        size = sum(len(line.encode("utf-8")) + 1 for line in lines)
        if self.cut or self.size + size > self.limit:
            self.cut = True
            self.dropped.update(ids)
            return
        self.lines.extend(lines)
        self.size += size
        self.open_details += sum(line.startswith("<details>") for line in lines)
        self.open_details -= sum(line == "</details>" for line in lines)

    def text(self) -> str:
        lines = list(self.lines)
        if self.cut:
            lines += ["", "</details>"] * self.open_details
            count = len(self.dropped)
            lines += ["", f"**The report is cut here: {count} more case{'' if count == 1 else 's'} "
                      "would exceed GitHub's step-summary limit of 1 MiB. The JSON report "
                      "(`--report FILE`) holds every case.**"]
        return "\n".join(lines) + "\n"

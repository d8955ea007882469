"""WAV headers without I/O: what a capture writes (CAP-21) and what interrupted-WAV recovery
reads and decides (CAP-23..CAP-25).

Recovery reads only the header and derives the data size from the file size, so it costs the same
for a 1 KB and a 1 GB file (docs/spec.md, "Decision (CAP-5, CAP-8, CAP-23..CAP-25)"). The I/O
edge (``_capture``) gives :func:`parse_layout` a ``read(offset, size)`` function and carries out
the :class:`RecoveryPlan` it gets back.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .._errors import Code, ContractError, Diagnostic

__all__ = [
    "CAPTURE_CHANNELS",
    "CAPTURE_RATES",
    "DATA_SIZE_OFFSET",
    "HEADER_SIZE",
    "PLACEHOLDER",
    "RIFF_SIZE_OFFSET",
    "RecoveryPlan",
    "WavLayout",
    "capture_header",
    "duration_ms",
    "parse_layout",
    "plan_recovery",
]

# CAP-21: what a capture writes.
CAPTURE_RATES: Final = frozenset({8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000})
CAPTURE_CHANNELS: Final = frozenset({1, 2})
HEADER_SIZE: Final = 44
RIFF_SIZE_OFFSET: Final = 4
DATA_SIZE_OFFSET: Final = 40
# CAP-8: the placeholder a writer leaves in both size fields until it finishes.
PLACEHOLDER: Final = 0xFFFFFFFF

# CAP-23: the formats recovery accepts (PCM, IEEE float, WAVE_FORMAT_EXTENSIBLE).
_FORMATS: Final = frozenset({0x0001, 0x0003, 0xFFFE})
_FMT_SIZES: Final = frozenset({16, 18, 40})
# A chunk walk never reads more than this many chunks before `data` (a bound, not a format
# rule: a file with more is not one a capture wrote, and recovery stays header-proportional).
_MAX_CHUNKS: Final = 64


def capture_header(
    rate: int, channels: int, *, data_size: int = PLACEHOLDER, riff_size: int = PLACEHOLDER
) -> bytes:
    """The 44-byte header of a 16-bit PCM capture (CAP-21), placeholders unless sizes are given."""
    block_align = 2 * channels
    return b"".join((
        b"RIFF", struct.pack("<I", riff_size), b"WAVE",
        b"fmt ", struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * block_align,
                             block_align, 16),
        b"data", struct.pack("<I", data_size),
    ))


def duration_ms(frames: int, rate: int) -> int:
    """CAP-22, CAP-26: whole milliseconds of ``frames`` at ``rate``, rounded down."""
    return frames * 1000 // rate


@dataclass(frozen=True, slots=True)
class WavLayout:
    """What recovery needs from a header: the frame size, the rate, and where `data` sits."""

    format_tag: int
    channels: int
    rate: int
    block_align: int
    bits_per_sample: int
    riff_size: int
    data_header_offset: int  # offset of the `data` chunk id
    declared_data_size: int

    @property
    def data_offset(self) -> int:
        """Offset of the first sample byte."""
        return self.data_header_offset + 8

    @property
    def data_size_field(self) -> int:
        return self.data_header_offset + 4


def _unrecoverable(detail: str) -> ContractError:
    return ContractError([Diagnostic(Code.WAV_UNRECOVERABLE, detail=detail)])


def parse_layout(read: Callable[[int, int], bytes], file_size: int) -> WavLayout:
    """Walk the chunks from the RIFF header to the `data` header (CAP-23).

    ``read(offset, size)`` returns at most ``size`` bytes at ``offset`` (fewer at the end of the
    file). Raises ContractError(WAV_UNRECOVERABLE) for anything that is not a RIFF/WAVE file with
    a complete, supported `fmt ` chunk before a complete `data` header.
    """
    head = read(0, 12)
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise _unrecoverable("the file is not a complete RIFF/WAVE header")
    riff_size = struct.unpack_from("<I", head, 4)[0]
    offset = 12
    fmt: tuple[int, int, int, int, int] | None = None
    for _ in range(_MAX_CHUNKS):
        chunk = read(offset, 8)
        if len(chunk) < 8:
            raise _unrecoverable("the file ends before a complete data chunk header")
        chunk_id, size = chunk[:4], struct.unpack_from("<I", chunk, 4)[0]
        if chunk_id == b"data":
            if fmt is None:
                raise _unrecoverable("the data chunk comes before a fmt chunk")
            format_tag, channels, rate, block_align, bits = fmt
            return WavLayout(format_tag, channels, rate, block_align, bits, riff_size,
                             offset, size)
        body_end = offset + 8 + size
        if body_end > file_size:
            raise _unrecoverable("a chunk before the data chunk ends beyond the file")
        if chunk_id == b"fmt ":
            fmt = _parse_fmt(read(offset + 8, size), size)
        offset = body_end + (size & 1)  # RIFF chunks are padded to an even size
    raise _unrecoverable("too many chunks before the data chunk")


def _parse_fmt(body: bytes, size: int) -> tuple[int, int, int, int, int]:
    if size not in _FMT_SIZES or len(body) < size:
        raise _unrecoverable("the fmt chunk has an unsupported size")
    format_tag, channels, rate, _byte_rate, block_align, bits = struct.unpack_from(
        "<HHIIHH", body)
    if format_tag not in _FORMATS:
        raise _unrecoverable("the fmt chunk names an unsupported format")
    if block_align == 0 or channels == 0 or rate == 0:
        raise _unrecoverable("the fmt chunk has a zero block alignment, channel count or rate")
    return format_tag, channels, rate, block_align, bits


@dataclass(frozen=True, slots=True)
class RecoveryPlan:
    """The writes that make a WAV's sizes true (CAP-24, CAP-25), in the order they are made:
    cut the file to ``truncate_to`` (when set), append a pad byte (when ``pad``), write
    ``data_size`` and ``riff_size`` into their fields."""

    frames: int
    data_size: int
    riff_size: int
    truncate_to: int | None
    pad: bool
    rewrite_data_size: bool
    rewrite_riff_size: bool

    @property
    def changes(self) -> bool:
        return (self.truncate_to is not None or self.pad or self.rewrite_data_size
                or self.rewrite_riff_size)


def is_placeholder(declared: int, available: int) -> bool:
    """CAP-24: 0xFFFFFFFF, 0, or more bytes than the file holds after the data header."""
    return declared in (PLACEHOLDER, 0) or declared > available


def plan_recovery(layout: WavLayout, file_size: int) -> RecoveryPlan:
    """Decide the repair of a WAV whose header is ``layout`` and whose size is ``file_size``."""
    available = file_size - layout.data_offset
    declared = layout.declared_data_size
    if is_placeholder(declared, available):
        # Every whole frame up to the end of the file; a partial last frame is dropped.
        data_size = available - available % layout.block_align
        end = layout.data_offset + data_size
        truncate_to = end if end != file_size else None
        new_size = end
    else:
        # A declared size that fits is a finished writer's claim: kept, bytes after it left.
        data_size = declared
        end = layout.data_offset + data_size
        truncate_to = None
        new_size = file_size
    pad = data_size % 2 == 1 and new_size == end
    if pad:
        new_size += 1
    riff_size = new_size - 8
    return RecoveryPlan(
        frames=data_size // layout.block_align,
        data_size=data_size,
        riff_size=riff_size,
        truncate_to=truncate_to,
        pad=pad,
        rewrite_data_size=declared != data_size,
        rewrite_riff_size=layout.riff_size != riff_size,
    )

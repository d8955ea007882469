"""Trace lines as ``strace -X raw -xx -yy`` writes them, built from readable parts: shared by
the trace parser's and the trace model's tests."""

from __future__ import annotations


def hx(data: bytes | str) -> str:
    """Every byte as ``\\xNN`` (strace -xx)."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    return "".join(f"\\x{b:02x}" for b in raw)


def fd(number: int, path: bytes | str, deleted: bool = False) -> str:
    """A descriptor with its -yy path: ``3<\\x2f...>``."""
    return f"{number}<{hx(path)}>" + ("(deleted)" if deleted else "")


def openat(pid: int, path: bytes | str, flags: int, ret: int) -> str:
    return (f'{pid} openat(-100<{hx("/")}>, "{hx(path)}", {flags:#x}, 0644) = '
            f"{fd(ret, path)}\n")


def write(pid: int, number: int, path: bytes | str, data: bytes) -> str:
    return f'{pid} write({fd(number, path)}, "{hx(data)}", {len(data)}) = {len(data)}\n'


def call(pid: int, name: str, *args: str, ret: str = "0") -> str:
    return f"{pid} {name}({', '.join(args)}) = {ret}\n"

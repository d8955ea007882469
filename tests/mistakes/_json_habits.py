"""Mistakes of JSON libraries, grouped by the language whose library has the habit.

Each is the default (or a commonly switched-on option) of a real library: Go's encoding/json
and bufio, Jackson, JSON.parse, serde_json, Python's json. The layer gives the reference the
view of the file that library would have (``_model.viewing``)."""

from __future__ import annotations

import re
from typing import Any

from ._model import Mistake, on_lines, viewing
from ._text import inside_strings, outside_strings, substitute
from ._tree import (
    FREE_MEMBERS,
    Num,
    Obj,
    depth_of,
    last_wins,
    map_members,
    map_objects,
    map_scalars,
    through_tree,
)

# The member names of schemas/v1 (and the header's): what a struct of a typed decoder has.
KNOWN_NAMES: frozenset[str] = frozenset({
    "api", "archived", "arguments", "asset", "byteRange", "connectionId", "content",
    "customType", "data", "details", "direction", "display", "durationMs", "encoding", "end",
    "endMs", "endpoint", "errorMessage", "gaps", "id", "isError", "label", "media", "message",
    "mimeType", "model", "modelId", "name", "observation", "observedAt", "originId", "outcome",
    "parentId", "path", "payload", "pointer", "provider", "reason", "recordingId", "redacted",
    "redactions", "remoteEventId", "replay", "requestedModel", "responseId", "role", "sequence",
    "sha256", "source", "start", "startMs", "status", "stopReason", "targetId", "text",
    "textSignature", "thinking", "thinkingSignature", "thoughtSignature", "timestamp",
    "toolCallId", "toolName", "type", "usage", "version",
})
_BY_FOLDED: dict[str, str] = {name.lower(): name for name in KNOWN_NAMES}
# The string constants of schemas/v1 (entry, block and role names, statuses, directions).
KNOWN_VALUES: frozenset[str] = frozenset({
    "api_connection", "assistant", "audio", "available", "complete", "custom", "custom_message",
    "image", "incoming", "incomplete", "label", "message", "message.removed", "missing",
    "model_change", "outgoing", "realtime_event", "received", "recording.finished",
    "recording.interrupted", "recording.started", "send_attempt", "send_failed", "session",
    "session_info", "text", "thinking", "toolCall", "toolResult", "user",
})
_VALUE_BY_FOLDED: dict[str, str] = {value.lower(): value for value in KNOWN_VALUES}
_ENUM_MEMBERS: frozenset[str] = frozenset(
    {"type", "role", "status", "direction", "observation", "outcome"})
# Members that may be null (schemas/v1 NullableId: parentId, originId; ENT-6 label; ENT-3 data).
_NULLABLE: frozenset[str] = frozenset({"parentId", "originId", "label", "data"})
# Integer members of schemas/v1 (MSG-5 EpochMs, HDR-4 version, durations, byte ranges).
INTEGER_MEMBERS: frozenset[str] = frozenset(
    {"version", "timestamp", "durationMs", "start", "end", "startMs", "endMs", "sequence"})
LIMIT = 1_048_576  # REC-11
TOO_LARGE = b"{" + b" " * LIMIT + b"}"  # a line every reader refuses with RECORD_TOO_LARGE
SYNTAX_ERROR = b"{]"


def _fold_names(obj: Obj, depth: int) -> Obj:
    renamed = [(_BY_FOLDED.get(k.lower(), k), v) for k, v in obj.pairs]
    if renamed == obj.pairs:
        return obj
    # Go: both spellings land in the one field, the later one wins.
    folded = {k for k, _ in obj.pairs if _BY_FOLDED.get(k.lower(), k) != k}
    targets = {_BY_FOLDED[k.lower()] for k in folded}
    kept = [(k, v) for k, v in renamed if k not in targets]
    chosen = {k: v for k, v in renamed if k in targets}
    return Obj(kept + list(chosen.items()))


KNOWN_BLOCKS: frozenset[str] = frozenset({"text", "image", "thinking", "toolCall", "audio"})


def _typed(change: Any, *, top: bool, nested: bool) -> Any:
    """``change(obj)`` on the objects a typed decoder has structs for: the record itself
    (``top``) and under it (``nested``) the message, known blocks and asset references; never
    inside free members or unknown blocks."""

    def clean(obj: Obj, apply: bool) -> Obj:
        pairs = []
        for key, value in (change(obj) if apply else obj).pairs:
            if key == "message" and isinstance(value, Obj):
                value = clean(value, nested)
            elif key == "content" and isinstance(value, list):
                value = [clean(block, nested) if isinstance(block, Obj)
                         and block.get("type") in KNOWN_BLOCKS else block for block in value]
            elif key == "asset" and isinstance(value, Obj):
                value = clean(value, nested)
            pairs.append((key, value))
        return Obj(pairs)

    return lambda tree: clean(tree, top) if isinstance(tree, Obj) else tree


def _drop_unknown(*, top: bool, nested: bool) -> Any:
    """Members no struct field names dropped."""
    return _typed(lambda obj: Obj([(k, v) for k, v in obj.pairs if k in KNOWN_NAMES]),
                  top=top, nested=nested)


def _replace_invalid_utf8(line: bytes) -> bytes:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("utf-8", "replace").encode("utf-8")
    return line


def _longer_than(limit: int) -> Any:
    return lambda line: TOO_LARGE if len(line) > limit else line


def _as_double(value: Any) -> Any:
    # Over 309 digits no double holds it (REC-8 refuses it anyway); int() would refuse 4300.
    if isinstance(value, Num) and re.fullmatch(r"-?[0-9]{1,400}", value):
        exact = int(value)
        if abs(exact) <= 1.7976931348623157e308:
            rounded = int(float(exact))
            if rounded != exact:
                return Num(str(rounded))
    return value


def _overflow_to_max(value: Any) -> Any:
    if isinstance(value, Num) and value not in ("NaN", "Infinity", "-Infinity"):
        try:
            number = float(value)
        except (ValueError, OverflowError):
            return value
        if number in (float("inf"), float("-inf")):
            return Num("-1.7976931348623157e308" if value.startswith("-") else
                       "1.7976931348623157e308")
    return value


def _cap_depth(limit: int) -> Any:
    def walk(value: Any, depth: int) -> Any:
        if isinstance(value, Obj | list) and depth > limit:
            return None
        if isinstance(value, Obj):
            return Obj([(k, walk(v, depth + 1)) for k, v in value.pairs])
        if isinstance(value, list):
            return [walk(item, depth + 1) for item in value]
        return value

    return lambda tree: walk(tree, 1)


def _one_deeper_at(limit: int) -> Any:
    """A record exactly ``limit`` deep gets one more container (so the reference refuses it)."""

    def walk(value: Any, depth: int) -> Any:
        if isinstance(value, Obj):
            return Obj([(k, walk(v, depth + 1)) for k, v in value.pairs])
        if isinstance(value, list):
            if depth == limit:
                return [value]
            return [walk(item, depth + 1) for item in value]
        return value

    return lambda tree: walk(tree, 1) if depth_of(tree) == limit else tree


def _escape_controls(piece: bytes) -> bytes:
    return re.sub(rb"[\x00-\x1f]", lambda m: b"\\u%04x" % m.group(0)[0], piece)


def _fold_enum_values(name: str, value: Any) -> Any:
    if name in _ENUM_MEMBERS and isinstance(value, str) and not isinstance(value, Num):
        return _VALUE_BY_FOLDED.get(value.lower(), value)
    return value


_LONE = re.compile("[\ud800-\udfff]")


def _no_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str) and not isinstance(value, Num):
        return _LONE.sub("\ufffd", value)
    return value


def _utf16_length(line: bytes) -> bytes:
    if len(line) <= LIMIT:
        return line
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return line
    if len(text.encode("utf-16-le")) // 2 > LIMIT:
        return line
    return re.sub(r"[^\x00-\x7f]", "x", text).encode("ascii")


def _split_on(separators: str) -> Any:
    pattern = re.compile(separators)

    def view(data: bytes) -> bytes:
        text = data.decode("utf-8", "surrogateescape")
        return pattern.sub("\n", text).encode("utf-8", "surrogateescape")

    return view


def _drop_nulls(obj: Obj) -> Obj:
    """A null in a member the struct knows reads as absent (an unknown one stays refused)."""
    return Obj([(k, v) for k, v in obj.pairs
                if v is not None or k in _NULLABLE or k in FREE_MEMBERS or k not in KNOWN_NAMES])


def _integral_float_refused(name: str, value: Any) -> Any:
    if name in INTEGER_MEMBERS and isinstance(value, Num) and re.search(r"[.eE]", value):
        try:
            if float(value).is_integer():
                return Num("1.5")
        except (ValueError, OverflowError):
            return value
    return value


def _last_wins_in_free(obj: Obj, depth: int) -> Obj:
    return Obj([(k, map_objects(lambda o, d: last_wins(o), free=True)(v)
                 if k in FREE_MEMBERS else v) for k, v in obj.pairs])


def _terminate(data: bytes) -> bytes:
    return data + b"\n" if data and not data.endswith(b"\n") else data


def _huge_integer_refused(line: bytes) -> bytes:
    return SYNTAX_ERROR if re.search(rb"(?<![0-9.eE])-?[0-9]{4301,}", line) else line


def _bom_at_start_dropped(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def _strip_unicode_space(line: bytes) -> bytes:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return line
    return text.strip().encode("utf-8")


def _universal_newlines(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _tree(change: Any) -> Any:
    return viewing(on_lines(through_tree(change)))


def _bytes(change: Any) -> Any:
    return viewing(on_lines(change))


DOUBLES_ALLOWED = ("docs/spec.md, the REC-9 decision: a double-based reader keeps the nearest "
                   "double, and the matcher takes an integer beyond 2^53 as equal to every "
                   "number that rounds to the same double (contract 1.9.0)")
LAST_WINS = map_objects(lambda obj, depth: last_wins(obj), free=True)
AS_DOUBLE = map_scalars(_as_double)

MISTAKES: tuple[Mistake, ...] = (
    # Go: encoding/json into structs, bufio.
    Mistake("go-case-insensitive-names", "Go",
            "member names matched case-insensitively, as encoding/json does into structs: "
            '{"Type":"message"} is read as type', _tree(map_objects(_fold_names)),
            breaks=("ENV-3", "HDR-3")),
    Mistake("go-unknown-members-ignored", "Go",
            "members a struct has no field for are dropped (no DisallowUnknownFields)",
            _tree(_drop_unknown(top=True, nested=True)), breaks=("ENV-3", "HDR-3", "BLK-9")),
    Mistake("go-invalid-utf8-replaced", "Go",
            "invalid UTF-8 inside strings becomes U+FFFD, as encoding/json does",
            _bytes(_replace_invalid_utf8), breaks=("REC-2",)),
    Mistake("go-scanner-64k-line-limit", "Go",
            "bufio.Scanner's default 64 KiB token limit: a longer record cannot be read",
            _bytes(_longer_than(65_536)), breaks=("REC-11",)),
    Mistake("go-reader-1mib-buffer-with-lf", "Go",
            "bufio.NewReaderSize(f, 1<<20) with ReadSlice: the LF counts, so a record of "
            "exactly 1,048,576 bytes does not fit", _bytes(_longer_than(LIMIT - 1)),
            breaks=("REC-11",)),
    Mistake("go-duplicate-last-wins", "Go",
            "duplicate member names accepted, the last one wins (encoding/json)",
            _tree(LAST_WINS), breaks=("REC-7",)),
    # Java: Jackson defaults and common feature switches.
    Mistake("java-jackson-last-duplicate-wins", "Java",
            "duplicate members accepted, the last wins (STRICT_DUPLICATE_DETECTION off)",
            _tree(LAST_WINS), breaks=("REC-7",)),
    Mistake("java-numbers-as-double", "Java",
            "every number read as a double: 9007199254740993 becomes 9007199254740992",
            _tree(AS_DOUBLE), allowed=DOUBLES_ALLOWED),
    Mistake("java-overflow-to-infinity", "Java",
            "1e400 read as Infinity and accepted", _tree(map_scalars(_overflow_to_max)),
            breaks=("REC-8",)),
    Mistake("java-depth-limit-1000", "Java",
            "nesting limited only by StreamReadConstraints (1000), not 128",
            _tree(_cap_depth(128)), breaks=("REC-12",)),
    Mistake("java-allow-comments", "Java", "ALLOW_COMMENTS: /* */ and // comments accepted",
            _bytes(outside_strings(substitute(rb"/\*.*?\*/|//.*$", b""))), breaks=("REC-3",)),
    Mistake("java-allow-trailing-comma", "Java",
            "ALLOW_TRAILING_COMMA: [1,] and {\"a\":1,} accepted",
            _bytes(outside_strings(substitute(rb",(\s*[\]}])", rb"\1"))), breaks=("REC-3",)),
    Mistake("java-allow-leading-zeros", "Java",
            "ALLOW_LEADING_ZEROS_FOR_NUMBERS: 007 read as 7",
            _bytes(outside_strings(substitute(rb"(?<![0-9.eE+\-])(-?)0+([0-9])", rb"\1\2"))),
            breaks=("REC-3",)),
    Mistake("java-unquoted-control-chars", "Java",
            "ALLOW_UNQUOTED_CONTROL_CHARS: a raw tab or LF-free control byte inside a string",
            _bytes(inside_strings(_escape_controls)), breaks=("REC-3",)),
    Mistake("java-case-insensitive-enums", "Java",
            "ACCEPT_CASE_INSENSITIVE_ENUMS: \"Message\", \"User\", \"Text\" read as the known "
            "values", _tree(map_members(_fold_enum_values)),
            breaks=("ENV-2", "MSG-1", "BLK-10")),
    Mistake("java-readline-cr", "Java",
            "BufferedReader.readLine: a lone CR ends a line, as CRLF and LF do",
            viewing(_universal_newlines), breaks=("REC-1", "REC-18")),
    # JavaScript: JSON.parse and string habits.
    Mistake("js-json-parse-last-duplicate-wins", "JavaScript",
            "JSON.parse keeps the last of duplicate members", _tree(LAST_WINS),
            breaks=("REC-7",)),
    Mistake("js-float64-integers", "JavaScript",
            "numbers are float64: integers beyond 2^53 come back rounded", _tree(AS_DOUBLE),
            allowed=DOUBLES_ALLOWED),
    Mistake("js-lone-surrogates-accepted", "JavaScript",
            "JSON.parse accepts an escaped lone surrogate", _tree(map_scalars(
                _no_lone_surrogates)), breaks=("REC-5",)),
    Mistake("js-length-in-utf16-units", "JavaScript",
            "the record limit counted with string.length (UTF-16 code units), not bytes",
            _bytes(_utf16_length), breaks=("REC-11",)),
    Mistake("js-split-on-u2028", "JavaScript",
            "lines split with /\\r?\\n|\\r|\\u2028|\\u2029/", viewing(
                _split_on("\r\n|\r|\u2028|\u2029")), breaks=("REC-1",)),
    # Rust: serde and std habits.
    Mistake("rust-serde-flatten-unknown-nested", "Rust",
            "deny_unknown_fields lost under #[serde(flatten)]: unknown members inside "
            "messages, blocks and asset references ignored",
            _tree(_drop_unknown(top=False, nested=True)),
            breaks=("MSG-2", "BLK-9", "AST-2")),
    Mistake("rust-serde-null-as-absent", "Rust",
            "Option<T> fields take null as absent: {\"name\":null} accepted",
            _tree(_typed(_drop_nulls, top=True, nested=True)), breaks=("ENT-5", "ENT-19")),
    Mistake("rust-serde-integral-float-refused", "Rust",
            "integer members as u64: 1767225601000.0 refused", _tree(map_members(
                _integral_float_refused)), breaks=("MSG-5",)),
    Mistake("rust-serde-duplicates-in-struct-fields-only", "Rust",
            "derive(Deserialize) refuses duplicate fields, but serde_json::Value maps (free "
            "members) keep the last", _tree(map_objects(_last_wins_in_free)),
            breaks=("REC-7",)),
    Mistake("rust-lines-unterminated-accepted", "Rust",
            "BufRead::lines yields the last line without an LF as a record",
            viewing(_terminate), breaks=("REC-16",)),
    Mistake("rust-serde-recursion-limit-128", "Rust",
            "serde_json's recursion limit: a record exactly 128 deep refused",
            _tree(_one_deeper_at(128)), breaks=("REC-12",)),
    # Python: json and str habits.
    Mistake("py-json-nan-infinity", "Python",
            "json.loads accepts NaN, Infinity and -Infinity",
            _bytes(outside_strings(substitute(rb"-?\b(?:NaN|Infinity)\b", b"0"))),
            breaks=("REC-3",)),
    Mistake("py-int-max-str-digits", "Python",
            "int() refuses more than 4300 digits (sys.int_info): a long integer is refused",
            _bytes(_huge_integer_refused), breaks=("REC-9",)),
    Mistake("py-splitlines", "Python",
            "str.splitlines(): \\x0b, \\x0c, \\x1c-\\x1e, \\x85, U+2028, U+2029 end lines too",
            viewing(_split_on("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")),
            breaks=("REC-1",)),
    Mistake("py-utf8-sig", "Python", "the file opened with encoding='utf-8-sig': a byte order "
            "mark at the start is dropped", viewing(_bom_at_start_dropped),
            breaks=("REC-13",)),
    Mistake("py-strip-each-line", "Python",
            "line.strip() before json.loads: Unicode spaces (\\x0c, U+00A0, U+3000) around a "
            "record are dropped", _bytes(_strip_unicode_space), breaks=("REC-3", "REC-18")),
    Mistake("py-universal-newlines", "Python",
            "open(path) in text mode: a lone CR ends a line (universal newlines)",
            viewing(_universal_newlines), breaks=("REC-1", "REC-18")),
)

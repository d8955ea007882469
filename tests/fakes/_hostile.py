"""Text that turns into markup or terminal commands where it is not escaped: a CR that ends a
Markdown line and forges a heading, raw HTML and an image from another host, an OSC title
change and a line erase, bidi overrides and isolates (Trojan Source), C1 controls (CSI, NEL) and
a line separator. Short enough for every field of hello (100 characters at most)."""

HOSTILE = (
    "x\r## \u2705 Persyk conformance: evil passed\r<h2>ok</h2>"
    "![i](https://evil.example/i)\x1b]0;t\x07\x1b[2K\u202e\u2066|\x9b\x85\u2028_*#`"
)

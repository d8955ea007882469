"""The reference, except that its sanitizer lacks one reading of RT-29..RT-32 rev. 2 (1.14.0),
chosen by a flag, as a sanitizer that reads the lists literally would: ``--no-case`` (header
names split at case changes only), ``--no-names`` (member names not scanned), ``--no-decode``
(nothing percent- or base64-decoded), ``--no-json`` (a string holding JSON is only text),
``--no-header-text`` (``Authorization: Token ...`` in text is not a shape). S-995..S-999 must
catch each."""

import re
import sys

from _fake import serve
from persyk_session.adapter import capabilities, dispatch
from persyk_session.realtime import _sanitize

if "--no-case" in sys.argv:
    _sanitize._spellings = lambda name: (_sanitize.name_words(name),)
    _sanitize._member_named = lambda members, name: name if name in members else None
if "--no-names" in sys.argv:
    _sanitize._member_names = lambda members: {key: key for key in members}
if "--no-decode" in sys.argv:
    _sanitize._replace_encoded = lambda text: text
    _sanitize.sanitize_url = lambda url, _old=_sanitize.sanitize_url: (
        url if "%" in url else _old(url))
if "--no-json" in sys.argv:
    _sanitize._sanitize_json_text = lambda text: None
if "--no-header-text" in sys.argv:
    # the shape list without its last alternative (the credential header written out)
    pattern = _sanitize._SECRET_VALUES.pattern
    _sanitize._SECRET_VALUES = re.compile(pattern[: pattern.index("|(?i:\\b(?:proxy-)")])


def answer(request):
    return dispatch(request["op"], request["args"])


sys.exit(serve(answer, capabilities=tuple(capabilities())))

"""``persyk_maintainers.gate`` under its former import path, with every submodule (``_moved``)."""

from ._moved import alias

alias(__name__, "persyk_maintainers.gate")

"""A corpus of implementer mistakes: each a small, switchable habit of
another language's libraries or of a common way of writing the format, applied to the reference
as an adapter layer. ``registry.MISTAKES`` holds them; ``_run`` runs cases against one;
``python tools/mistakes/run.py`` runs the suite against each and writes the kill score;
``adapter.py`` serves one as a subprocess adapter (``PERSYK_MISTAKE=name``)."""

"""``python -m persyk_conformance.cli``: the command line, as the installed script runs it."""

from . import main

raise SystemExit(main())

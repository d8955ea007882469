"""The ``persyk-conformance`` commands of maintainers and publishers (diff, release, bench,
compare, site): ``persyk_conformance.cli._commands`` names each module here, and the command line
imports only the chosen one."""

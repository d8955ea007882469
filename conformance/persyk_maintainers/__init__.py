"""What the project's maintainers and publishers run, beside the runner an implementer installs:
the contract gate (``gate``: contract diff, release archives, package checks), the static site of
run reports (``site``), the benchmarks (``bench``), and the ``persyk-conformance`` commands that
drive them (``cli``: diff, release, bench, compare, site).

It imports the runner (``persyk_conformance``); the runner never imports it, and names its
commands in its command table only (tests/repo/test_layers.py). ``persyk_conformance.gate``,
``.site`` and ``.bench`` stay as aliases of the moved packages.
"""

__all__: list[str] = []

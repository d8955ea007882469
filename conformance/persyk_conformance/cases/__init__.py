"""The conformance cases as data: loading and validating manifests, ``--only``/``--skip``
selectors, workspace paths of steps, the expectation language (``_match``), what a report says
about a case, and the fixture sanity check.
"""

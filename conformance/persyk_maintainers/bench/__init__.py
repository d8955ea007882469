"""``persyk-conformance bench``: seeded workloads through the adapter protocol, floors measured in
the same run, reports, plots and ``bench compare`` (docs/maintainers/performance.md).
"""

"""``persyk-conformance fuzz``: differential fuzzing against the reference, with the hypothesis
strategies behind the public ``persyk_conformance.strategies`` (docs/implementers/strategies.md).
"""

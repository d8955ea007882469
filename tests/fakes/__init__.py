"""Fake adapters (one script each) and a tiny case tree for the runner's self-tests."""

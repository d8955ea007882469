"""Settings of the project's own test session."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    # Under `pytest -n N` (pytest-xdist) the tests are spread by --dist loadgroup instead of
    # load: a module marked xdist_group (wheel builds, whole runs in a module fixture) stays on
    # one worker, so the other does not build or run the same things again. Set here rather
    # than in addopts, so that `-p no:xdist` and a pytest without xdist still start.
    option = config.option
    if getattr(option, "numprocesses", None) and getattr(option, "dist", "no") == "no":
        option.dist = "loadgroup"

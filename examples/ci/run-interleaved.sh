#!/usr/bin/env bash
# run-interleaved.sh BASE_DIR HEAD_DIR PAIRS OUTDIR -- COMMAND [ARG...]
#
# The relative mode of the CI recipe (examples/ci/README.md, "Relative mode"): run one
# benchmark command in two checkouts, interleaved, on the same GPU in the same job:
#
#   base 1, head 1, base 2, head 2, ... (PAIRS pairs)
#
# Each run happens in its checkout's directory with "--json-out OUTDIR/<side>-<i>.json"
# appended to COMMAND, so it writes OUTDIR/base-1.json, OUTDIR/head-1.json, ...; any file of
# that name is deleted first, so a run that fails never leaves an older file to be pooled.
# When a checkout has a virtual environment in CHECKOUT/.venv, its bin/ comes first on PATH
# for that checkout's runs: each side runs its own installed code (and its own primbench).
#
# Branch and commit: every run gets PRIMBENCH_BRANCH (BASE_BRANCH or HEAD_BRANCH from the
# environment, else "base" / "head") and PRIMBENCH_COMMIT (`git rev-parse HEAD` in its
# checkout, else "unknown"), which primbench prefers to the CI's variables: without them both
# sides would be labelled with the pull request's branch and commit.
#
# Exit status: 0 when every run succeeded. A failing run does not stop the others (as in the
# artifact mode's "Run benchmarks" step); the script then exits with the last non-zero status.
# An interrupted run (130) stops at once with 130. Bad usage: 2.
#
# Example (from the workflow examples/ci/benchmarks-relative.yml):
#   run-interleaved.sh base head 2 runs/copy_benchmark -- primbench run examples/copy_benchmark.py --output-batches
set -u -o pipefail

usage() {
    echo "usage: run-interleaved.sh BASE_DIR HEAD_DIR PAIRS OUTDIR -- COMMAND [ARG...]" >&2
    [ $# -gt 0 ] && echo "run-interleaved.sh: error: $*" >&2
    exit 2
}

[ $# -ge 6 ] || usage "expected BASE_DIR HEAD_DIR PAIRS OUTDIR -- COMMAND"
base_dir=$1 head_dir=$2 pairs=$3 out_dir=$4
[ "$5" = "--" ] || usage "expected -- after OUTDIR, got '$5'"
shift 5

case $pairs in
    '' | *[!0-9]*) usage "PAIRS must be a positive whole number, got '$pairs'" ;;
esac
[ "$pairs" -ge 1 ] || usage "PAIRS must be at least 1, got '$pairs'"
for dir in "$base_dir" "$head_dir"; do
    [ -d "$dir" ] || usage "no such checkout: $dir"
done

base_dir=$(cd "$base_dir" && pwd)
head_dir=$(cd "$head_dir" && pwd)
mkdir -p "$out_dir" || usage "cannot create $out_dir"
out_dir=$(cd "$out_dir" && pwd)

commit_of() {
    git -C "$1" rev-parse HEAD 2>/dev/null || echo unknown
}
base_commit=$(commit_of "$base_dir")
head_commit=$(commit_of "$head_dir")

status=0
total=$((2 * pairs))
n=0
for i in $(seq 1 "$pairs"); do
    for side in base head; do
        n=$((n + 1))
        if [ "$side" = base ]; then
            dir=$base_dir branch=${BASE_BRANCH:-base} commit=$base_commit
        else
            dir=$head_dir branch=${HEAD_BRANCH:-head} commit=$head_commit
        fi
        out="$out_dir/$side-$i.json"
        rm -f "$out"
        path=$PATH
        [ -d "$dir/.venv/bin" ] && path="$dir/.venv/bin:$PATH"
        echo "run-interleaved: [$n/$total] $side $i of $pairs in $dir: $* --json-out $out"
        code=0
        (cd "$dir" && PATH=$path PRIMBENCH_BRANCH=$branch PRIMBENCH_COMMIT=$commit "$@" --json-out "$out") || code=$?
        if [ "$code" -ne 0 ]; then
            echo "run-interleaved: [$n/$total] $side $i failed with exit $code" >&2
            [ "$code" -eq 130 ] && exit 130
            status=$code
        fi
    done
done
exit "$status"

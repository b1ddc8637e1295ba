#!/bin/bash
# The issue-28b check: main at cd87fcb (BASE, a `git archive` of it) against this checkout (HEAD):
# `regressions -f json` and the report's HTML (but for its "Generated" time) on the stores in WORK.
# Run: BASE=/tmp/hs28b/base HEAD_ROOT=$PWD WORK=/tmp/hs28b STORES="s1k s10k" same_output.sh
: "${BASE:?}" "${HEAD_ROOT:?}" "${WORK:?}"
mkdir -p "$WORK/cmp" && cd "$WORK/cmp"
run() { local root=$1; shift; (cd "$root" && PYTHONPATH="$root" python -c "from primbench.cli import main; main()" "$@"); }
for s in ${STORES:-s1k s10k}; do
  for args in "-b main" "-b main -m time" "-b feat-0 --last 5"; do
    tag=$(echo "$s $args" | tr ' ' '_')
    run "$BASE" history regressions --db "$WORK/$s.duckdb" $args -f json > old-$tag.json
    run "$HEAD_ROOT" history regressions --db "$WORK/$s.duckdb" $args -f json > new-$tag.json
    if cmp -s old-$tag.json new-$tag.json; then echo "SAME regressions $s $args ($(wc -c < new-$tag.json) bytes)"
    elif tail -c "$(wc -c < new-$tag.json)" old-$tag.json | cmp -s - new-$tag.json; then  # main: DuckDB's bar first
      echo "SAME regressions $s $args ($(wc -c < new-$tag.json) bytes; main wrote $(( $(wc -c < old-$tag.json) - $(wc -c < new-$tag.json) )) bytes of DuckDB's progress bar before them)"
    else echo "DIFF regressions $s $args"; fi
  done
  for args in "-b main" "-b feat-0" "-b main --last 100 -m time"; do
    tag=$(echo "$s $args" | tr ' ' '_')
    run "$BASE" history report --db "$WORK/$s.duckdb" $args --no-git -o "$WORK"/cmp/old-$tag.html > /dev/null
    run "$HEAD_ROOT" history report --db "$WORK/$s.duckdb" $args --no-git -o "$WORK"/cmp/new-$tag.html > /dev/null
    diff -q <(sed 's/Generated [^.]*UTC\././' old-$tag.html) <(sed 's/Generated [^.]*UTC\././' new-$tag.html) > /dev/null && echo "SAME report $s $args ($(wc -c < new-$tag.html) bytes)" || echo "DIFF report $s $args"
  done
done

#!/bin/bash
# The old-against-new check of the history commands' output: main (BASE, a `git archive` of it)
# against this checkout (HEAD_ROOT) on the stores in WORK. `regressions -f json`, `compare -f json`
# byte for byte; the report's HTML but for its "Generated" time. Each pair asks both for the same
# window of commits: HEAD's defaults (regressions --window 1000, report --last 1000) against
# BASE's whole history where the store's branch has fewer commits than that (s1k), against
# BASE's `report --last 1000` always, and HEAD's whole history (--window 0, --last 0) against
# BASE's default. Each line: SAME or DIFF, the store, HEAD's arguments, BASE's (and a DIFF line where
# their warnings on stderr differ: the runs with a flagged date, for one).
# Run: BASE=/tmp/s4q/base HEAD_ROOT=$PWD WORK=/tmp/s4q STORES="s1k s10k" same_output.sh
: "${BASE:?}" "${HEAD_ROOT:?}" "${WORK:?}"
mkdir -p "$WORK/cmp" && cd "$WORK/cmp"
run() { local root=$1; shift; (cd "$root" && PYTHONPATH="$root" python -c "from primbench.cli import main; main()" "$@"); }
same() {  # same KIND STORE "HEAD ARGS" "BASE ARGS"
  local kind=$1 s=$2 new=$3 old=$4 tag; tag=$(echo "$kind $s $new" | tr ' /' '__')
  case $kind in
    report)
      run "$BASE" history report --db "$WORK/$s.duckdb" $old --no-git -o "$WORK/cmp/old-$tag.html" > /dev/null
      run "$HEAD_ROOT" history report --db "$WORK/$s.duckdb" $new --no-git -o "$WORK/cmp/new-$tag.html" > /dev/null
      if diff -q <(sed 's/Generated [^.]*UTC\././' "old-$tag.html") <(sed 's/Generated [^.]*UTC\././' "new-$tag.html") > /dev/null
      then echo "SAME report $s [$new] [$old] ($(wc -c < "new-$tag.html") bytes)"; else echo "DIFF report $s [$new] [$old]"; fi;;
    *)
      run "$BASE" history $kind --db "$WORK/$s.duckdb" $old -f json > "old-$tag.json" 2> "old-$tag.err"
      run "$HEAD_ROOT" history $kind --db "$WORK/$s.duckdb" $new -f json > "new-$tag.json" 2> "new-$tag.err"
      cmp -s "old-$tag.err" "new-$tag.err" || echo "DIFF $kind $s [$new] [$old]: the warnings on stderr"
      if cmp -s "old-$tag.json" "new-$tag.json"; then echo "SAME $kind $s [$new] [$old] ($(wc -c < "new-$tag.json") bytes)"
      elif tail -c "$(wc -c < "new-$tag.json")" "old-$tag.json" | cmp -s - "new-$tag.json"; then  # BASE: DuckDB's bar first
        echo "SAME $kind $s [$new] [$old] ($(wc -c < "new-$tag.json") bytes; BASE wrote $(( $(wc -c < "old-$tag.json") - $(wc -c < "new-$tag.json") )) bytes of DuckDB's progress bar before them)"
      else echo "DIFF $kind $s [$new] [$old]"; fi;;
  esac
}
for s in ${STORES:-s1k s10k}; do
  same regressions "$s" "-b main --window 0" "-b main"
  same regressions "$s" "-b main -m time --window 0" "-b main -m time"
  same regressions "$s" "-b feat-0 --last 5" "-b feat-0 --last 5"
  [ "$s" = s1k ] && same regressions "$s" "-b main" "-b main"  # s1k's main: 950 commits, inside the window
  same compare "$s" "feat-0 --base main --no-git" "feat-0 --base main --no-git"
  same report "$s" "-b main" "-b main --last 1000"
  same report "$s" "-b main --last 0" "-b main"
  same report "$s" "-b feat-0" "-b feat-0 --last 1000"
  same report "$s" "-b main --last 100 -m time" "-b main --last 100 -m time"
done

#!/usr/bin/env bash
# Runs the libFuzzer harnesses of Fuzz/FeedingestFuzz, each for FUZZ_TIME seconds (default 60), and prints a table:
# executions, seconds, executions per second, corpus size, crashes. Seeds come from Fuzz/seeds (small, hand-made, in
# the repo) and, built here at run time and never copied into the repo, from ../shared/corpus and the project's
# fixtures (examples/, Tests fixtures), gzip/zlib/raw-deflate versions of them for the Inflater. A harness that finds a
# crash or a broken property leaves the input in .build/fuzz/artifacts/<harness>/ and makes the script exit 1.
#
#   scripts/fuzz.sh [HARNESS...]     FUZZ_TIME=600 scripts/fuzz.sh feed     FUZZ_JOBS=2 for parallel workers
#   FUZZ_SEED=N replays libFuzzer's random choices (make fuzz-smoke sets one; unset, every run explores afresh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
binary="${FUZZ_BINARY:-.build/fuzz/release/feedingest-fuzz}"
time_per="${FUZZ_TIME:-60}"
jobs="${FUZZ_JOBS:-1}"
seed=()
[ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$FUZZ_SEED")
work="${FUZZ_WORK:-.build/fuzz/work}"
corpus_root="${SHARED_CORPUS:-$root/../shared/corpus}"
all=(xml xml-repair feed html inflate date feedlist url headers)
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${all[@]}")
[ -x "$binary" ] || { echo "fuzz: $binary is missing; run make fuzz (it builds it)" >&2; exit 2; }

seeds="$work/seeds"
# Seeds from outside the repo, built once per work directory.
if [ ! -e "$seeds/.done" ]; then
  rm -rf "$seeds"
  mkdir -p "$seeds"/{xml,feed,html,inflate,feedlist}
  small() { find "$@" -type f -size -256k 2>/dev/null; }
  n=0
  while IFS= read -r file; do
    n=$((n + 1))
    case "$file" in
      *.json) cp "$file" "$seeds/feed/$n.json" ;;
      *) cp "$file" "$seeds/xml/$n"; cp "$file" "$seeds/feed/$n" ;;
    esac
  done < <(small "$corpus_root" examples Tests/ArticleStoreTests/Fixtures | grep -E '\.(xml|rss|atom|rdf|json|opml)$')
  python3 - "$seeds" <<'PY'
import gzip, os, re, sys, zlib
seeds = sys.argv[1]
names = sorted(os.listdir(os.path.join(seeds, "xml")))[:200]
for i, name in enumerate(names):
    data = open(os.path.join(seeds, "xml", name), "rb").read()
    # The Inflater: gzip, zlib and raw deflate of real feeds (a few of each), two gzip members once.
    if i < 40:
        kind = i % 3
        if kind == 0: out = gzip.compress(data)
        elif kind == 1: out = zlib.compress(data)
        else:
            c = zlib.compressobj(6, zlib.DEFLATED, -15); out = c.compress(data) + c.flush()
        open(os.path.join(seeds, "inflate", f"{i}"), "wb").write(out)
    # The sanitiser: the HTML inside the feeds' descriptions and content.
    text = data.decode("utf-8", "replace")
    for j, m in enumerate(re.findall(r"<!\[CDATA\[(.*?)\]\]>", text, re.S)[:3]):
        if "<" in m: open(os.path.join(seeds, "html", f"{i}-{j}"), "w").write(m)
open(os.path.join(seeds, "inflate", "members"), "wb").write(gzip.compress(b"<a>") + gzip.compress(b"</a>"))
PY
  cp examples/*.opml "$seeds/feedlist/" 2>/dev/null || true
  cp feeds.txt "$seeds/feedlist/feeds.txt" 2>/dev/null || true
  touch "$seeds/.done"
fi

export SWIFT_BACKTRACE=enable=no   # libFuzzer reports the crash; the Swift backtracer would only get in its way
failed=0
printf '%-11s %12s %8s %10s %8s %s\n' harness executions seconds "exec/s" corpus crashes
for harness in "${harnesses[@]}"; do
  case "$harness" in
    xml|xml-repair) dirs=(Fuzz/seeds/xml "$seeds/xml"); max_len=65536 ;;
    feed) dirs=(Fuzz/seeds/feed "$seeds/feed"); max_len=65536 ;;
    html) dirs=(Fuzz/seeds/html "$seeds/html"); max_len=16384 ;;
    inflate) dirs=("$seeds/inflate"); max_len=65536 ;;
    feedlist) dirs=(Fuzz/seeds/feedlist "$seeds/feedlist"); max_len=8192 ;;
    date|url|headers) dirs=("Fuzz/seeds/$harness"); max_len=1024 ;;
    *) echo "fuzz: unknown harness $harness (one of ${all[*]})" >&2; exit 2 ;;
  esac
  corpus="$work/corpus/$harness"
  artifacts="$work/artifacts/$harness"
  rm -rf "$artifacts"   # the inputs of an earlier run are in its log; this run's findings alone fail it
  mkdir -p "$corpus" "$artifacts"
  log="$work/$harness.log"
  fork=()
  [ "$jobs" -gt 1 ] && fork=(-fork="$jobs")
  start=$(date +%s.%N)
  status=0
  FEEDINGEST_FUZZ_HARNESS="$harness" "$binary" "$corpus" "${dirs[@]}" -max_total_time="$time_per" -max_len="$max_len" \
    -timeout=20 -rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "${fork[@]}" "${seed[@]}" > "$log" 2>&1 || status=$?
  end=$(date +%s.%N)
  seconds=$(python3 -c "print(f'{$end - $start:.1f}')")
  # With -fork the workers' stats are summed in the parent's "#N ... DONE" lines; without it, stat:: lines.
  executions=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | awk '{s += $2} END {print s + 0}')
  if [ "$executions" -eq 0 ]; then executions=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#'); fi
  executions=${executions:-0}
  crashes=$(find "$artifacts" -type f | wc -l)
  rate=$(python3 -c "print(int($executions / max($seconds, 0.001)))")
  printf '%-11s %12s %8s %10s %8s %s\n' "$harness" "$executions" "$seconds" "$rate" "$(ls "$corpus" | wc -l)" "$crashes"
  echo "{\"harness\":\"$harness\",\"executions\":$executions,\"seconds\":$seconds,\"execPerSecond\":$rate,\"crashes\":$crashes,\"status\":$status}" >> "$work/results.ndjson"
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=1
    echo "fuzz: $harness failed (status $status); inputs in $artifacts, log in $log:" >&2
    grep -E 'property violated|ERROR|SUMMARY' "$log" | head -5 >&2 || true
  fi
done
exit "$failed"

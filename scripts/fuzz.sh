#!/usr/bin/env bash
# Fuzz the serializer and the row decoders for longer than the test suite does:
# random bytes and mutated payloads, each of which must load as a value or raise
# CorruptPayloadError. Prints the examples tried, the crashes and the peak memory.
#
#   scripts/fuzz.sh            # 5000 examples per target
#   scripts/fuzz.sh 50000      # more
set -uo pipefail
cd "$(dirname "$0")/.."

examples="${1:-5000}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"

start=$(date +%s)
DURABLE_DEBUG_FUZZ_EXAMPLES="$examples" DURABLE_DEBUG_FUZZ_REPORT="$report" \
  python -m pytest -q -p no:cacheprovider -p no:nbval -o addopts="" tests/checkpoint/test_fuzz.py
status=$?
elapsed=$(( $(date +%s) - start ))

crashes=0
if [ "$status" -gt 128 ]; then
  crashes=1
  echo "CRASH: the fuzzing process died of signal $((status - 128))"
fi
python - "$report" "$crashes" "$status" "$elapsed" <<'PY'
import json, sys
path, crashes, status, elapsed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
try:
    with open(path) as f:
        report = json.load(f)
except (OSError, ValueError):
    report = {"examples": {}, "peak_rss_kib": None}
examples = report["examples"]
for target, count in sorted(examples.items()):
    print(f"  {count:8d}  {target}")
peak = report["peak_rss_kib"]
print(f"examples tried: {sum(examples.values())} in {elapsed} s")
print(f"crashes: {crashes}")
print(f"failures: {'none' if status == 0 else 'see above'}")
print(f"peak RSS: {peak / 1024:.0f} MiB" if peak else "peak RSS: unknown (no report)")
PY
exit "$status"

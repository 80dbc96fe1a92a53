#!/usr/bin/env bash
# A fuzzing campaign of one decoder target, at the lowest CPU priority on one core, resuming from
# what earlier campaigns found: the working corpus WORK/TARGET (kept between runs) comes first,
# then the committed corpus and regression inputs. Appends libFuzzer's final line (executions,
# coverage: cov = edges, ft = features; `last status:` when the run was interrupted, e.g. by
# SIGINT to the fuzzer process) and statistics to WORK/TARGET.log, and stops at the
# first crash (the input is in WORK/TARGET-artifacts/). Afterwards, minimise into the committed
# corpus with `-merge=1` (README.md).
#
#   campaign.sh FUZZ_BUILD TARGET RUNS [SECONDS]   e.g. campaign.sh wasm/build-fuzz parse 10000000
# (SECONDS: stop after that long even if RUNS are not done; 0 or absent: no limit.)
# libFuzzer's -timeout is wall-clock time: at the lowest priority on a shared machine a 40-ms
# execution can wait tens of seconds for a core, so a campaign allows VPCC_FUZZ_TIMEOUT seconds
# (default 300); a real hang still ends it. Check a reported timeout at normal priority
# (`vpcc-fuzz-TARGET INPUT` prints the time of one execution) before fixing anything.
set -euo pipefail
build=$1 target=$2 runs=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
seconds=${4:-0}
work=$build/fuzz/campaign
max_len=$(sed -n "s/^ *set(VPCC_FUZZ_MAX_LEN_$target \([0-9]*\))/\1/p" "$here/CMakeLists.txt")
mkdir -p "$work/$target" "$work/$target-artifacts"
{
  echo "== $(date -u +%FT%TZ) $target -runs=$runs -max_total_time=$seconds commit $(git -C "$here" rev-parse --short HEAD)"
  nice -n 19 "$build/fuzz/vpcc-fuzz-$target" "$work/$target" "$here/corpus/$target" "$here/regressions/$target" \
    -runs="$runs" -max_total_time="$seconds" -max_len="$max_len" -timeout="${VPCC_FUZZ_TIMEOUT:-300}" -rss_limit_mb=2560 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$work/$target-artifacts/" 2>&1 |
    awk '/^#[0-9]+[[:space:]]/ { last = $0 }
         /^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|ERROR|SUMMARY|runtime error|Test unit written/ { print; fflush() }
         END { if (last !~ /DONE/) print "last status: " last }' || true
} >> "$work/$target.log"
tail -n 12 "$work/$target.log"

#!/usr/bin/env bash
# A bounded libFuzzer run of one fuzz target (the CTest fuzz_TARGET; campaigns run it by hand
# for longer, see README.md). Seeds: the target's committed corpus and regression inputs, read
# only; new inputs go to WORK/corpus. Fails when the fuzzer finds a crash, leak, timeout or
# out-of-memory; the input is then in WORK/artifacts/ — fix the decoder and commit the input to
# wasm/fuzz/regressions/TARGET/. The seed is fixed (VPCC_FUZZ_SEED, default 1) so that CI's short
# run mutates the same way on every machine: a red CI names a decoder change, not a lucky draw;
# finding new inputs is the campaigns' job (campaign.sh, random seeds).
#
#   run_fuzz.sh FUZZER SECONDS MAX_LEN WORK CORPUS_DIR REGRESSIONS_DIR
set -euo pipefail
fuzzer=$1 seconds=$2 max_len=$3 work=$4 corpus=$5 regressions=$6
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts" "$regressions"
"$fuzzer" "$work/corpus" "$corpus" "$regressions" \
  -seed="${VPCC_FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -malloc_limit_mb=1024 \
  -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$work/artifacts/"

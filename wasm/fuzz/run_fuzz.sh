#!/usr/bin/env bash
# A bounded libFuzzer run of vpcc-fuzz (the CTest fuzz_decode). Seeds: the committed corpus and
# regressions, plus the TMC2 conformance streams (../shared/vpcc, wasm/tests/conformance: PLR,
# pixel interleaving, raw patches in main and auxiliary videos) and a packed demo segment of the
# native build when present, with their video payload stripped
# (strip_video.py: the harness does not decode video, and small inputs mutate fast; mutants
# are kept under 128 kB, larger seeds are read truncated). Fails when the fuzzer finds a
# crash, leak, timeout or out-of-memory; the input is then in WORK/artifacts/ — fix the
# decoder and commit the input to wasm/fuzz/regressions/.
#
#   run_fuzz.sh FUZZER SECONDS WORK SHARED_DIR NATIVE_BUILD_DIR
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3 shared=$4 native=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
for f in "$shared"/vpcc/*/*.bin "$here"/../tests/conformance/*/*.bin "$native"/test-content/demo/figure-0/0/seg-00000.v3c; do
  if [ -f "$f" ]; then python3 "$here/strip_video.py" "$f" "$work/seeds/$(basename "$(dirname "$f")")-$(basename "$f")"; fi
done
# New inputs go to $work/corpus (the first directory); the others are read only.
"$fuzzer" "$work/corpus" "$here/corpus" "$here/regressions" "$work/seeds" \
  -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -malloc_limit_mb=1024 \
  -max_len=131072 -print_final_stats=1 -artifact_prefix="$work/artifacts/"

#!/bin/sh
# Runs one fuzz target: up to 10 million executions or SECONDS (default 1800), whichever
# comes first, at low priority (NICE, default 10), growing fuzz/corpus/TARGET and saving
# any crash in fuzz/artifacts/TARGET. Needs the nightly toolchain and `cargo install
# cargo-fuzz`.
#   fuzz/run.sh TARGET [SECONDS]
set -eu
target=$1
seconds=${2:-1800}
cd "$(dirname "$0")"
exec nice -n "${NICE:-10}" cargo +nightly fuzz run -O -a -s none "$target" -- \
    -dict=dict/fuzz.dict -max_total_time="$seconds" -runs=10000000 -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1

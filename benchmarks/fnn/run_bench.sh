#!/bin/sh
# Run the FNN designer benchmark from a build dir: ./run_bench.sh [SECONDS] [SEEDS]
# KLAT2's problem to the bound with 1 and 2 threads, then 128 and 256 PC problems.
here=$(dirname "$0")
bench=${BENCH_FNN:-./bench_fnn}
[ -x "$bench" ] || bench="$here/bench_fnn"
exec "$bench" --seconds "${1:-60}" --seeds "${2:-3}"

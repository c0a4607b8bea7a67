#!/bin/sh
# Runs the core benchmark from a build directory: run.sh BUILD_DIR [sctpt_bench args...]
# e.g. benchmarks/core/run.sh _build/gcc --quick   (--help lists the options)
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [--tests LIST] [--only sctp|tcp] [--sizes LIST] [--iters-scale F] [--quick] [--wait] [--dat]" >&2
	exit 2
fi
build=$1
shift
bench=$build/benchmarks/core/sctpt_bench
if [ ! -x "$bench" ]; then
	echo "$0: $bench not built (run make in $build)" >&2
	exit 1
fi
exec "$bench" "$@"

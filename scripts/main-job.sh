#!/usr/bin/env bash
# The main job: the transports measured against their baselines, in one run.
#   scripts/main-job.sh BUILD_DIR
# 1. the SCTP core against plain TCP sockets (latency and bandwidth, two processes);
# 2. Open MPI over our BTL (btl self,sctp) against Open MPI's btl tcp, when the BTL is built.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/_build/gcc}" && pwd)
echo "== SCTP core vs TCP sockets (loopback, one-way latency and streaming bandwidth)"
bash "$top/benchmarks/core/run.sh" "$build" --wait
if [ -f "$build/ompi-btl/.libs/mca_btl_sctp.so" ] && [ -x "$top/benchmarks/btl/compare.sh" ]; then
	echo
	echo "== Open MPI: btl sctp vs btl tcp"
	bash "$top/benchmarks/btl/compare.sh" "$build"
fi

#!/usr/bin/env bash
# The main job: the transports measured against their baselines, in one run.
#   scripts/main-job.sh [BUILD_DIR]
# 1. the SCTP core against plain TCP sockets: latency, bandwidth and bidirectional bandwidth
#    in the OSU pattern, both sides busy-polling (benchmarks/core/sctpt_bench);
# 2. Open MPI over btl sctp against the core alone and btl tcp (benchmarks/btl/compare.sh):
#    tables with ratios, a summary of the goals and btl_compare.png;
# 3. MPI one-sided, osc rdma over btl sctp against osc pt2pt over btl sctp and btl tcp
#    (benchmarks/btl/osc_compare.sh): tables with ratios and osc_compare.png;
# 4. MPICH over ch3:sctp against ch3:sock and Debian's MPICH (benchmarks/ch3/compare.sh).
# Iterations: OSU's own counts x Q (default 0.3 here: 3000 round trips per small size, 300 per
# large one, to keep the job near a quarter of an hour on 2 cores; Q=1 is OSU exactly, QUICK=1
# is 0.1); REPS (default 3) runs per stack and test, medians of each run's median iteration
# (MEDIAN=0: of OSU's averages).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/_build/gcc}" && pwd)
# The ranks share this host: the core's shared memory between same-host peers stays off, so
# that SCTP over loopback is measured, as between hosts (SCTPT_SHM=1 measures it instead).
export SCTPT_SHM=${SCTPT_SHM:-0}
status=0
export Q=${Q:-$([ "${QUICK:-0}" = 1 ] && echo 0.1 || echo 0.3)}
scale=(--iters-scale "$Q")
[ "${MEDIAN:-1}" = 0 ] || scale+=(--median)
echo "== SCTP core vs TCP sockets (loopback, OSU pattern, both busy-poll; SCTPT_SHM=$SCTPT_SHM)"
bash "$top/benchmarks/core/run.sh" "$build" "${scale[@]}" || status=1
if [ -f "$build/ompi-btl/.libs/mca_btl_sctp.so" ]; then
	echo
	echo "== Open MPI: btl sctp vs the core alone vs btl tcp"
	bash "$top/benchmarks/btl/compare.sh" "$build" || status=1
	echo
	echo "== MPI one-sided: osc rdma over btl sctp vs osc pt2pt"
	bash "$top/benchmarks/btl/osc_compare.sh" "$build" || status=1
fi
if [ -f "$top/benchmarks/ch3/compare.sh" ]; then
	echo
	echo "== MPICH: ch3:sctp vs ch3:sock (same tree, same build) vs Debian's MPICH"
	bash "$top/benchmarks/ch3/compare.sh" "$build/benchmarks/ch3/results" || status=1
fi
exit $status

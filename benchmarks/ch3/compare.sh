#!/usr/bin/env bash
# compare.sh [output dir]: MPICH 4 with our ch3:sctp channel against MPICH's own ch3:sock
# (TCP) built from the same source in the same way (scripts/mpich-build.sh, both cached),
# and against Debian's MPICH (ch4:ucx, UCX_TLS=self,tcp: over TCP too) when installed.
# OSU Micro-Benchmarks methodology (benchmarks/btl/bench_common.h, the same programs the BTL
# is measured with, compiled here with each stack's mpicc): latency, bandwidth (window of 64
# non-blocking sends, then an ack), bidirectional bandwidth on 2 ranks, 0/1 B..4 MiB, and
# allreduce on NP_COLL ranks (default 4). One node: every stack goes over loopback.
#
# Each test runs REPS times (default 3), the stacks alternating within each repetition so
# that all see the same machine; the tables show the median per size and the ratios
# sctp/sock and sctp/debian (latency: time, lower is better; bw: MB/s, higher is better).
# Environment:
#   QUICK=1       OSU's iteration counts x0.1 (Q=F for any factor)
#   TESTS="..."   subset of: latency bw bibw allreduce
#   MAX=bytes     largest size (default 4 MiB)
#   SCTP_ENV="V=x ..."  extra environment for the ch3:sctp runs (e.g. MPICH_SCTP_SPIN_US=0)
#   BEFORE_LIB=dir     one more stack, "before": the ch3:sctp programs run with the libmpi.so.12
#                      in dir (LD_LIBRARY_PATH; a copy of an earlier build's install/lib), so
#                      that a change is measured against the build before it in the same run
#   DEBIAN=0      leave Debian's MPICH out
#   SHM=1         ch3:sctp (and before) with the core's shared memory between the ranks
#                 (SCTPT_SHM=1; default 0: SCTP over loopback)
#   BIND=x        Hydra's -bind-to x for every run (e.g. core: one rank per CPU; user:0,0: both
#                 on CPU 0). Unbound, the scheduler decides per run, and on a VM a wake-up on
#                 another vCPU costs tens of us more than one on the same vCPU: latencies
#                 come out bimodal (both ranks' placements), whatever the stack
set -u

main() {
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$here/benchmarks/ch3/results}
mkdir -p "$out/raw" "$out/bin" || exit 2
q=${Q:-$([ "${QUICK:-0}" = 1 ] && echo 0.1 || echo 1)}
reps=${REPS:-3}
tests=${TESTS:-latency bw bibw allreduce}
max=${MAX:-4194304}
np_coll=${NP_COLL:-4}
read -r -a sctp_env <<<"${SCTP_ENV:-}"
shm=${SHM:-0}

declare -A mpicc mpiexec
for dev in sctp sock; do
	p=$("$here/scripts/mpich-build.sh" --device ch3:$dev | tail -n 1) ||
		{ echo "compare.sh: building MPICH with ch3:$dev failed" >&2; exit 2; }
	mpicc[$dev]=$p/bin/mpicc
	mpiexec[$dev]=$p/bin/mpiexec
done
stacks="sctp sock"
if [ "${DEBIAN:-1}" != 0 ] && [ -x /usr/bin/mpicc.mpich ] && [ -x /usr/bin/mpiexec.mpich ]; then
	mpicc[debian]=/usr/bin/mpicc.mpich
	mpiexec[debian]=/usr/bin/mpiexec.mpich
	stacks="$stacks debian"
fi

src=$here/benchmarks/btl
for s in $stacks; do
	mkdir -p "$out/bin/$s"
	for t in latency bw allreduce; do
		"${mpicc[$s]}" -O2 -Wno-stringop-overflow -o "$out/bin/$s/bench_$t" "$src/bench_$t.c" || exit 2
	done
	"${mpicc[$s]}" -O2 -Wno-stringop-overflow -DBIDIR=1 -o "$out/bin/$s/bench_bibw" "$src/bench_bw.c" || exit 2
done

run() { # STACK TEST NP: one run, its output in raw/
	local s=$1 t=$2 np=$3 rep=$4 env=()
	local bin=$s
	case $s in
	sctp) env=(SCTPT_SHM="$shm" "${sctp_env[@]}") ;;
	before) env=(SCTPT_SHM="$shm" LD_LIBRARY_PATH="$BEFORE_LIB" "${sctp_env[@]}") bin=sctp ;;
	debian) env=(UCX_TLS=self,tcp) ;;
	esac
	env "${env[@]}" timeout -k 10 1800 "${mpiexec[$bin]}" -launcher fork ${BIND:+-bind-to "$BIND"} -n "$np" \
		"$out/bin/$bin/bench_$t" -q "$q" -m "$max" >"$out/raw/$t-$s-$rep.txt" 2>"$out/raw/$t-$s-$rep.err" ||
		echo "compare.sh: $t on $s (rep $rep) failed, see $out/raw/$t-$s-$rep.err" >&2
}

if [ -n "${BEFORE_LIB:-}" ]; then
	[ -f "$BEFORE_LIB/libmpi.so.12" ] || { echo "compare.sh: no libmpi.so.12 in $BEFORE_LIB" >&2; exit 2; }
	stacks="$stacks before"
fi
declare -A what=([sctp]="sctp: ch3:sctp (SCTP core, SCTPT_SHM=$shm)" [sock]="sock: ch3:sock (TCP)"
	[debian]="debian: Debian's MPICH (ch4:ucx, UCX_TLS=self,tcp)"
	[before]="before: ch3:sctp with ${BEFORE_LIB:-}/libmpi.so.12")
names=
for s in $stacks; do names="$names${names:+; }${what[$s]}"; done
echo "# MPICH 4.0.2, $names; one host, loopback${BIND:+, -bind-to $BIND}: $(date -u +%FT%TZ), $(nproc) cores shared with other jobs (load $(cut -d' ' -f1-3 /proc/loadavg)), Q=$q, $reps reps" | tee "$out/header.txt"
for rep in $(seq 1 "$reps"); do
	for t in $tests; do
		np=2
		[ "$t" = allreduce ] && np=$np_coll
		for s in $stacks; do run "$s" "$t" "$np" "$rep"; done
	done
done

# median per (test, stack, size), then one table per test
for t in $tests; do
	echo
	echo "## $t $(head -n 1 "$out/raw/$t-sctp-1.txt" 2>/dev/null | sed 's/^# [a-z]* //')"
	cat "$out"/raw/"$t"-*-*.txt 2>/dev/null >/dev/null || continue
	awk -v stacks="$stacks" -v test="$t" '
		FNR == 1 { split(FILENAME, a, "/"); f = a[length(a)]; sub(/\.txt$/, "", f); n = split(f, b, "-"); s = b[n - 1] }
		/^#/ { next }
		NF == 2 { v[s, $1] = v[s, $1] " " $2; sizes[$1] = 1 }
		function ratio(a, b) { return (b > 0 && a != "") ? sprintf("%.2f", a / b) : "-" }
		function median(str,   x, n, i, j, t) {
			n = split(str, x, " ")
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
			return n ? (n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2) : ""
		}
		END {
			ns = split(stacks, st, " ")
			printf "%-10s", "size"
			for (i = 1; i <= ns; i++) printf " %12s", st[i]
			for (i = 2; i <= ns; i++) if (st[i] != "before") printf " %12s", "sctp/" st[i]
			for (i = 2; i <= ns; i++) if (st[i] == "before") printf " %12s %12s", "before/sock", "sctp/before"
			printf "\n"
			m = 0
			for (z in sizes) ord[++m] = z + 0
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (ord[j] < ord[i]) { t = ord[i]; ord[i] = ord[j]; ord[j] = t }
			for (k = 1; k <= m; k++) {
				z = ord[k]
				printf "%-10s", z
				for (i = 1; i <= ns; i++) { md[i] = median(v[st[i], z]); printf " %12s", md[i] }
				for (i = 2; i <= ns; i++) if (st[i] != "before") printf " %12s", ratio(md[1], md[i])
				for (i = 2; i <= ns; i++) if (st[i] == "before") printf " %12s %12s", ratio(md[i], md[2]), ratio(md[1], md[i])
				printf "\n"
			}
		}' "$out"/raw/"$t"-*-*.txt
done | tee "$out/tables.txt"
cat "$out/header.txt" "$out/tables.txt" >"$out/summary.txt"
}

main "$@"
exit $?

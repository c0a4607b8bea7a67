#!/usr/bin/env bash
# hybrid_compare.sh [output dir]: MPI one-sided communication over MPICH 4.0.2 built three ways
# from the same source (scripts/mpich-build.sh, cached), 2 ranks on this host:
#   hybrid  ch3:hybrid: Put as RDMA Write, Get as RDMA Read over the core's iWARP layer
#   sctp    ch3:sctp: one-sided as CH3 packets over the same SCTP core
#   sock    ch3:sock: MPICH's own TCP channel, one-sided as CH3 packets
# (SCTPT_SHM=0: SCTP between the ranks, not the core's shared memory.) The programs are
# benchmarks/btl/bench_osc.c (OSU one-sided methodology, a fresh MPI_Win_create window per
# size) compiled with each stack's mpicc: put/get latency with lock and with fence
# synchronisation, put/get bandwidth (windows of 32 operations) with lock and with fence, and
# the thesis's mixed test (Isend traffic overlapped with Put and Get under fence, its Figure
# 4.3). Each test runs REPS times (3), the stacks interleaved within each repetition; the
# tables give the median per size and the ratios hybrid/sctp and hybrid/sock (latency: us,
# lower is better; bandwidth: MB/s, higher is better).
# Environment: Q=F (OSU's iteration counts times F, default 0.2), MEDIAN=0 (OSU's average per
# run instead of the median iteration), REPS, MAX (largest size, 4 MiB),
# TESTS="put_lat:lock ..." (test:sync pairs), HYBRID_ENV="VAR=x ..." (extra environment for
# the ch3:hybrid runs), BEFORE_HYBRID_LIB=dir / BEFORE_SCTP_LIB=dir (stacks hybrid0 / sctp0: the
# ch3:hybrid / ch3:sctp programs run with the libmpi.so.12 in dir, a copy of an earlier build's
# install/lib, so that a change is measured against the build before it in the same run),
# BIND=x (Hydra's -bind-to x for every run, e.g. core or user:0,0: unbound, each run's
# placement of the two ranks decides, and on a VM a wake-up on the other vCPU costs tens of us).
set -u

main() {
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$here/benchmarks/ch3/results/hybrid}
mkdir -p "$out/raw" "$out/bin" || exit 2
q=${Q:-0.2}
reps=${REPS:-3}
max=${MAX:-4194304}
med=$([ "${MEDIAN:-1}" = 0 ] || echo -M)
tests=${TESTS:-put_lat:lock get_lat:lock put_lat:fence get_lat:fence put_bw:lock get_bw:lock put_bw:fence get_bw:fence mixed:fence}
read -r -a hyb_env <<<"${HYBRID_ENV:-}"
stacks="hybrid sctp sock"
declare -A before_lib
[ -z "${BEFORE_HYBRID_LIB:-}" ] || { before_lib[hybrid0]=$BEFORE_HYBRID_LIB; stacks="$stacks hybrid0"; }
[ -z "${BEFORE_SCTP_LIB:-}" ] || { before_lib[sctp0]=$BEFORE_SCTP_LIB; stacks="$stacks sctp0"; }
for s in "${!before_lib[@]}"; do
	[ -f "${before_lib[$s]}/libmpi.so.12" ] || { echo "hybrid_compare.sh: no libmpi.so.12 in ${before_lib[$s]}" >&2; exit 2; }
done

declare -A prefix
for s in hybrid sctp sock; do
	prefix[$s]=$("$here/scripts/mpich-build.sh" --device "ch3:$s" | tail -n 1) ||
		{ echo "hybrid_compare.sh: building MPICH with ch3:$s failed" >&2; exit 2; }
	"${prefix[$s]}/bin/mpicc" -O2 -Wno-stringop-overflow -o "$out/bin/bench_osc.$s" \
		"$here/benchmarks/btl/bench_osc.c" || exit 2
done

run() { # STACK TEST SYNC REP
	local s=$1 t=$2 sync=$3 rep=$4 env=() f bin=${1%0}
	case $s in
	hybrid) env=(SCTPT_SHM=0 "${hyb_env[@]}") ;;
	hybrid0) env=(SCTPT_SHM=0 LD_LIBRARY_PATH="${before_lib[$s]}" "${hyb_env[@]}") ;;
	sctp) env=(SCTPT_SHM=0) ;;
	sctp0) env=(SCTPT_SHM=0 LD_LIBRARY_PATH="${before_lib[$s]}") ;;
	esac
	f=$out/raw/$t.$sync.$s.$rep
	env "${env[@]}" timeout -k 10 1800 "${prefix[$bin]}/bin/mpiexec" -launcher fork ${BIND:+-bind-to "$BIND"} -n 2 \
		"$out/bin/bench_osc.$bin" "$t" -s "$sync" -q "$q" -m "$max" $med >"$f.log" 2>&1 ||
		{ echo "hybrid_compare.sh: $t ($sync) on ch3:$s (rep $rep) failed, see $f.log" >&2; status=1; }
	grep -E '^[0-9]+ ' "$f.log" >"$f.dat"
}

status=0
header="# MPI one-sided, MPICH 4.0.2 ch3:hybrid vs ch3:sctp vs ch3:sock, 2 ranks on one host (loopback, SCTPT_SHM=0${BIND:+, -bind-to $BIND}), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores shared with other jobs (load at start $(cut -d' ' -f1-3 /proc/loadavg)), OSU iterations x$q, $([ -n "$med" ] && echo "median iteration of each run" || echo "OSU's average per run"), median of $reps interleaved runs"
echo "$header" >&2
for rep in $(seq 1 "$reps"); do
	for ts in $tests; do
		for s in $stacks; do
			echo "== $ts on ch3:$s ($rep/$reps)" >&2
			run "$s" "${ts%:*}" "${ts#*:}" "$rep"
		done
	done
done

{
	echo "$header"
	echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	for ts in $tests; do
		t=${ts%:*} sync=${ts#*:}
		case $t in
		*bw*) unit="MB/s, higher is better" better=high ;;
		mixed) unit="us per fence epoch with Isend traffic, lower is better" better=low ;;
		*) unit="us, lower is better" better=low ;;
		esac
		printf '\n## %s, %s (%s)\n' "$t" "$sync" "$unit"
		cat "$out"/raw/"$t.$sync".*.dat 2>/dev/null >/dev/null || continue
		awk -v stacks="$stacks" -v better="$better" '
			FNR == 1 { n = split(FILENAME, a, "."); s = a[n - 2] }
			NF == 2 { v[s, $1] = v[s, $1] " " $2; sizes[$1] = 1 }
			function median(str,   x, n, i, j, t) {
				n = split(str, x, " ")
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
				return n ? (n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2) : ""
			}
			function human(z) { return z >= 1048576 ? sprintf("%d MiB", z / 1048576) : z >= 1024 ? sprintf("%d KiB", z / 1024) : sprintf("%d B", z) }
			END {
				ns = split(stacks, st, " ")
				printf "%9s", "size"
				for (i = 1; i <= ns; i++) printf " | %10s", st[i]
				printf " | %12s | %12s\n", "hybrid/sctp", "hybrid/sock"
				m = 0
				for (z in sizes) ord[++m] = z + 0
				for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (ord[j] < ord[i]) { t = ord[i]; ord[i] = ord[j]; ord[j] = t }
				for (k = 1; k <= m; k++) {
					z = ord[k]
					printf "%9s", human(z)
					for (i = 1; i <= ns; i++) { md[i] = median(v[st[i], z]); printf " | %10s", md[i] == "" ? "-" : md[i] }
					for (i = 2; i <= 3; i++) {
						r = (md[i] > 0 && md[1] != "") ? md[1] / md[i] : -1
						mark = r < 0 ? "" : ((better == "low" && r > 1) || (better == "high" && r < 1)) ? " *" : ""
						printf " | %12s", r < 0 ? "-" : sprintf("%.2f%s", r, mark)
					}
					printf "\n"
				}
			}' "$out"/raw/"$t.$sync".*.dat
	done
	echo
	echo "* ch3:hybrid behind at that size"
} | tee "$out/summary.txt"
echo "table: $out/summary.txt" >&2
return $status
}

main "$@"
exit $?

#!/usr/bin/env bash
# compare.sh [output dir]: MPICH 4 with our ch3:sctp channel against MPICH's own ch3:sock
# (TCP) built from the same source in the same way (scripts/mpich-build.sh, both cached),
# and against Debian's MPICH (ch4:ucx, UCX_TLS=self,tcp: over TCP too) when installed.
# OSU Micro-Benchmarks methodology (benchmarks/btl/bench_common.h, the same programs the BTL
# is measured with, compiled here with each stack's mpicc): latency, bandwidth (window of 64
# non-blocking sends, then an ack), bidirectional bandwidth on 2 ranks, 0/1 B..4 MiB, and
# allreduce on NP_COLL ranks (default 4, or the number of CPUs if fewer). One node: every
# stack goes over loopback.
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
#   MEDIAN=1      -M: per size the median iteration (window) instead of OSU's average, so that
#                 an iteration that lost the CPU to another job does not count
#   LOCK=file     each repetition (every test on every stack) under flock file: a machine-wide
#                 lock for timed runs, released between repetitions
#   NS=1          two network-namespace hosts instead of loopback (test/common.sh), one rank in
#                 each (Hydra's MPMD form with `ip netns exec`), joined by one veth link of MTU
#                 (default 1500) limited by a tbf of RATE (default 10gbit; empty: none). Each
#                 stack is told its rank's address: MPICH_SCTP_ADDRS, MPICH_INTERFACE_HOSTNAME
#                 (ch3:sock), UCX_NET_DEVICES (Debian's). Two ranks only: allreduce is left out
set -u

main() {
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$here/benchmarks/ch3/results}
mkdir -p "$out/raw" "$out/bin" || exit 2
rm -f "$out"/raw/* "$out/link_bytes.txt"
q=${Q:-$([ "${QUICK:-0}" = 1 ] && echo 0.1 || echo 1)}
reps=${REPS:-3}
tests=${TESTS:-latency bw bibw allreduce}
max=${MAX:-4194304}
# no more ranks than CPUs by default: Debian's MPICH (ch4:ucx) busy-polls without yielding,
# and its allreduce on 4 ranks of 2 CPUs took from under a minute to half an hour a run
np_coll=${NP_COLL:-$(n=$(nproc 2>/dev/null || echo 4); [ "$n" -lt 4 ] && echo "$n" || echo 4)}
read -r -a sctp_env <<<"${SCTP_ENV:-}"
shm=${SHM:-0}
median=$([ "${MEDIAN:-0}" = 1 ] && echo -M)
ns=${NS:-0}
mtu=${MTU:-1500}
rate=${RATE-10gbit}
if [ "$ns" = 1 ]; then
	. "$here/test/common.sh"	# its EXIT trap removes the namespaces
	trap 'exit 143' TERM INT	# ... also when the run is stopped
	need_netns
	ns_add h0
	ns_add h1
	ns0=$(ns_name h0) ns1=$(ns_name h1)
	ns_link "$ns0" v0 198.18.0.1/24 "$ns1" v1 198.18.0.2/24
	ip -n "$ns0" link set v0 mtu "$mtu" && ip -n "$ns1" link set v1 mtu "$mtu" || exit 2
	if [ -n "$rate" ]; then
		tc -n "$ns0" qdisc add dev v0 root tbf rate "$rate" burst 1mb latency 10ms || exit 2
		tc -n "$ns1" qdisc add dev v1 root tbf rate "$rate" burst 1mb latency 10ms || exit 2
	fi
	tests=$(echo "$tests" | sed 's/allreduce//')
fi

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
	# BEFORE_LIB last: SCTP_ENV may pin the sctp stack's own library (LD_LIBRARY_PATH)
	before) env=(SCTPT_SHM="$shm" "${sctp_env[@]}" LD_LIBRARY_PATH="$BEFORE_LIB") bin=sctp ;;
	debian) env=(UCX_TLS=self,tcp) ;;
	esac
	local prog=("$out/bin/$bin/bench_$t" -q "$q" -m "$max" $median) ranks=(-n "$np" "${prog[@]}")
	if [ "$ns" = 1 ]; then	# rank r in namespace h<r>, told its address
		ranks=()
		for r in 0 1; do
			local ns_r=$ns0 addr=198.18.0.1 dev=v0 renv
			[ $r = 1 ] && ns_r=$ns1 addr=198.18.0.2 dev=v1
			case $s in
			sctp|before) renv=(-env MPICH_SCTP_ADDRS "$addr") ;;
			sock) renv=(-env MPICH_INTERFACE_HOSTNAME "$addr") ;;
			debian) renv=(-env UCX_NET_DEVICES "$dev") ;;
			esac
			[ $r = 1 ] && ranks+=(:)
			ranks+=(-n 1 "${renv[@]}" ip netns exec "$ns_r" "${prog[@]}")
		done
	fi
	local b0
	[ "$ns" = 1 ] && b0=$(link_bytes)
	env "${env[@]}" timeout -k 10 1800 "${mpiexec[$bin]}" -launcher fork ${BIND:+-bind-to "$BIND"} \
		"${ranks[@]}" >"$out/raw/$t-$s-$rep.txt" 2>"$out/raw/$t-$s-$rep.err" ||
		echo "compare.sh: $t on $s (rep $rep) failed, see $out/raw/$t-$s-$rep.err" >&2
	# the proof that the ranks talked over the link, not some other way
	[ "$ns" = 1 ] && echo "$t $s $rep $(($(link_bytes) - b0))" >>"$out/link_bytes.txt"
}
link_bytes() { # what went out of both ends of the link
	local a b
	a=$(ip netns exec "$ns0" cat /sys/class/net/v0/statistics/tx_bytes)
	b=$(ip netns exec "$ns1" cat /sys/class/net/v1/statistics/tx_bytes)
	echo $((a + b))
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
where="one host, loopback"
[ "$ns" = 1 ] && where="two namespace hosts, one veth link, MTU $mtu${rate:+, tbf $rate}"
echo "# MPICH 4.0.2, $names; $where${BIND:+, -bind-to $BIND}: $(date -u +%FT%TZ), $(nproc) cores shared with other jobs (load $(cut -d' ' -f1-3 /proc/loadavg)), Q=$q${median:+, median iterations}, $reps reps, main at $(git -C "$here" rev-parse --short HEAD)" | tee "$out/header.txt"
for rep in $(seq 1 "$reps"); do
	[ -n "${LOCK:-}" ] && { exec {lfd}>"$LOCK"; flock "$lfd"; }
	for t in $tests; do
		np=2
		[ "$t" = allreduce ] && np=$np_coll
		for s in $stacks; do run "$s" "$t" "$np" "$rep"; done
	done
	[ -n "${LOCK:-}" ] && exec {lfd}>&-
	echo "# rep $rep done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
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
[ "$ns" = 1 ] && awk '!($2 in m) || $4 < m[$2] { m[$2] = $4 } END { printf "\n# bytes over the link per run, the least of any test:"; for (s in m) printf " %s %d", s, m[s]; printf "\n" }' \
	"$out/link_bytes.txt" | tee -a "$out/tables.txt"
cat "$out/header.txt" "$out/tables.txt" >"$out/summary.txt"
}

main "$@"
exit $?

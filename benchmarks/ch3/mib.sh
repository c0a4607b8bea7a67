#!/usr/bin/env bash
# mib.sh [output file]: what one message of SIZE bytes (1 MiB) costs over ch3:sctp against
# MPICH's own ch3:sock, both MPICH 4.0.2 built the same way (scripts/mpich-build.sh, cached),
# 2 ranks on this host (loopback; SCTPT_SHM=0: SCTP between the ranks).
#   latency: benchmarks/btl/bench_latency -n SIZE -m SIZE, ITERS ping-pongs after 20 warm-up,
#            the median iteration (us)
#   bw:      benchmarks/btl/bench_bw -n SIZE -m SIZE (OSU: windows of 64 non-blocking sends,
#            then an ack), ITERS_BW windows after 2 warm-up (MB/s)
# Each run under perf stat: task-clock of mpiexec, its proxy and both ranks; CPU per message =
# (that - the same for a run of one iteration) / messages. ROUNDS rounds (5), the stacks
# interleaved in each; medians per stack and the ratios sctp/sock. SCTP_ENV="V=x ..." adds
# environment to the ch3:sctp runs; BEFORE_LIB=dir adds a stack "before" (the ch3:sctp
# programs with the libmpi.so.12 in dir); BIND=x passes -bind-to x to Hydra.
set -u

main() {
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$here/benchmarks/ch3/results/mib.txt}
size=${SIZE:-1048576}
iters=${ITERS:-1000}
iters_bw=${ITERS_BW:-40}
rounds=${ROUNDS:-5}
read -r -a sctp_env <<<"${SCTP_ENV:-}"
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null || { echo "mib.sh: needs perf (linux-perf)" >&2; exit 2; }

declare -A prefix
for dev in sctp sock; do
	prefix[$dev]=$("$here/scripts/mpich-build.sh" --device ch3:$dev | tail -n 1) ||
		{ echo "mib.sh: building MPICH with ch3:$dev failed" >&2; exit 2; }
	for t in latency bw; do
		"${prefix[$dev]}/bin/mpicc" -O2 -Wno-stringop-overflow -o "$tmp/bench_$t.$dev" \
			"$here/benchmarks/btl/bench_$t.c" || exit 2
	done
done
stacks="sctp sock"
if [ -n "${BEFORE_LIB:-}" ]; then
	[ -f "$BEFORE_LIB/libmpi.so.12" ] || { echo "mib.sh: no libmpi.so.12 in $BEFORE_LIB" >&2; exit 2; }
	stacks="$stacks before"
fi

# one run: prints "<value> <task-clock ms>"
run() { # STACK TEST LOOPS SKIP
	local s=$1 t=$2 loops=$3 skip=$4 bin=$1 env=(SCTPT_SHM=0) v
	case $s in
	sctp) env+=("${sctp_env[@]}") ;;
	before) env+=(LD_LIBRARY_PATH="$BEFORE_LIB" "${sctp_env[@]}") bin=sctp ;;
	esac
	env "${env[@]}" timeout -k 10 600 perf stat -x, -e task-clock -o "$tmp/perf" \
		"${prefix[$bin]}/bin/mpiexec" -launcher fork ${BIND:+-bind-to "$BIND"} -n 2 \
		"$tmp/bench_$t.$bin" -n "$size" -m "$size" -i "$loops" -I "$loops" -x "$skip" \
		-X "$skip" -M >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; echo "mib.sh: $t on $s failed" >&2; return 1; }
	v=$(awk -v z="$size" '$1 == z { print $2 }' "$tmp/out")
	echo "${v:--} $(awk -F, '$3 == "task-clock" { print $1 }' "$tmp/perf")"
}

header="# ch3:sctp vs ch3:sock, one $size-byte message: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores shared with other jobs (load at start $(cut -d' ' -f1-3 /proc/loadavg)), main at $(git -C "$here" rev-parse --short HEAD), SCTPT_SHM=0${SCTP_ENV:+, ch3:sctp with $SCTP_ENV}${BIND:+, -bind-to $BIND}, $rounds interleaved rounds, $iters ping-pongs / $iters_bw bandwidth windows of 64 per run"
echo "$header" >&2
: >"$tmp/res"
for r in $(seq 1 "$rounds"); do
	for s in $stacks; do
		# latency: 2 messages per iteration; bw: 64 per window (plus an ack)
		a=$(run "$s" latency 1 0) && b=$(run "$s" latency "$iters" 20) &&
			echo "$s latency ${b% *} $(echo "${b#* } ${a#* }" | awk -v n=$((2 * (iters + 20 - 1))) '{ printf "%.1f", ($1 - $2) * 1000 / n }')" >>"$tmp/res"
		a=$(run "$s" bw 1 0) && b=$(run "$s" bw "$iters_bw" 2) &&
			echo "$s bw ${b% *} $(echo "${b#* } ${a#* }" | awk -v n=$((64 * (iters_bw + 2 - 1))) '{ printf "%.1f", ($1 - $2) * 1000 / n }')" >>"$tmp/res"
		echo "round $r $s: $(grep "^$s " "$tmp/res" | tail -n 2 | tr '\n' ' ')" >&2
	done
done
{
	echo "$header"
	echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# per round: stack test value (latency us / bw MB/s) cpu-us-per-message"
	sed 's/^/#   /' "$tmp/res"
	awk -v stacks="$stacks" '
		{ v[$1, $2] = v[$1, $2] " " $3; c[$1, $2] = c[$1, $2] " " $4 }
		function median(str,   x, n, i, j, t) {
			n = split(str, x, " ")
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
			return n ? (n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2) : 0
		}
		END {
			ns = split(stacks, st, " ")
			printf "\n%-8s %-8s %12s %14s %12s %12s\n", "test", "stack", "median", "cpu us/msg", "x sock", "cpu x sock"
			split("latency bw", ts, " ")
			for (k = 1; k <= 2; k++)
				for (i = 1; i <= ns; i++) {
					m = median(v[st[i], ts[k]]); cm = median(c[st[i], ts[k]])
					m0 = median(v["sock", ts[k]]); c0 = median(c["sock", ts[k]])
					printf "%-8s %-8s %12.1f %14.1f %12.2f %12.2f\n", ts[k], st[i], m, cm,
						(m0 > 0 ? m / m0 : 0), (c0 > 0 ? cm / c0 : 0)
				}
		}' "$tmp/res"
	echo "# latency: us, lower is better; bw: MB/s, higher is better; cpu: all processes' task-clock per message"
} | tee "$out"
}

main "$@"
exit $?

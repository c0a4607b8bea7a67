#!/bin/bash
# The core on each SCTP engine against TCP sockets on loopback, in one run:
#   benchmarks/engine/compare.sh BUILD_DIR [--rounds N] [--sizes LIST] [--scale F] [--wait]
#                                [--no-perf]
# Each round runs benchmarks/core's sctpt_bench (OSU pattern: one-way latency of thousands of
# ping-pongs, bandwidth in windows of 64 messages) once per engine (native, usrsctp; the order
# alternates), each run measuring TCP sockets beside the core, with SCTPT_SHM=0 so that the
# engine carries every byte; --wait: both sides sleep until data arrives instead of busy-polling
# (on a machine with fewer free cores than busy-polling processes, polling measures the
# scheduler more than the transports). Ratios are taken within each run (engine/TCP of the same run),
# then the median over the rounds; the table also gives median values. Then, with perf, the
# CPU time of a 1 MiB bandwidth run of each engine and of TCP, sleeping while idle so that only
# work is counted, per byte moved (ns/byte; cycles where the machine exposes the counter).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [--rounds N] [--sizes LIST] [--scale F] [--wait] [--no-perf]}
shift
rounds=5 sizes=0,64,1K,8K,64K,1M scale=0.3 perf=1 wait=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--no-perf) perf=0; shift ;;
	--wait) wait=--wait; shift ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
bench=$build/benchmarks/core/sctpt_bench
[ -x "$bench" ] || { echo "$bench not built" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
engines=(native usrsctp)
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine:" \
	"other jobs run beside this one; compare ratios, not absolute values)"
for r in $(seq "$rounds"); do
	order=("${engines[@]}")
	[ $((r % 2)) -eq 0 ] && order=(usrsctp native)
	for e in "${order[@]}"; do
		SCTPT_SHM=0 SCTPT_BACKEND=$e timeout 600 "$bench" $wait --dat --tests lat,bw \
			--sizes "$sizes" --iters-scale "$scale" >"$out/$e.$r" 2>"$out/$e.$r.err" ||
			{ echo "round $r, $e: sctpt_bench failed" >&2; cat "$out/$e.$r.err" >&2; exit 1; }
	done
done

# value FILE SIDE TEST SIZE
value() { awk -v s="$2" -v t="$3" -v z="$4" '/^#/ {cur = ($2 == s && $3 == t)} !/^#/ && cur && $1 == z {print $2}' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
size_bytes() { echo "$1" | sed -e 's/K$/*1024/' -e 's/M$/*1048576/' | bc; }

printf "%8s | %9s %9s %9s | %7s %7s | %9s %9s %9s | %7s %7s\n" size "lat nat" "lat usr" \
	"lat tcp" "nat/tcp" "usr/tcp" "bw nat" "bw usr" "bw tcp" "nat/tcp" "usr/tcp"
for z in ${sizes//,/ }; do
	b=$(size_bytes "$z")
	line=$(printf "%8s |" "$z")
	for t in lat bw; do
		vals=() ratios=()
		for e in "${engines[@]}"; do
			vals+=("$(for r in $(seq "$rounds"); do value "$out/$e.$r" sctp $t "$b"; done | median)")
		done
		vals+=("$(for r in $(seq "$rounds"); do for e in "${engines[@]}"; do
			value "$out/$e.$r" tcp $t "$b"; done; done | median)")
		for e in "${engines[@]}"; do
			ratios+=("$(for r in $(seq "$rounds"); do
				s=$(value "$out/$e.$r" sctp $t "$b") c=$(value "$out/$e.$r" tcp $t "$b")
				[ -n "$s" ] && [ -n "$c" ] && awk -v s="$s" -v c="$c" 'BEGIN {if (c > 0) printf "%.4f\n", s / c}' || true
			done | median)")
		done
		line+=$(printf " %9s %9s %9s | %7s %7s |" "${vals[@]}" "${ratios[@]}")
	done
	echo "${line% |}"
done
echo "lat: one-way us, lower is better; bw: MB/s, higher is better; ratios: engine / TCP of the same run, median of $rounds rounds (nat: native engine, usr: usrsctp); ${wait:-busy-polling}"

[ "$perf" -eq 1 ] && command -v perf >/dev/null || exit 0
# CPU per byte: a bandwidth run of 1 MiB messages, for each side alone
windows=$(awk -v s="$scale" 'BEGIN {w = int(20 * s + 0.5); if (w < 1) w = 1; k = int(2 * s + 0.5); print w + k}')
bytes=$((windows * 64 * 1048576))
echo "CPU per byte moved (perf stat, both processes, 1 MiB messages, $windows windows of 64):"
for side in native usrsctp tcp; do
	only=sctp be=$side
	[ $side = tcp ] && only=tcp be=native
	SCTPT_SHM=0 SCTPT_BACKEND=$be perf stat -x, -e task-clock,cycles -o "$out/perf.$side" \
		"$bench" --wait --only $only --tests bw --sizes 1M --iters-scale "$scale" >/dev/null 2>&1 ||
		true
	ms=$(awk -F, '$3 == "task-clock" {print $1}' "$out/perf.$side")
	cyc=$(awk -F, '$3 == "cycles" && $1 ~ /^[0-9]/ {print $1}' "$out/perf.$side")
	awk -v s=$side -v ms="${ms:-0}" -v c="${cyc:-}" -v b=$bytes 'BEGIN {
		printf "  %-8s %8.2f ns/byte CPU", s, ms * 1e6 / b
		if (c != "") printf ", %.2f cycles/byte", c / b; else printf " (no cycle counter here)"
		printf "\n" }'
done

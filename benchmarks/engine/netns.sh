#!/bin/bash
# The core between two namespace hosts joined by one veth link, at MTU 1500 and 9000: bulk
# transfer on the native engine, on usrsctp, and over TCP sockets, interleaved in rounds, each
# moving the same bytes in 1 MiB messages, every byte checked (test/engine's engine_netxfer).
#   benchmarks/engine/netns.sh BUILD_DIR [--rounds N] [--mb M] [--rate RATE] [--perf]
# --rate: a tbf limit on the link (e.g. 10gbit); default none (veth's own speed, CPU-bound).
# Prints MB/s per round and the medians, and each engine's median over TCP's. --perf: each
# side also runs under `perf stat` and its CPU time per byte moved is printed (sender and
# receiver; the medians over the rounds, with TCP's): what a transfer costs whatever the
# load of a shared machine does to its rate. Both sides sleep while idle, so only work counts
# (softirq work is charged to whichever process the kernel runs it in).
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [--rounds N] [--mb M] [--rate RATE] [--perf]}
shift
rounds=3 mb=256 rate="" perf=0
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--mb) mb=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	--perf) perf=1; shift ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
x=$(cd "$build/test/engine" && pwd)/engine_netxfer
[ -x "$x" ] || { echo "$x not built (make -C $build/test/engine engine_netxfer)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces)" >&2; exit 1; }
ns=engbench$$
a=$ns-a b=$ns-b dir=$(mktemp -d)
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
ip netns add "$a"; ip netns add "$b"
ip -n "$a" link set lo up; ip -n "$b" link set lo up
ip link add a1 netns "$a" type veth peer name b1 netns "$b"
ip -n "$a" addr add 198.18.1.1/24 dev a1; ip -n "$b" addr add 198.18.1.2/24 dev b1
ip -n "$a" link set a1 up; ip -n "$b" link set b1 up
if [ -n "$rate" ]; then
	tc -n "$a" qdisc add dev a1 root tbf rate "$rate" burst 1mb latency 10ms
	tc -n "$b" qdisc add dev b1 root tbf rate "$rate" burst 1mb latency 10ms
fi
bytes=$((mb << 20))
# one ENGINE: the sender's MB/s (first message to the receiver's acknowledgement), or 0;
# with --perf, each side's CPU ns per byte in $dir/ns.send and $dir/ns.recv
one() {
	local eng=$1 tcp=() envs=(SCTPT_SHM=0) rpid out ps=() pr=()
	[ "$eng" = tcp ] && tcp=(--tcp) || envs+=(SCTPT_BACKEND="$eng")
	if [ "$perf" = 1 ]; then
		ps=(perf stat -x, -e task-clock -o "$dir/perf.send")
		pr=(perf stat -x, -e task-clock -o "$dir/perf.recv")
	fi
	rm -f "$dir"/a "$dir"/b
	ip netns exec "$b" env "${envs[@]}" timeout 120 "${pr[@]}" "$x" "${tcp[@]}" --addrs 198.18.1.2 \
		--card-out "$dir/b" --card-in "$dir/a" --recv $bytes --timeout 110 >"$dir/recv" 2>&1 &
	rpid=$!
	out=$(ip netns exec "$a" env "${envs[@]}" timeout 120 "${ps[@]}" "$x" "${tcp[@]}" --addrs 198.18.1.1 \
		--card-out "$dir/a" --card-in "$dir/b" --send $bytes --timeout 110 2>&1) || true
	wait $rpid || true
	grep -q "intact: yes" "$dir/recv" || { echo "$eng: transfer failed" >&2; echo "$out" >&2; cat "$dir/recv" >&2; echo 0; return; }
	if [ "$perf" = 1 ]; then
		for side in send recv; do
			awk -F, -v b=$bytes '$3 == "task-clock" {printf "%.3f\n", $1 * 1e6 / b}' \
				"$dir/perf.$side" >"$dir/ns.$side"
		done
	fi
	echo "$out" | sed -n 's/.* \([0-9.]*\) MB\/s.*/\1/p' | head -1
}
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) (shared machine: compare ratios)"
echo "# two namespaces, one veth link${rate:+ limited to $rate}, $mb MiB in 1 MiB messages, $rounds rounds"
for mtu in 1500 9000; do
	ip -n "$a" link set a1 mtu $mtu; ip -n "$b" link set b1 mtu $mtu
	declare -A res=() cpu_s=() cpu_r=()
	for r in $(seq "$rounds"); do
		for eng in native usrsctp tcp; do
			v=$(one $eng)
			res[$eng]="${res[$eng]:-} $v"
			if [ "$perf" = 1 ] && [ -s "$dir/ns.send" ]; then
				cpu_s[$eng]="${cpu_s[$eng]:-} $(cat "$dir/ns.send")"
				cpu_r[$eng]="${cpu_r[$eng]:-} $(cat "$dir/ns.recv")"
				rm -f "$dir/ns.send" "$dir/ns.recv"
			fi
			echo "mtu $mtu round $r $eng: $v MB/s"
		done
	done
	n=$(for v in ${res[native]}; do echo $v; done | median)
	u=$(for v in ${res[usrsctp]}; do echo $v; done | median)
	t=$(for v in ${res[tcp]}; do echo $v; done | median)
	awk -v m=$mtu -v n=$n -v u=$u -v t=$t 'BEGIN {
		printf "MTU %s medians: native %.1f, usrsctp %.1f, tcp %.1f MB/s; native/tcp %.2f, usrsctp/tcp %.2f\n",
		m, n, u, t, (t > 0 ? n / t : 0), (t > 0 ? u / t : 0) }'
	if [ "$perf" = 1 ]; then
		for eng in native usrsctp tcp; do
			cs=$(for v in ${cpu_s[$eng]:-}; do echo $v; done | median)
			cr=$(for v in ${cpu_r[$eng]:-}; do echo $v; done | median)
			printf "MTU %s CPU per byte (perf stat task-clock, median): %-8s sender %s ns/B, receiver %s ns/B\n" \
				"$mtu" "$eng" "$cs" "$cr"
		done
	fi
	unset res cpu_s cpu_r
done

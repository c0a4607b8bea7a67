#!/usr/bin/env bash
# compare.sh <build dir> [output dir]: the libfabric provider sctp against libfabric's own
# tcp;ofi_rxm, net and udp;ofi_rxd, and MPI over mtl ofi + sctp against ob1 + btl tcp, in the
# same run, on loopback and between two namespace hosts (a veth pair, 198.18.0.1 and
# 198.18.0.2, MTU 1500; the namespaces are removed on exit):
#   libfabric: ofi_bench (tagged messages, busy-polling fi_cq_read; fabtests' pre-posted
#     ping-pong and windowed bandwidth with OSU's counts): one-way latency 0 B .. MAX,
#     bandwidth (window of 64, then an ack) 1 B .. MAX, message rate 1 B .. 4 KiB;
#   MPI: osu_latency and osu_bw built from benchmarks/btl's sources, 2 ranks (in the two
#     namespaces: test/testbed/in-pc-ns.sh and tb_nsrun).
# Every stack runs once per round, the order rotating between rounds, so all see the same
# machine; tables show the median over ROUNDS (default 3) per size and the ratio to the
# baseline (tcp;ofi_rxm; btl tcp). sctp runs with FI_SCTP_SHM=0 (SCTP associations, also
# between the namespaces, which share /dev/shm) on the core's default engine (native);
# "sctp-usrsctp" is the usrsctp engine and "sctp+shm" (loopback only) the core's shared
# memory, for reference. Two references without libfabric run the same loops (ofi_bench -p
# core, -p socket): "core" is the SCTP core alone, polled as the provider polls it (what the
# provider adds is sctp/core), "socket" plain TCP sockets (the kernel's floor under tcp;ofi_rxm).
# Environment: ROUNDS=N, Q=F (OSU iteration counts times F; default 0.2), MAX=bytes (4 MiB),
# STACKS="..." (subset of the libfabric stacks), TOPO="lo ns" (loopback, namespace hosts),
# MPI=0 (skip the MPI part).
set -u
build=${1:?usage: compare.sh <build dir> [output dir]}
build=$(cd "$build" && pwd) || exit 2
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$build/benchmarks/ofi/results}
bench=$build/benchmarks/ofi
mkdir -p "$out" || exit 2
ROUNDS=${ROUNDS:-3}
Q=${Q:-0.2}
MAX=${MAX:-$((4 << 20))}
TOPO=${TOPO:-lo ns}
export FI_PROVIDER_PATH=$build/ofi-provider/.libs
[ -f "$FI_PROVIDER_PATH/libsctp-fi.so" ] || { echo "compare.sh: libsctp-fi.so not built" >&2; exit 2; }
[ -x "$bench/ofi_bench" ] || { echo "compare.sh: $bench/ofi_bench not built" >&2; exit 2; }

# two namespace hosts (test/common.sh removes them on exit)
if [[ " $TOPO " == *" ns "* ]]; then
	. "$src/test/common.sh"
	if [ "$(id -u)" -ne 0 ] || ! ip netns add "${NS_PREFIX}probe" 2>/dev/null; then
		echo "# no network namespaces here (root needed): loopback only"
		TOPO=lo
	else
		ip netns del "${NS_PREFIX}probe"
		ns_add pc0
		ns_add pc1
		NS0=$(ns_name pc0) NS1=$(ns_name pc1)
		ns_link "$NS0" v0 198.18.0.1/24 "$NS1" v1 198.18.0.2/24
	fi
fi

# name|provider|environment
ALL_STACKS=("sctp|sctp|FI_SCTP_SHM=0"
	"sctp-usrsctp|sctp|FI_SCTP_SHM=0 FI_SCTP_BACKEND=usrsctp"
	"sctp+shm|sctp|FI_SCTP_SHM=1"
	"tcp;ofi_rxm|tcp;ofi_rxm|"
	"net|net|"
	"udp;ofi_rxd|udp;ofi_rxd|"
	"core|core|SCTPT_SHM=0"
	"socket|socket|")
have_net=1
fi_info -l 2>/dev/null | grep -qx 'net:' || have_net=0
stacks=()
for s in "${ALL_STACKS[@]}"; do
	name=${s%%|*}
	[ "$name" != net ] || [ $have_net = 1 ] || continue
	[ -z "${STACKS:-}" ] || [[ " $STACKS " == *" $name "* ]] && stacks+=("$s")
done
safe() { echo "$1" | tr ';+' '_p'; }

# topo_args TOPO: ofi_bench's arguments and sctp's addresses for one topology
topo_args() {
	case $1 in
	lo) targs=(-s 127.0.0.1,127.0.0.1) tenv=(FI_SCTP_ADDRS=127.0.0.1) ;;
	ns) targs=(-n "$NS0,$NS1" -s 198.18.0.1,198.18.0.2) tenv=() ;;
	esac
}

echo "# ofi_bench, $ROUNDS rounds, Q=$Q, MAX=$MAX, topologies: $TOPO; $(date -u +%F)"
echo "# host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), libfabric $(fi_info --version 2>/dev/null | sed -n 's/^libfabric: //p')"
echo "# this machine is shared with other jobs: compare ratios within a run, not absolute values"
[ $have_net = 1 ] || echo "# this libfabric has no net provider"
n=${#stacks[@]}
for r in $(seq 1 "$ROUNDS"); do
	for topo in $TOPO; do
		topo_args "$topo"
		for k in $(seq 0 $((n - 1))); do
			s=${stacks[$(((k + r) % n))]}
			IFS='|' read -r name prov envs <<<"$s"
			# the namespaces share /dev/shm: shared memory would not be two hosts
			[ "$topo" = lo ] || [ "$name" != sctp+shm ] || continue
			f=$out/ofi_${topo}_$(safe "$name")_$r.txt
			# shellcheck disable=SC2086
			if ! env "${tenv[@]}" $envs timeout 1800 "$bench/ofi_bench" -p "$prov" -q "$Q" \
				-m "$MAX" "${targs[@]}" >"$f" 2>"$f.err"; then
				echo "# $topo $name round $r failed: $(tail -1 "$f.err")"
			fi
		done
	done
done

# median per (test, size, stack) and the ratio to the baseline
table() { # TEST TITLE BASELINE FILES-PREFIX NAMES...
	local test=$1 title=$2 base=$3 prefix=$4; shift 4
	python3 - "$test" "$title" "$base" "$out" "$prefix" "$@" <<'EOF'
import glob, os, statistics, sys
test, title, base, out, prefix, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
safe = lambda s: s.replace(";", "_").replace("+", "p")
vals = {}
for name in names:
    for f in glob.glob(os.path.join(out, f"{prefix}_{safe(name)}_*.txt")):
        for line in open(f):
            p = line.split()
            if len(p) == 3 and p[0] == test:
                vals.setdefault((int(p[1]), name), []).append(float(p[2]))
            elif len(p) == 2 and not line.startswith("#") and test in ("lat", "bw"):
                vals.setdefault((int(p[0]), name), []).append(float(p[1]))
names = [n for n in names if any(k[1] == n for k in vals)]
sizes = sorted({s for s, _ in vals})
if not sizes:
    sys.exit(0)
others = [n for n in names if n != base]
hdr = f"{'size':>8} |" + "".join(f" {n[:12]:>12} |" for n in names)
hdr += "".join(f" {(n[:10] + '/base'):>15} |" for n in others)
print(f"\n{title}; base = {base}; median of runs (n)")
print(hdr)
for s in sizes:
    med = {n: statistics.median(vals[(s, n)]) if (s, n) in vals else None for n in names}
    row = f"{s:>8} |"
    for n in names:
        row += f" {med[n]:>8.2f} ({len(vals[(s, n)])}) |" if med[n] is not None else f" {'-':>12} |"
    b = med.get(base)
    for n in others:
        row += f" {med[n] / b:>15.2f} |" if med[n] is not None and b else f" {'-':>15} |"
    print(row)
EOF
}
names=()
for s in "${stacks[@]}"; do names+=("${s%%|*}"); done
for topo in $TOPO; do
	where=$([ "$topo" = lo ] && echo "loopback" || echo "two namespace hosts (veth)")
	table lat "$where: one-way latency us, lower is better" "tcp;ofi_rxm" "ofi_$topo" "${names[@]}"
	table bw "$where: bandwidth MB/s, higher is better" "tcp;ofi_rxm" "ofi_$topo" "${names[@]}"
	table mr "$where: message rate msg/s, higher is better" "tcp;ofi_rxm" "ofi_$topo" "${names[@]}"
done

[ "${MPI:-1}" = 1 ] || exit 0
mpirun=$(sed -n 's/^MPIRUN = //p' "$bench/Makefile")
[ -x "${mpirun:-}" ] || mpirun=$(command -v mpirun) || { echo "# no mpirun: MPI part skipped"; exit 0; }
[ -x "$bench/osu_latency" ] || { echo "# osu_latency not built: MPI part skipped"; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI_STACKS=("mtl-sctp|--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include sctp -x FI_SCTP_SHM=0"
	"btl-tcp|--mca pml ob1 --mca btl self,tcp")
m=${#MPI_STACKS[@]}
mpi_topos=$TOPO
if [[ " $TOPO " == *" ns "* ]]; then
	export FNN_TB_PREFIX=$NS_PREFIX FNN_TB_NSRUN=$build/test/testbed/tb_nsrun
	if [ ! -x "$FNN_TB_NSRUN" ]; then
		echo "# $FNN_TB_NSRUN not built (make -C $build/test/testbed tb_nsrun): MPI on loopback only"
		mpi_topos=lo
	fi
fi
echo
echo "# MPI, 2 ranks, OSU -q $Q, topologies: $mpi_topos; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
	for topo in $mpi_topos; do
		if [ "$topo" = lo ]; then
			topt=(-x FI_SCTP_ADDRS=127.0.0.1 --mca btl_tcp_if_include lo)
			wrap=()
		else
			topt=()
			wrap=("$src/test/testbed/in-pc-ns.sh")
		fi
		for k in $(seq 0 $((m - 1))); do
			s=${MPI_STACKS[$(((k + r) % m))]}
			name=${s%%|*}
			opts=${s#*|}
			for t in latency bw; do
				f=$out/mpi_${topo}_${t}_$(safe "$name")_$r.txt
				# shellcheck disable=SC2086
				timeout -k 10 1800 "$mpirun" --allow-run-as-root --bind-to none -np 2 \
					-x FI_PROVIDER_PATH "${topt[@]}" $opts "${wrap[@]}" \
					"$bench/osu_$t" -q "$Q" -m "$MAX" >"$f" 2>"$f.err" ||
					echo "# $topo $name $t round $r failed: $(tail -1 "$f.err")"
			done
		done
	done
done
mnames=()
for s in "${MPI_STACKS[@]}"; do mnames+=("${s%%|*}"); done
for topo in $mpi_topos; do
	where=$([ "$topo" = lo ] && echo "loopback" || echo "two namespace hosts (veth)")
	table lat "$where: MPI one-way latency us (osu_latency), lower is better" btl-tcp \
		"mpi_${topo}_latency" "${mnames[@]}"
	table bw "$where: MPI bandwidth MB/s (osu_bw), higher is better" btl-tcp \
		"mpi_${topo}_bw" "${mnames[@]}"
done

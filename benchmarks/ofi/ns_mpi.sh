#!/usr/bin/env bash
# ns_mpi.sh <build dir>: two namespace hosts joined by one veth link limited by a tbf (RATE,
# default 10gbit; burst 1mb, latency 10ms on both ends), at each MTU of MTUS (1500 9000):
#   MPI: OSU latency, bandwidth and bidirectional bandwidth (benchmarks/btl's programs), 2
#     ranks, one per namespace (test/testbed/in-pc-ns.sh): Open MPI's pml cm + mtl ofi on the
#     sctp provider and pml ob1 + btl self,sctp (SCTP associations: FI_SCTP_SHM=0,
#     SCTPT_SHM=0) against pml ob1 + btl self,tcp;
#   libfabric: ofi_bench (OFI_TESTS, default bw) of sctp against tcp;ofi_rxm.
# Rounds interleave everything (the order of the stacks rotates); the tables give per size
# the median over the rounds and the ratio to the baseline (btl tcp; tcp;ofi_rxm).
# Environment: ROUNDS (3), Q (OSU iteration counts times Q; 0.2), MAX (4 MiB), RATE, MTUS,
# MPI_TESTS (latency bw bibw), MPI_NAMES (btl-tcp mtl-sctp btl-sctp: a subset), OFI_TESTS, MPI=0 / OFI=0 (skip a part), LOCK=FILE (each round at each MTU runs under
# flock FILE: a machine-wide lock for timed runs), KEEP=1 (keep the raw outputs).
set -u
build=${1:?usage: ns_mpi.sh <build dir>}
build=$(cd "$build" && pwd) || exit 2
src=$(cd "$(dirname "$0")/../.." && pwd)
bench=$build/benchmarks/ofi
ROUNDS=${ROUNDS:-3}
Q=${Q:-0.2}
MAX=${MAX:-$((4 << 20))}
RATE=${RATE:-10gbit}
MTUS=${MTUS:-1500 9000}
OFI_TESTS=${OFI_TESTS:-bw}
MPI_TESTS=${MPI_TESTS:-latency bw bibw}
MPI_NAMES=${MPI_NAMES:-btl-tcp mtl-sctp btl-sctp}
export FI_PROVIDER_PATH=$build/ofi-provider/.libs
[ -f "$FI_PROVIDER_PATH/libsctp-fi.so" ] || { echo "ns_mpi.sh: provider not built" >&2; exit 2; }
mpibench=$build/benchmarks/btl
mpirun=$(sed -n 's/^MPIRUN = //p' "$mpibench/Makefile" 2>/dev/null)
[ -x "${mpirun:-}" ] || mpirun=$(command -v mpirun) || { echo "ns_mpi.sh: no mpirun" >&2; exit 77; }
export FNN_TB_NSRUN=$build/test/testbed/tb_nsrun
[ -x "$FNN_TB_NSRUN" ] || { echo "ns_mpi.sh: $FNN_TB_NSRUN not built" >&2; exit 2; }

. "$src/test/common.sh"
need_netns
ns_add pc0
ns_add pc1
NS0=$(ns_name pc0) NS1=$(ns_name pc1)
ns_link "$NS0" v0 198.18.0.1/24 "$NS1" v1 198.18.0.2/24
if [ -n "$RATE" ]; then
	tc -n "$NS0" qdisc add dev v0 root tbf rate "$RATE" burst 1mb latency 10ms || exit 2
	tc -n "$NS1" qdisc add dev v1 root tbf rate "$RATE" burst 1mb latency 10ms || exit 2
fi
export FNN_TB_PREFIX=$NS_PREFIX
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

out=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "raw outputs in $out" >&2 || rm -rf "$out"; ns_cleanup' EXIT
safe() { echo "$1" | tr ';+' '_p'; }

compdir=$(sed -n 's/^OMPI_COMPONENTDIR = //p' "$mpibench/Makefile")
MPI_STACKS=()
for s in "btl-tcp|--mca pml ob1 --mca btl self,tcp" \
	"mtl-sctp|--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include sctp -x FI_SCTP_SHM=0" \
	"btl-sctp|--mca pml ob1 --mca btl self,sctp -x SCTPT_SHM=0 --mca mca_base_component_path $build/ompi-btl/.libs:$compdir"; do
	case " $MPI_NAMES " in *" ${s%%|*} "*) MPI_STACKS+=("$s") ;; esac
done
OFI_STACKS=("tcp;ofi_rxm|tcp;ofi_rxm|" "sctp|sctp|FI_SCTP_SHM=0")

# round R at MTU M: every stack once, the order rotating with R
round() {
	local r=$1 mtu=$2 k s name opts prov envs f n
	n=${#MPI_STACKS[@]}
	for k in $(seq 0 $((n - 1))); do
		[ "${MPI:-1}" = 1 ] || break
		s=${MPI_STACKS[$(((k + r) % n))]}
		name=${s%%|*} opts=${s#*|}
		for t in $MPI_TESTS; do
			f=$out/mpi_${mtu}_${t}_$(safe "$name")_$r.txt
			# shellcheck disable=SC2086
			timeout -k 10 600 "$mpirun" --allow-run-as-root --bind-to none -np 2 \
				--mca btl_base_warn_component_unused 0 -x FI_PROVIDER_PATH $opts \
				"$src/test/testbed/in-pc-ns.sh" "$mpibench/bench_$t" -q "$Q" -m "$MAX" \
				>"$f" 2>"$f.err" ||
				{ echo "# MTU $mtu $name $t round $r failed: $(tail -1 "$f.err")"; rm -f "$f"; }
		done
	done
	n=${#OFI_STACKS[@]}
	for k in $(seq 0 $((n - 1))); do
		[ "${OFI:-1}" = 1 ] || break
		IFS='|' read -r name prov envs <<<"${OFI_STACKS[$(((k + r) % n))]}"
		f=$out/ofi_${mtu}_$(safe "$name")_$r.txt
		# shellcheck disable=SC2086
		env $envs timeout -k 10 600 "$bench/ofi_bench" -p "$prov" -t "$OFI_TESTS" -q "$Q" \
			-m "$MAX" -n "$NS0,$NS1" -s 198.18.0.1,198.18.0.2 >"$f" 2>"$f.err" ||
			{ echo "# MTU $mtu ofi $name round $r failed: $(tail -1 "$f.err")"; rm -f "$f"; }
	done
}

echo "# ns_mpi.sh: two namespace hosts, one veth link${RATE:+ limited to $RATE (tbf)}," \
	"MTUs $MTUS; $(date -u '+%F %T') UTC; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" \
	"at the start (a machine shared with other work: compare ratios)"
echo "# $ROUNDS rounds interleaved, Q=$Q, MAX=$MAX, ofi_bench -t $OFI_TESTS, git" \
	"$(git -C "$src" rev-parse --short HEAD 2>/dev/null)"
for s in "${MPI_STACKS[@]}" "${OFI_STACKS[@]}"; do echo "#   $s"; done
for r in $(seq 1 "$ROUNDS"); do
	for mtu in $MTUS; do
		ip -n "$NS0" link set v0 mtu "$mtu"
		ip -n "$NS1" link set v1 mtu "$mtu"
		if [ -n "${LOCK:-}" ]; then
			exec {lfd}>"$LOCK"
			flock "$lfd"
			round "$r" "$mtu"
			exec {lfd}>&-
		else
			round "$r" "$mtu"
		fi
		echo "# round $r MTU $mtu done, load $(cut -d' ' -f1-3 /proc/loadavg)"
	done
done

python3 - "$out" "$MTUS" "$MPI_NAMES" <<'EOF'
import glob, os, statistics, sys
out, mtus, mpi = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def table(prefix, test, names, base, title):
    vals = {}
    for name in names:
        s = name.replace(";", "_").replace("+", "p")
        for f in glob.glob(os.path.join(out, f"{prefix}_{s}_*.txt")):
            for line in open(f):
                p = line.split()
                if line.startswith("#") or not p:
                    continue
                if len(p) == 3 and p[0] == test:
                    vals.setdefault((int(p[1]), name), []).append(float(p[2]))
                elif len(p) == 2:
                    vals.setdefault((int(p[0]), name), []).append(float(p[1]))
    if not vals:
        return
    others = [n for n in names if n != base]
    print(f"\n{title}; median of rounds (n), ratio to {base}")
    print(f"{'size':>8} |" + "".join(f" {n:>14} |" for n in names) +
          "".join(f" {n[:10] + '/base':>15} |" for n in others))
    for z in sorted({k[0] for k in vals}):
        med = {n: statistics.median(vals[(z, n)]) for n in names if (z, n) in vals}
        row = f"{z:>8} |"
        for n in names:
            row += f" {med[n]:>9.2f} ({len(vals[(z, n)])}) |" if n in med else f" {'-':>14} |"
        for n in others:
            row += f" {med[n] / med[base]:>15.2f} |" if n in med and med.get(base) else f" {'-':>15} |"
        print(row)
for mtu in mtus:
    table(f"mpi_{mtu}_latency", "lat", mpi, "btl-tcp",
          f"MTU {mtu}: MPI one-way latency us (osu_latency), lower is better")
    table(f"mpi_{mtu}_bw", "bw", mpi, "btl-tcp",
          f"MTU {mtu}: MPI bandwidth MB/s (osu_bw), higher is better")
    table(f"mpi_{mtu}_bibw", "bibw", mpi, "btl-tcp",
          f"MTU {mtu}: MPI bidirectional bandwidth MB/s (osu_bibw), higher is better")
    for t, what in (("lat", "one-way latency us, lower"), ("bw", "bandwidth MB/s, higher"),
                    ("mr", "message rate msg/s, higher")):
        table(f"ofi_{mtu}", t, ["tcp;ofi_rxm", "sctp"], "tcp;ofi_rxm",
              f"MTU {mtu}: ofi_bench {what} is better")
EOF
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

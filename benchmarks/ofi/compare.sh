#!/usr/bin/env bash
# compare.sh <build dir> [output dir]: the libfabric provider sctp against libfabric's own
# tcp;ofi_rxm, net and udp;ofi_rxd, and MPI over mtl ofi + sctp against ob1 + btl tcp, in the
# same run, with the OSU methodology:
#   libfabric: ofi_bench (tagged messages, busy-polling fi_cq_read): one-way latency 0 B ..
#     MAX, bandwidth (window of 64, then an ack) 1 B .. MAX, message rate 1 B .. 4 KiB;
#   MPI: osu_latency and osu_bw built from benchmarks/btl's sources, 2 ranks.
# Every stack runs once per round, the order rotating between rounds, so all see the same
# machine; tables show the median over ROUNDS (default 3) per size and the ratio to the
# baseline (tcp;ofi_rxm; btl tcp). Same-host peers: sctp runs with FI_SCTP_SHM=0 (SCTP
# associations over the host's interface, as between hosts) on the core's default engine
# (usrsctp) and on its native engine; "sctp+shm" is the core's shared memory, for reference.
# Environment: ROUNDS=N, Q=F (OSU iteration counts times F; default 0.2), MAX=bytes (4 MiB),
# STACKS="..." (subset of the libfabric stacks), MPI=0 (skip the MPI part).
set -u
build=${1:?usage: compare.sh <build dir> [output dir]}
build=$(cd "$build" && pwd) || exit 2
out=${2:-$build/benchmarks/ofi/results}
bench=$build/benchmarks/ofi
mkdir -p "$out" || exit 2
ROUNDS=${ROUNDS:-3}
Q=${Q:-0.2}
MAX=${MAX:-$((4 << 20))}
export FI_PROVIDER_PATH=$build/ofi-provider/.libs
[ -f "$FI_PROVIDER_PATH/libsctp-fi.so" ] || { echo "compare.sh: libsctp-fi.so not built" >&2; exit 2; }
[ -x "$bench/ofi_bench" ] || { echo "compare.sh: $bench/ofi_bench not built" >&2; exit 2; }

# name|provider|environment
ALL_STACKS=("sctp|sctp|FI_SCTP_SHM=0"
	"sctp-native|sctp|FI_SCTP_SHM=0 FI_SCTP_BACKEND=native"
	"sctp+shm|sctp|FI_SCTP_SHM=1"
	"tcp;ofi_rxm|tcp;ofi_rxm|"
	"net|net|"
	"udp;ofi_rxd|udp;ofi_rxd|")
stacks=()
for s in "${ALL_STACKS[@]}"; do
	name=${s%%|*}
	[ -z "${STACKS:-}" ] || [[ " $STACKS " == *" $name "* ]] && stacks+=("$s")
done
safe() { echo "$1" | tr ';+' '_p'; }

echo "# ofi_bench, $ROUNDS rounds, Q=$Q, MAX=$MAX; host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# this machine is shared with other jobs: compare ratios within a run, not absolute values"
n=${#stacks[@]}
for r in $(seq 1 "$ROUNDS"); do
	for k in $(seq 0 $((n - 1))); do
		s=${stacks[$(((k + r) % n))]}
		IFS='|' read -r name prov envs <<<"$s"
		f=$out/ofi_$(safe "$name")_$r.txt
		# shellcheck disable=SC2086
		if ! env $envs timeout 1800 "$bench/ofi_bench" -p "$prov" -q "$Q" -m "$MAX" >"$f" 2>"$f.err"; then
			echo "# $name round $r failed: $(tail -1 "$f.err")"
		fi
	done
done

# median per (test, size, stack) and the ratio to the baseline
table() { # TEST UNIT BASELINE FILES-PREFIX NAMES...
	local test=$1 unit=$2 base=$3 prefix=$4; shift 4
	python3 - "$test" "$unit" "$base" "$out" "$prefix" "$@" <<'EOF'
import glob, os, statistics, sys
test, unit, base, out, prefix, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
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
sizes = sorted({s for s, _ in vals})
if not sizes:
    sys.exit(0)
hdr = f"{'size':>8} |" + "".join(f" {n[:12]:>12} |" for n in names)
hdr += "".join(f" {(n[:9] + '/' + base[:5]):>15} |" for n in names if n != base)
print(f"\n{test} ({unit}), median of runs")
print(hdr)
for s in sizes:
    med = {n: statistics.median(vals[(s, n)]) if (s, n) in vals else None for n in names}
    row = f"{s:>8} |" + "".join(f" {med[n]:>12.2f} |" if med[n] is not None else f" {'-':>12} |" for n in names)
    for n in names:
        if n == base:
            continue
        b = med.get(base)
        row += f" {med[n] / b:>15.2f} |" if med[n] is not None and b else f" {'-':>15} |"
    print(row)
EOF
}
names=()
for s in "${stacks[@]}"; do names+=("${s%%|*}"); done
table lat "one-way us, lower is better" "tcp;ofi_rxm" ofi "${names[@]}"
table bw "MB/s, higher is better" "tcp;ofi_rxm" ofi "${names[@]}"
table mr "messages/s, higher is better" "tcp;ofi_rxm" ofi "${names[@]}"

[ "${MPI:-1}" = 1 ] || exit 0
mpirun=$(sed -n 's/^MPIRUN = //p' "$bench/Makefile")
[ -x "${mpirun:-}" ] || mpirun=$(command -v mpirun) || { echo "# no mpirun: MPI part skipped"; exit 0; }
[ -x "$bench/osu_latency" ] || { echo "# osu_latency not built: MPI part skipped"; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
base_opts=(--allow-run-as-root --bind-to none -np 2 -x FI_PROVIDER_PATH)
MPI_STACKS=("mtl-sctp|--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include sctp -x FI_SCTP_SHM=0"
	"mtl-sctp-native|--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include sctp -x FI_SCTP_SHM=0 -x FI_SCTP_BACKEND=native"
	"btl-tcp|--mca pml ob1 --mca btl self,tcp")
m=${#MPI_STACKS[@]}
echo
echo "# MPI, 2 ranks on this host, OSU -q $Q; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
	for k in $(seq 0 $((m - 1))); do
		s=${MPI_STACKS[$(((k + r) % m))]}
		name=${s%%|*}
		opts=${s#*|}
		for t in latency bw; do
			f=$out/mpi_${t}_$(safe "$name")_$r.txt
			# shellcheck disable=SC2086
			timeout 1800 "$mpirun" "${base_opts[@]}" $opts "$bench/osu_$t" -q "$Q" -m "$MAX" \
				>"$f" 2>"$f.err" || echo "# $name $t round $r failed: $(tail -1 "$f.err")"
		done
	done
done
mnames=()
for s in "${MPI_STACKS[@]}"; do mnames+=("${s%%|*}"); done
table lat "MPI one-way us (osu_latency), lower is better" btl-tcp mpi_latency "${mnames[@]}"
table bw "MPI MB/s (osu_bw), higher is better" btl-tcp mpi_bw "${mnames[@]}"

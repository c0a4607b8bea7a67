#!/usr/bin/env bash
# shm_mpi.sh <build dir>: two MPI ranks on one host, Open MPI's mtl ofi over the sctp provider
# (its same-host path: the core's shared memory, FI_SCTP_SHM=1) against ob1 + btl self,vader
# (mtl ofi does not initialise over libfabric's own shm provider here: ofi_bench compares the
# two providers, see shm_ofi.sh). OSU's osu_latency and osu_bw
# counts and loops (benchmarks/core/shm_osu: OSU's mean and the median of the loop cut into
# pieces, which a shared machine disturbs less): latency 0 B .. LAT_MAX (64 KiB), bandwidth
# BW_MIN (64 KiB) .. 4 MiB. Each repetition runs every stack, the order rotating; the tables
# give per size the median over the repetitions of both statistics and the ratio to vader
# (latency: lower is better; bandwidth: higher).
# Environment: REPS (5), Q (iteration scale, 1 = OSU's counts), LAT_MAX, BW_MIN, BW_MAX,
# STACKS (subset of "vader mtl-sctp"), BIND (mpirun's --bind-to: none, or core),
# KEEP=1 (keep the raw outputs).
set -u
build=${1:?usage: shm_mpi.sh <build dir>}
build=$(cd "$build" && pwd) || exit 2
osu=$build/benchmarks/core/shm_osu
mpirun=$(sed -n 's/^MPIRUN = //p' "$build/benchmarks/ofi/Makefile" 2>/dev/null)
[ -x "${mpirun:-}" ] || mpirun=$(command -v mpirun) || { echo "shm_mpi.sh: no mpirun" >&2; exit 77; }
[ -f "$build/ofi-provider/.libs/libsctp-fi.so" ] || { echo "shm_mpi.sh: provider not built" >&2; exit 2; }
[ -x "$osu" ] || { echo "shm_mpi.sh: $osu not built (make -C $build/benchmarks/core shm_osu)" >&2; exit 2; }
reps=${REPS:-5}
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "raw outputs in $tmp" >&2 || rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export FI_PROVIDER_PATH=$build/ofi-provider/.libs
common=(--allow-run-as-root --oversubscribe --bind-to "${BIND:-none}" -np 2
	--mca btl_base_warn_component_unused 0 -x FI_PROVIDER_PATH)
declare -A opts=(
	[vader]="--mca pml ob1 --mca btl self,vader"
	[mtl-sctp]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include sctp -x FI_SCTP_SHM=1"
)
read -r -a stacks <<<"${STACKS:-vader mtl-sctp}"
n=${#stacks[@]}

run() { # stack test rep
	local args
	case $2 in
	latency) args=(-t latency -n 0 -m "${LAT_MAX:-65536}") ;;
	bw) args=(-t bw -n "${BW_MIN:-65536}" -m "${BW_MAX:-4194304}") ;;
	esac
	# shellcheck disable=SC2086
	timeout -k 10 900 "$mpirun" "${common[@]}" ${opts[$1]} "$osu" "${args[@]}" \
		-q "${Q:-1}" >"$tmp/$1.$2.$3" 2>"$tmp/err.$1.$2.$3" ||
		{ echo "# $1 $2 rep $3 failed: $(tail -1 "$tmp/err.$1.$2.$3")"; rm -f "$tmp/$1.$2.$3"; }
}

echo "# shm_mpi.sh: 2 ranks on one host, $(date -u '+%F %T') UTC, $(nproc) CPUs, load" \
	"$(cut -d' ' -f1-3 /proc/loadavg) at the start (a machine shared with other work:" \
	"compare ratios), $reps repetitions, Q=${Q:-1}, bound to ${BIND:-none}"
for s in "${stacks[@]}"; do echo "#   $s: ${opts[$s]}"; done
for r in $(seq 1 "$reps"); do
	for t in latency bw; do
		for k in $(seq 0 $((n - 1))); do
			run "${stacks[$(((k + r) % n))]}" "$t" "$r"
		done
	done
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp" "${stacks[@]}" <<'EOF'
import glob, os, statistics, sys
tmp, stacks = sys.argv[1], sys.argv[2:]
for test, unit in (("latency", "us, lower is better"), ("bw", "MB/s, higher is better")):
    vals = {}
    for s in stacks:
        for f in glob.glob(os.path.join(tmp, f"{s}.{test}.*")):
            for line in open(f):
                p = line.split()
                if len(p) == 3 and not line.startswith("#"):
                    vals.setdefault((int(p[0]), s), []).append((float(p[2]), float(p[1])))
    sizes = sorted({k[0] for k in vals})
    base = stacks[0]
    print(f"\n# {test}, {unit}: median over repetitions of the median of pieces "
          f"(of OSU's mean); ratio to {base} (runs)")
    print(f"{'size':>8} |" + "".join(f" {s:>20} |" for s in stacks) +
          "".join(f" {s + '/' + base:>16} |" for s in stacks[1:]))
    for z in sizes:
        med = {}
        row = f"{z:>8} |"
        for s in stacks:
            v = vals.get((z, s))
            if not v:
                row += f" {'-':>20} |"
                continue
            med[s] = (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
            row += f" {med[s][0]:>9.2f} ({med[s][1]:>8.2f}) |"
        for s in stacks[1:]:
            if s in med and base in med and med[base][0] > 0:
                row += f" {med[s][0] / med[base][0]:>8.2f} ({len(vals[(z, s)])}/{len(vals[(z, base)])}) |"
            else:
                row += f" {'-':>16} |"
        print(row)
EOF

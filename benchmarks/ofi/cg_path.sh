#!/usr/bin/env bash
# cg_path.sh <build dir> NAME=PROVIDER_DIR... : the provider's instructions per operation on
# the small-message path, under callgrind, for each provider build (a directory holding a
# libsctp-fi.so; "new=" alone means the build's own), on the same-host rings (FI_SCTP_SHM=1)
# and on SCTP over loopback (FI_SCTP_SHM=0):
#   lat SIZE: ofi_bench -t lat -z SIZE -m SIZE -q 0.2 (100 + 2000 + 1 round trips), rank 0's
#             profile: fi_tinject, fi_trecv and the arrival of a message (sctp_msg_arrived)
#             per call, and rank 0's whole share of a round trip (ofi_bench's send1, reap_rx
#             and post_recv: busy-polling included) with its fi_cq_read calls
#   idle:     ofi_bench -t idle -q 0.2 (1 s of busy-polling with nothing to come): one empty
#             fi_cq_read, and the core's share of it (sctpt_progress)
# Instruction counts do not depend on the machine's load (call counts of the busy-poll do).
# Environment: SIZES (default "0 64"), SHM (default "1 0"), OUT (keep the profiles there).
set -u
build=${1:?usage: cg_path.sh <build dir> NAME=PROVIDER_DIR...}
build=$(cd "$build" && pwd) || exit 2
shift
bench=$build/benchmarks/ofi/ofi_bench
here=$(cd "$(dirname "$0")" && pwd)
cg=$here/cg_calls.py
[ -x "$bench" ] || { echo "cg_path.sh: $bench not built" >&2; exit 2; }
if [ -n "${OUT:-}" ]; then
	out=$OUT
	mkdir -p "$out" || exit 2
else
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
echo "# cg_path.sh: $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg);" \
	"valgrind --tool=callgrind, instructions (Ir)"

# run NAME DIR SHM TAG ARGS...: profiles of both ranks; prints rank 0's file
run() {
	local name=$1 dir=$2 shm=$3 tag=$4
	shift 4
	rm -f "$out/$name.$tag.shm$shm".*
	env FI_PROVIDER_PATH="$dir" FI_SCTP_ADDRS=127.0.0.1 FI_SCTP_SHM="$shm" \
		timeout 900 valgrind --tool=callgrind -q \
		--callgrind-out-file="$out/$name.$tag.shm$shm.%p" "$bench" -p sctp "$@" \
		>"$out/$name.$tag.shm$shm.txt" 2>&1 || echo "# $name $tag shm=$shm failed"
	# the parent of the two ranks only waits: the ranks are the two larger profiles,
	# rank 0 the first forked
	ls "$out/$name.$tag.shm$shm".[0-9]* | sort -t. -k4 -n | sed -n 2p
}

for spec in "$@"; do
	name=${spec%%=*}
	dir=${spec#*=}
	[ -n "$dir" ] || dir=$build/ofi-provider/.libs
	for shm in ${SHM:-1 0}; do
		echo "## $name ($dir), FI_SCTP_SHM=$shm"
		for size in ${SIZES:-0 64}; do
			f=$(run "$name" "$dir" "$shm" "lat$size" -t lat -z "$size" -m "$size" -q 0.2)
			echo "-- lat $size B, rank 0"
			python3 "$cg" "$f" tag_inject tag_recv sctp_msg_arrived cq_readfrom sctpt_send |
				sed 's/^/   /'
			python3 - "$f" "$cg" <<'EOF'
import subprocess, sys
f, cg = sys.argv[1], sys.argv[2]
rows = {}
loop = ["lf_send1", "lf_reap_rx", "lf_post_recv"]
for line in subprocess.run(["python3", cg, f, *loop, "cq_readfrom"], capture_output=True,
                           text=True).stdout.splitlines():
    p = line.split()
    rows[p[0]] = (int(p[2].replace(",", "")), int(p[4].replace(",", "")))
iters = rows.get("lf_send1", (0, 0))[0] or 1
total = sum(rows.get(k, (0, 0))[1] for k in loop)
print(f"   per round trip: {total / iters:.0f} instructions (busy-polling included), "
      f"{rows.get('cq_readfrom', (0, 0))[0] / iters:.1f} fi_cq_read calls")
EOF
		done
		f=$(run "$name" "$dir" "$shm" idle -t idle -q 0.2)
		echo "-- idle busy-poll, rank 0"
		python3 "$cg" "$f" cq_readfrom sctp_progress sctpt_progress sctpt_cq_read |
			sed 's/^/   /'
	done
done

#!/usr/bin/env bash
# run_bench.sh BUILDDIR [RATE] [SECONDS] [SEED]: Open MPI btl tcp baselines on the emulated FNN
# cluster (test/testbed/fnn-cluster.sh), the numbers the core's FNN striping must beat.
#
# 1. Two PCs sharing K = 1..4 switches (a design per K: "s: 0 1" for s < K), RATE per NIC
#    (default 200mbit), links of MTU bytes (environment MTU, default 1500; 9000: jumbo
#    frames), one direction, 8 x 1 MiB windows for SECONDS (default 5): btl tcp over
#    the K shared NICs (its multi-interface mode) against btl tcp over nic0 alone, same run.
# 2. Bisection: a random pairing (SEED) of the 8 PCs of test/testbed/designs/pc8x3.table,
#    both directions at once, each rank's btl_tcp_if_include set to the NICs it shares with
#    its partner (all of them, then the first one), summed over the ranks.
# With BUILDDIR/ompi-btl/.libs/mca_btl_sctp.so built, the same runs go over our btl sctp too:
# striped by the cluster's FNN table (btl_sctp_fnn_table/_fnn_addrs: the core's striping)
# and over nic0 alone, same cluster, right after the btl tcp runs (SCTP=no skips them), and
# over one multihomed association with the core's CMT (CMT=no skips it); for the striped and
# CMT runs, how PC 0's sent bytes split over its NICs (percent).
# Needs root, Open MPI, and BUILDDIR with test/testbed/tb_nsrun and benchmarks/testbed/tb_bw
# (`make` there).  Every cluster it brings up is taken down on exit.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
B=$(cd "${1:?usage: run_bench.sh BUILDDIR [RATE] [SECONDS] [SEED]}" && pwd)
RATE=${2:-200mbit} SECS=${3:-5} SEED=${4:-1} MTU=${MTU:-1500}
CLUSTER=$SRC/test/testbed/fnn-cluster.sh
export FNN_TB_NSRUN=$B/test/testbed/tb_nsrun OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BW=$B/benchmarks/testbed/tb_bw
BTL_LIBDIR=$B/ompi-btl/.libs
OMPI_COMPONENTDIR=$(sed -n "s/^OMPI_COMPONENTDIR = //p" "$B/Makefile")
SCTP=${SCTP:-yes}
[ -f "$BTL_LIBDIR/mca_btl_sctp.so" ] || SCTP=no
MPIRUN=$(command -v mpirun.openmpi || command -v mpirun)
[ "$(id -u)" -eq 0 ] || { echo "run_bench.sh: needs root" >&2; exit 77; }
[ -x "$BW" ] && [ -x "$FNN_TB_NSRUN" ] || { echo "run_bench.sh: build $BW and $FNN_TB_NSRUN first" >&2; exit 1; }

PREFIX="bt$$" TMP=$(mktemp -d)
cleanup() { timeout 60 "$CLUSTER" down --prefix "$PREFIX" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

# bw NP IFS|- ARGS...: runs tb_bw on NP ranks in the cluster, prints the summed MB/s.
bw() {
	local np=$1 ifs=$2 out; shift 2
	local opt=(--mca btl_tcp_if_include "$ifs")
	[ "$ifs" != - ] || opt=()
	out=$(FNN_TB_PREFIX=$PREFIX timeout -k 10 $((SECS * 3 + 60)) "$MPIRUN" --allow-run-as-root \
		--oversubscribe --bind-to none -np "$np" --mca pml ob1 --mca btl self,tcp \
		--mca btl_base_warn_component_unused 0 "${opt[@]}" "$SRC/test/testbed/in-pc-ns.sh" \
		"$BW" --seconds "$SECS" "$@" 2>&1)
	echo "$out" | grep -q '^BW ' || { echo "$out" | tail -3 >&2; echo "failed"; return 1; }
	echo "$out" | awk '/^BW / { s += $NF } END { printf "%.1f\n", s }'
}

# bw_sctp NP fnn|IFS|cmt:IFS ARGS...: the same over btl self,sctp: striped by the cluster's FNN
# table and address map (fnn), bound to the interfaces IFS, or one association multihomed
# over IFS with the core's CMT (packets sprayed over all live paths beneath SCTP, usrsctp's
# CMT RPv2 on: the closest this usrsctp gets to its own CMT, see README.md).
bw_sctp() {
	local np=$1 mode=$2 out dir=/run/fnn-testbed/$PREFIX; shift 2
	local opt=(--mca btl_sctp_fnn_table "$dir/table" --mca btl_sctp_fnn_addrs "$dir/addrs")
	case "$mode" in
	fnn) ;;
	cmt:*) opt=(--mca btl_sctp_if_include "${mode#cmt:}" --mca btl_sctp_cmt 1) ;;
	*) opt=(--mca btl_sctp_if_include "$mode") ;;
	esac
	out=$(FNN_TB_PREFIX=$PREFIX timeout -k 10 $((SECS * 3 + 60)) "$MPIRUN" --allow-run-as-root \
		--oversubscribe --bind-to none -np "$np" --mca pml ob1 --mca btl self,sctp \
		--mca mca_base_component_path "$BTL_LIBDIR:$OMPI_COMPONENTDIR" \
		--mca btl_base_warn_component_unused 0 "${opt[@]}" "$SRC/test/testbed/in-pc-ns.sh" \
		"$BW" --seconds "$SECS" "$@" 2>&1)
	echo "$out" | grep -q '^BW ' || { echo "$out" | tail -3 >&2; echo "failed"; return 1; }
	echo "$out" | awk '/^BW / { s += $NF } END { printf "%.1f\n", s }'
}

ratio() { awk -v m="$1" -v s="$2" 'BEGIN { if (s > 0 && m > 0) printf "%.2fx", m / s; else print "-" }'; }

# tx_split K: PC 0's bytes sent on nic0..nic(K-1) since the last call, as percentages "a/b/..".
declare -A _tx_last
tx_split() {
	local k=$1 i v d total=0 parts=()
	for ((i = 0; i < k; i++)); do
		v=$(ip -n "$PREFIX-pc0" -s -j link show "nic$i" | sed 's/.*"tx":{"bytes":\([0-9]*\).*/\1/')
		d[$i]=$((v - ${_tx_last[$i]:-0}))
		_tx_last[$i]=$v
		total=$((total + d[i]))
	done
	for ((i = 0; i < k; i++)); do
		parts+=("$(awk -v a="${d[$i]}" -v t="$total" 'BEGIN { printf "%.0f", t ? 100 * a / t : 0 }')")
	done
	(IFS=/; echo "${parts[*]}")
}

CMT=${CMT:-yes}
[ "$SCTP" != no ] || CMT=no
echo "# btl tcp, 2 PCs, $RATE per NIC, MTU $MTU, ${SECS} s, one direction, 8 x 1 MiB in flight"
printf '%-13s %-16s %-16s %-8s' "shared rails" "btl tcp MB/s" "one rail MB/s" "ratio"
[ "$SCTP" = no ] || printf '%-18s %-18s %-7s %-15s' "sctp striped MB/s" "sctp one rail MB/s" "ratio" "striped split% "
[ "$CMT" = no ] || printf '%-14s %-7s %s' "sctp CMT MB/s" "ratio" "CMT split%"
echo
for k in ${RAILS:-1 2 3 4}; do
	: >"$TMP/pair$k.table"
	ifs=""
	for ((s = 0; s < k; s++)); do
		echo "$s: 0 1" >>"$TMP/pair$k.table"
		ifs+="${ifs:+,}nic$s"
	done
	timeout 60 "$CLUSTER" up "$TMP/pair$k.table" --prefix "$PREFIX" --rate "$RATE" --mtu "$MTU" >/dev/null || exit 1
	multi=$(bw 2 "$ifs") single=$(bw 2 nic0)
	printf '%-13s %-16s %-16s %-8s' "$k" "$multi" "$single" "$(ratio "$multi" "$single")"
	if [ "$SCTP" != no ]; then
		tx_split "$k" >/dev/null
		smulti=$(bw_sctp 2 fnn)
		ssplit=$(tx_split "$k")
		ssingle=$(bw_sctp 2 nic0)
		printf '%-18s %-18s %-7s %-15s' "$smulti" "$ssingle" "$(ratio "$smulti" "$ssingle")" "$ssplit"
	fi
	if [ "$CMT" != no ]; then
		tx_split "$k" >/dev/null
		scmt=$(bw_sctp 2 "cmt:$ifs")
		printf '%-14s %-7s %s' "$scmt" "$(ratio "$scmt" "$ssingle")" "$(tx_split "$k")"
	fi
	echo
	timeout 60 "$CLUSTER" down --prefix "$PREFIX" || exit 1
done

# Bisection: random pairing of the 8 PCs; per rank, the NICs shared with the partner.
table=$SRC/test/testbed/designs/pc8x3.table
timeout 60 "$CLUSTER" up "$table" --prefix "$PREFIX" --rate "$RATE" --mtu "$MTU" >/dev/null || exit 1
nics=/run/fnn-testbed/$PREFIX/nics
pcs=$(seq 0 7 | awk -v seed="$SEED" 'BEGIN { srand(seed) } { print rand(), $1 }' | sort -n | awk '{ printf "%s%s", (NR > 1 ? "," : ""), $2 }')
IFS=, read -r -a order <<<"$pcs"
all="" one="" desc="" ideal=0
rate_mb=$(echo "$RATE" | awk '{ v = $0 + 0; m = ($0 ~ /gbit$/) ? 1000 : ($0 ~ /kbit$/) ? 0.001 : 1; printf "%.3f", v * m / 8 }')
for ((r = 0; r < 8; r++)); do
	me=${order[$r]} peer=${order[$((r ^ 1))]}
	shared=$(awk -v a="$me" -v b="$peer" '$1 == a { na[$3] = $2 } $1 == b { nb[$3] = 1 }
		END { for (s in na) if (s in nb) printf "%snic%d", (n++ ? "," : ""), na[s] }' "$nics")
	all+="${all:+;}$shared"
	one+="${one:+;}${shared%%,*}"
	if [ $((r & 1)) -eq 0 ]; then
		k=$(echo "$shared" | tr ',' '\n' | wc -l)
		desc+="${desc:+ }$me-$peer:$k"
		ideal=$(awk -v i="$ideal" -v k="$k" -v m="$rate_mb" 'BEGIN { print i + 2 * k * m }')
	fi
done
ball=$(FNN_TB_PCS=$pcs FNN_TB_IFS=$all bw 8 - --bidir)
bone=$(FNN_TB_PCS=$pcs FNN_TB_IFS=$one bw 8 - --bidir)
echo
echo "# bisection, random pairing (seed $SEED) of pc8x3.table, both directions: pairs (PC-PC:shared rails) $desc"
echo "# wire limit for that pairing: $ideal MB/s"
printf '%-24s %s\n' "btl tcp, shared NICs" "$ball MB/s" "btl tcp, one NIC" "$bone MB/s"
if [ "$SCTP" != no ]; then
	sall=$(FNN_TB_PCS=$pcs bw_sctp 8 fnn --bidir)
	printf '%-24s %s\n' "btl sctp, FNN striped" "$sall MB/s"
fi

#!/usr/bin/env bash
# MPICH's mpiexec (Hydra) through the launcher wrapper: tb_allpairs built with mpicc.mpich,
# 4 ranks on the 4-PC design, one rank per PC namespace (in-pc-ns.sh), every message
# checksummed; once with Hydra's default PMI (PMI_FD, an inherited connected socket) and once
# with `-pmi-port` (PMI_PORT=HOST:PORT, relayed into the namespace by tb_nsrun).  Each rank
# reports its /proc/self/ns/net, which must be its PC's namespace.  Debian 12's MPICH 4.0.2
# is ch4:ucx; with MPIR_CVAR_NOLOCAL=1 (no shared memory between the ranks, which share a
# hostname) and UCX_TLS=tcp,self on nic0 its traffic must cross the emulated switch: each
# PC's nic0 has to carry > 1 MB, and the four together at least the payload received.
# tb_pmpi_finalize.c works around MPICH 4.0.2's MPI_Finalize hang over UCX tcp (README.md);
# mpiexec must exit 0, within 5 s of the results.
. "$(dirname "$0")/tb_common.sh"
[ "$(id -u)" -eq 0 ] || skip "the testbed needs root (network namespaces, tc, nft)"
MPIEXEC=$(command -v mpiexec.mpich) || skip "MPICH (mpiexec.mpich) not installed"
MPICC=$(command -v mpicc.mpich) || skip "MPICH (mpicc.mpich) not installed"
need_testbed
[ -x "${FNN_TB_NSRUN:-}" ] || hard "tb_nsrun not built (FNN_TB_NSRUN=${FNN_TB_NSRUN:-})"

work=$(mktemp -d)
trap 'rm -rf "$work"; tb_cleanup' EXIT
# Built here without the project's flags: its compiler wrappers and MPI headers are Open
# MPI's, and under CI's ASan pass the ranks must not need libasan (as for tb_allpairs).
timeout 120 "$MPICC" -O2 -Wall -Wextra -Werror -c -o "$work/fin.o" "$TB_SRC/tb_pmpi_finalize.c" \
	>"$work/cc.log" 2>&1 &&
	timeout 120 "$MPICC" -O2 -I"$TB_SRC" -o "$work/tb_allpairs" "$TB_SRC/tb_allpairs.c" \
		"$work/fin.o" >>"$work/cc.log" 2>&1 || { cat "$work/cc.log"; hard "mpicc.mpich failed"; }

tb_up m "$TB_SRC/designs/pc4x2.table" --rate 200mbit
tx() { ip -n "$TB_PREFIX-pc$1" -s -j link show nic0 | sed 's/.*"tx":{"bytes":\([0-9]*\).*/\1/'; }

# mpich_job NAME SECONDS [MPIEXEC OPTIONS...]: tb_allpairs for SECONDS, 4 ranks, one per
# PC; each rank first prints "NETNS <rank> net:[inode]".  Output in $work/NAME.  Sets rc (the
# job's exit status) and hung (1 if it was ended because it did not exit 5 s after printing
# its results).
mpich_job() {
	local name=$1 secs=$2 pid t=0 seen=
	shift 2
	mkdir "$work/fin.$name"
	FNN_TB_PREFIX=$TB_PREFIX MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=nic0 \
		TB_FINALIZE_DIR="$work/fin.$name" \
		timeout -k 10 60 "$MPIEXEC" "$@" -np 4 "$TB_SRC/in-pc-ns.sh" \
		sh -c 'echo "NETNS ${PMI_RANK:-$PMI_ID} $(readlink /proc/self/ns/net)"; exec "$@"' sh \
		"$work/tb_allpairs" --seconds "$secs" >"$work/$name" 2>&1 &
	pid=$!
	_pids+=("$pid")
	hung=0
	while kill -0 "$pid" 2>/dev/null; do
		[ -n "$seen" ] || ! grep -q '^CHECK allpairs' "$work/$name" || seen=$t
		if [ -n "$seen" ] && [ $((t - seen)) -ge 50 ]; then
			hung=1
			kill "$pid" # timeout passes it to mpiexec, which ends its ranks
			break
		fi
		sleep 0.1
		t=$((t + 1))
	done
	wait "$pid"
	rc=$?
	unset '_pids[-1]'
	# nothing of the job may outlive it (the path is this test's own temporary directory)
	local left
	for t in 1 2 3 4 5 6 7 8 9 10; do
		left=$(ps -eo pid=,args= | awk -v p="$work/tb_allpairs" '$2 == p {print $1}')
		[ -z "$left" ] && break
		sleep 0.5
	done
	[ -z "$left" ] || { kill $left; die "$name: ranks left behind after mpiexec ended: $left"; }
}

# check_job NAME: the results, the namespaces and the NIC counters of the last mpich_job.
check_job() {
	local name=$1 out pc ns want sent total=0 bytes
	out=$(cat "$work/$name")
	echo "$out" | grep '^\(CHECK\|time\|NETNS\)'
	check_allpairs "$out" 4 || { echo "$out" | tail -20; die "$name: messages wrong (exit $rc)"; }
	if [ "$hung" -eq 1 ]; then
		die "$name: mpiexec.mpich did not exit 5 s after the results (a finalize hang, README.md)"
	elif [ "$rc" -ne 0 ]; then
		echo "$out" | tail -20
		die "$name: mpiexec.mpich exited with $rc"
	fi
	for pc in 0 1 2 3; do
		want="net:[$(stat -L -c %i "/run/netns/$TB_PREFIX-pc$pc")]"
		ns=$(echo "$out" | awk -v r="$pc" '$1 == "NETNS" && $2 == r {print $3}')
		[ "$ns" = "$want" ] || die "$name: rank $pc ran in namespace '$ns', not PC $pc's ($want)"
		sent=$(($(tx "$pc") - before[pc]))
		total=$((total + sent))
		echo "$name: PC $pc sent $sent bytes on nic0"
		[ "$sent" -gt 1000000 ] ||
			die "$name: PC $pc's nic0 carried $sent bytes: the rank did not use its NIC"
	done
	bytes=$(echo "$out" | sed -n 's/^CHECK allpairs .* bytes \([0-9]*\) errors.*/\1/p')
	[ "$total" -ge "$bytes" ] ||
		die "$name: the nic0s carried $total bytes, less than the $bytes bytes of payload received"
}

for pc in 0 1 2 3; do before[$pc]=$(tx "$pc"); done
mpich_job pmi_fd 2
check_job pmi_fd
for pc in 0 1 2 3; do before[$pc]=$(tx "$pc"); done
mpich_job pmi_port 1 -pmi-port
check_job pmi_port
tb_down

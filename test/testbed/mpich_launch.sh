#!/usr/bin/env bash
# MPICH's mpiexec (Hydra) through the launcher wrapper: tb_allpairs built with mpicc.mpich,
# 4 ranks on the 4-PC design, one rank per PC namespace (in-pc-ns.sh), every message
# checksummed.  Debian 12's MPICH 4.0.2 is ch4:ucx; with MPIR_CVAR_NOLOCAL=1 (no shared
# memory between the ranks, which share a hostname) and UCX_TLS=tcp,self on nic0 its traffic
# must cross the emulated switch: each PC's nic0 has to carry > 1 MB.
. "$(dirname "$0")/tb_common.sh"
need_testbed
MPIEXEC=$(command -v mpiexec.mpich) || skip "MPICH (mpiexec.mpich) not installed"
MPICC=$(command -v mpicc.mpich) || skip "MPICH (mpicc.mpich) not installed"

work=$(mktemp -d)
trap 'rm -rf "$work"; tb_cleanup' EXIT
# built here, without the project's flags (its compiler wrappers and headers are Open MPI's)
"$MPICC" -O2 -I"$TB_SRC" -o "$work/tb_allpairs" "$TB_SRC/tb_allpairs.c" 2>"$work/cc.log" ||
	{ cat "$work/cc.log"; hard "mpicc.mpich failed"; }

tb_up m "$TB_SRC/designs/pc4x2.table" --rate 200mbit
tx() { ip -n "$TB_PREFIX-pc$1" -s -j link show nic0 | sed 's/.*"tx":{"bytes":\([0-9]*\).*/\1/'; }
for pc in 0 1 2 3; do before[$pc]=$(tx "$pc"); done
out=$(FNN_TB_PREFIX=$TB_PREFIX MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=nic0 \
	timeout -k 10 30 "$MPIEXEC" -np 4 "$TB_SRC/in-pc-ns.sh" "$work/tb_allpairs" --seconds 2 2>&1)
rc=$?
echo "$out" | grep '^\(CHECK\|time\)'
check_allpairs "$out" 4 || { echo "$out" | tail -20; die "tb_allpairs under MPICH: messages wrong (exit $rc)"; }
# MPICH 4.0.2's MPI_Finalize over UCX's tcp transport hangs now and then (about 1 run in 5
# here, with a barrier before it): one rank waits in ucp_worker_progress for its endpoints to
# close while the others wait in the PMI barrier and no longer progress UCX (README.md).
# That is MPICH's, after a complete and checked run; anything else is a failure.
if [ "$rc" -eq 124 ]; then
	echo "NOTE: mpiexec.mpich did not exit after the checked run: MPICH/UCX finalize hang, ended by timeout"
elif [ "$rc" -ne 0 ]; then
	echo "$out" | tail -20
	die "mpiexec.mpich exited with $rc"
fi
for pc in 0 1 2 3; do
	sent=$(($(tx "$pc") - before[pc]))
	echo "PC $pc sent $sent bytes on nic0"
	[ "$sent" -gt 1000000 ] || die "PC $pc's nic0 carried $sent bytes: the rank did not use its PC's NIC"
done
tb_down

#!/usr/bin/env bash
# Open MPI over our btl sctp with the core's FNN striping (btl_sctp_fnn_table/_fnn_addrs),
# one rank per PC namespace, tb_allpairs checking every message: the two cases btl tcp
# cannot do (README.md, "Findings"): PC 1's nic1 down for good 2 s into a run on the 4-PC
# design (nicdown.sh), and all pairs of the 8-PC, 3-NIC design, where pairs share only some
# switches (allpairs8.sh).
. "$(dirname "$0")/tb_common.sh"
need_testbed
need_mpi

tb_up s "$TB_SRC/designs/pc4x2.table" --rate 200mbit
# tx_bytes PC IF: bytes sent on a NIC so far
tx_bytes() { ip -n "$TB_PREFIX-pc$1" -s -j link show "$2" | sed 's/.*"tx":{"bytes":\([0-9]*\).*/\1/'; }
before0=$(tx_bytes 0 nic0) before1=$(tx_bytes 0 nic1)
run_cutting_nic1 tb_mpirun_sctp 4 60 "$TB_ALLPAIRS" --seconds 5
rc=$?
out=$RUN_OUT
[ $rc -eq 0 ] && check_allpairs "$out" 4 || { echo "$out" | tail -20; die "btl sctp striped, nic1 of PC 1 down for good: status $rc"; }
echo "$out" | grep -E '^(CHECK|time)' | sed 's/^/pc4x2, PC 1 nic1 down: /'
d0=$(($(tx_bytes 0 nic0) - before0)) d1=$(($(tx_bytes 0 nic1) - before1))
echo "PC 0 sent $d0 bytes on nic0, $d1 on nic1"
[ "$d0" -gt 1000000 ] && [ "$d1" -gt 1000000 ] || die "btl sctp did not stripe over both NICs of PC 0"
tb_down

tb_up e "$TB_SRC/designs/pc8x3.table" --rate 200mbit
out=$(tb_mpirun_sctp 8 90 "$TB_ALLPAIRS" --rounds 8 --max 262144)
check_allpairs "$out" 8 || { echo "$out" | tail -20; die "btl sctp striped on pc8x3 failed"; }
echo "$out" | grep -E '^(CHECK|time)' | sed 's/^/pc8x3: /'
tb_down

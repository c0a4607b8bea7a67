#!/usr/bin/env bash
# All-pairs MPI traffic (tb_allpairs: every message checksummed and compared byte for byte)
# over Open MPI's btl tcp, one rank per PC namespace of the 4-PC, 2-switch, 2-NIC design:
# over both NICs (btl tcp's multi-interface mode; both NICs must carry traffic) and over one.
. "$(dirname "$0")/tb_common.sh"
need_testbed
need_mpi

tb_up a "$TB_SRC/designs/pc4x2.table" --rate 200mbit
# tx_bytes PC IF: bytes sent on a NIC so far
tx_bytes() { ip -n "$TB_PREFIX-pc$1" -s -j link show "$2" | sed 's/.*"tx":{"bytes":\([0-9]*\).*/\1/'; }

before0=$(tx_bytes 0 nic0) before1=$(tx_bytes 0 nic1)
out=$(tb_mpirun 4 nic0,nic1 90 "$TB_ALLPAIRS" --rounds 20)
check_allpairs "$out" 4 || { echo "$out"; die "all-pairs over nic0,nic1 failed"; }
echo "$out" | grep -E '^(CHECK|time)'
d0=$(($(tx_bytes 0 nic0) - before0)) d1=$(($(tx_bytes 0 nic1) - before1))
echo "PC 0 sent $d0 bytes on nic0, $d1 on nic1"
[ "$d0" -gt 1000000 ] && [ "$d1" -gt 1000000 ] || die "btl tcp did not use both NICs of PC 0"

out=$(tb_mpirun 4 nic0 90 "$TB_ALLPAIRS" --rounds 8)
check_allpairs "$out" 4 || { echo "$out"; die "all-pairs over nic0 alone failed"; }
echo "$out" | grep -E '^(CHECK|time)' | sed 's/^/one rail: /'
tb_down

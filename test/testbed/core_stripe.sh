#!/usr/bin/env bash
# The SCTP core striped by FNN tables (issue 8), one tb_core_stripe process per PC namespace,
# no MPI: all-pairs traffic, every message checksummed and compared byte for byte, ordered
# messages checked for order.  On the 4-PC, 2-switch design every pair gets 2 rails and
# every rail carries fragments; on the 8-PC, 3-NIC design each pair gets exactly as many
# rails as it shares switches (1, 2 or 3), read back from sctpt_peer_stats.
. "$(dirname "$0")/tb_common.sh"
need_testbed
need_core_stripe

tb_up a "$TB_SRC/designs/pc4x2.table" --rate 200mbit
tb_core_stripe 3 --all-rails || { cat "$TB_OUT"/out.*; die "core striping on pc4x2 failed"; }
check_core_stripe 4 || { cat "$TB_OUT"/out.*; die "core striping on pc4x2: messages or rails wrong"; }
grep -h '^\(CHECK\|time\)' "$TB_OUT"/out.*
grep -h '^RAILS pc 0 ' "$TB_OUT"/out.0
rm -rf "$TB_OUT"
tb_down

tb_up b "$TB_SRC/designs/pc8x3.table" --rate 200mbit
tb_core_stripe 3 --max 300000 || { cat "$TB_OUT"/out.*; die "core striping on pc8x3 failed"; }
check_core_stripe 8 || { cat "$TB_OUT"/out.*; die "core striping on pc8x3: messages or rails wrong"; }
grep -h '^CHECK' "$TB_OUT"/out.*
echo "pc8x3: pairs by rails (= shared switches):" \
	"$(grep -h '^RAILS' "$TB_OUT"/out.* | awk '{ n[$7]++ } END { for (k in n) printf "%s rails: %d  ", k, n[k] }')"
rm -rf "$TB_OUT"
tb_down

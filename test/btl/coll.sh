#!/usr/bin/env bash
# Collectives on sub-communicators (btl_coll) on 2, 4 and 8 ranks over tcp and sctp.
. "$(dirname "$0")/btl_common.sh"
for np in 2 4 8; do compare_btls $np ./btl_coll; done

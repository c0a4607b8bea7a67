#!/usr/bin/env bash
# Point-to-point (btl_p2p) on 2, 4 and 8 ranks over btl self,tcp and self,sctp: same answers.
. "$(dirname "$0")/btl_common.sh"
compare_btls 2 ./btl_p2p
compare_btls 4 ./btl_p2p $((1 << 20))
compare_btls 8 ./btl_p2p $((256 << 10))
finish

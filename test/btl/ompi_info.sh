#!/usr/bin/env bash
# ompi_info finds the component through mca_base_component_path and lists every parameter of
# `btl sctp` with its help text at level 9.
. "$(dirname "$0")/btl_common.sh"
info=${MPIRUN%/*}/ompi_info
[ -x "$info" ] || info=$(command -v ompi_info) || skip "ompi_info not found"
# ompi_info reads the component path from the environment only (not from --mca).
export OMPI_MCA_mca_base_component_path="$BTL_LIBDIR:$OMPI_COMPONENTDIR"
if [ "${SANITIZERS:-no}" = yes ]; then
	# ompi_info is not instrumented but dlopens our ASan-built component.
	export LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0
fi
list=$(timeout 60 "$info" 2>&1) || die "ompi_info failed"
echo "$list" | grep -E 'MCA btl: sctp' || { echo "$list" | grep 'MCA btl'; die "ompi_info does not list btl sctp"; }
params=$(timeout 60 "$info" --param btl sctp --level 9 2>&1) || die "ompi_info --param failed"
for p in if_include if_exclude streams cmt config_file config_host udp_port_min udp_port_range \
	frag_size path_mtu rto_min rto_max rto_initial hb_interval path_max_retrans \
	assoc_max_retrans sndbuf rcvbuf crc32c stream_per_tag free_list_num free_list_max \
	free_list_inc eager_limit max_send_size exclusivity latency bandwidth rdma put_limit get_limit \
	shm; do
	line=$(echo "$params" | grep -A1 "MCA btl sctp: parameter \"btl_sctp_$p\"") ||
		{ echo "$params"; die "btl_sctp_$p not listed"; }
	echo "$line" | tail -n 1 | grep -q '[A-Za-z]' || die "btl_sctp_$p has no help text"
done
echo "$params" | grep -c 'parameter "btl_sctp_' | sed 's/^/parameters listed: /'

#!/usr/bin/env bash
# in-pc-ns.sh PROGRAM [ARGS...]: run one MPI rank inside the network namespace of its PC.
#
#   FNN_TB_PREFIX=tb123 mpirun ... --mca btl self,tcp --mca btl_tcp_if_include nic0,nic1 \
#       test/testbed/in-pc-ns.sh ./prog
#
# The rank comes from OMPI_COMM_WORLD_RANK (Open MPI's mpirun), PMI_RANK (MPICH's
# mpiexec), PMIX_RANK or PMI_ID (mpiexec.mpich -pmi-port); rank R runs in namespace
# <prefix>-pc<R>, or in the PC that FNN_TB_PCS lists R-th ("3,5": rank 0 on PC 3, rank 1 on
# PC 5).  The prefix comes from FNN_TB_PREFIX, or from FNN_TB_DIR (a state directory of
# fnn-cluster.sh).  FNN_TB_IFS ("nic0,nic1;nic2;...": the R-th entry for rank R) sets
# btl_tcp_if_include per rank.  Only the network namespace changes (files and PIDs stay
# shared), so mpirun itself runs on the host.
set -u
die() { echo "in-pc-ns: $*" >&2; exit 127; }

rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-${PMI_ID:-}}}}
[ -n "$rank" ] ||
	die "no OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or PMI_ID: run me under mpirun/mpiexec"
prefix=${FNN_TB_PREFIX:-}
if [ -z "$prefix" ] && [ -n "${FNN_TB_DIR:-}" ]; then
	prefix=$(sed -n 's/^PREFIX=//p' "$FNN_TB_DIR/env" 2>/dev/null)
fi
[ -n "$prefix" ] || die "set FNN_TB_PREFIX (or FNN_TB_DIR) to the cluster's prefix"
pc=$rank
if [ -n "${FNN_TB_PCS:-}" ]; then
	IFS=, read -r -a pcs <<<"$FNN_TB_PCS"
	[ "$rank" -lt ${#pcs[@]} ] || die "rank $rank: FNN_TB_PCS=$FNN_TB_PCS has no entry for it"
	pc=${pcs[$rank]}
fi
if [ -n "${FNN_TB_IFS:-}" ]; then
	IFS=';' read -r -a ifs <<<"$FNN_TB_IFS"
	[ -n "${ifs[$rank]:-}" ] || die "rank $rank: FNN_TB_IFS=$FNN_TB_IFS has no entry for it"
	export OMPI_MCA_btl_tcp_if_include="${ifs[$rank]}"
fi
ns=$prefix-pc$pc
[ -e "/run/netns/$ns" ] || die "rank $rank: namespace $ns does not exist"
[ $# -ge 1 ] || die "usage: in-pc-ns.sh PROGRAM [ARGS...]"
# MPICH's Hydra hands the rank its PMI connection as an inherited socket (PMI_FD), which
# keeps working in another namespace: `ip netns exec` suffices, and it also mounts the
# namespace's /sys (UCX, MPICH's transport on Debian, looks its devices up there).
if [ -n "${PMI_FD:-}" ]; then
	exec ip netns exec "$ns" "$@"
fi
# Open MPI 4.1 + PMIx 4: the rank reaches mpirun's PMIx server over tcp4://127.0.0.1, not a
# unix socket, so tb_nsrun (built next to the tests) relays that port into the namespace.
# Hydra with -pmi-port: PMI_PORT=HOST:PORT, relayed the same way (tb_nsrun points PMI_PORT at
# the relay), then `ip netns exec` for the namespace's /sys as above.
nsrun=${FNN_TB_NSRUN:-$(dirname "$0")/tb_nsrun}
[ -x "$nsrun" ] || nsrun=$(command -v tb_nsrun) || die "tb_nsrun not found: set FNN_TB_NSRUN"
if [ -n "${PMI_PORT:-}" ]; then
	exec "$nsrun" "/run/netns/$ns" ip netns exec "$ns" "$@"
fi
exec "$nsrun" "/run/netns/$ns" "$@"

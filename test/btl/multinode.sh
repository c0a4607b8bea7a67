#!/usr/bin/env bash
# Two nodes as Open MPI sees them, on this machine: mpirun runs in a UTS namespace named
# btlnode0 and starts the daemon of btlnode1 through an rsh agent that runs it here, in a UTS
# namespace of that name and with a session directory of its own, so that ranks 0-1 and 2-3
# are on different nodes for Open MPI (node-local peers, lazy add_procs for the others, one
# BTL module or two). Over btl sctp (SCTP between all ranks, then the core's shared memory
# within a host too) btl_p2p must give btl tcp's answers: a rank receiving from a peer on
# another node before it ever sent to it (Open MPI adds such peers to the BTLs only when it
# first sends to them) must get the message.
# mpirun's own host is the first node: when it runs no rank, Open MPI 4.1.4 with Debian's PMIx
# 4.2.2 gives each node's ranks the next node's ranks as local peers (MPI_COMM_TYPE_SHARED then
# mixes the nodes: osc rdma, which splits by node, hangs in MPI_Win_create). btl_nodes checks it.
. "$(dirname "$0")/btl_common.sh"
[ "$(id -u)" -eq 0 ] || skip "UTS namespaces for the fake nodes need root"
command -v unshare >/dev/null || skip "unshare (util-linux) missing"
unshare --uts true 2>/dev/null || skip "cannot create UTS namespaces here"

dir=$(mktemp -d /tmp/btl_multinode.XXXXXX) || die "mktemp"
trap 'rm -rf "$dir"' EXIT
cat >"$dir/agent" <<EOF
#!/bin/sh
# plm_rsh_agent: "logs into" node \$1 by running the daemon's command here
node=\$1
shift
mkdir -p "$dir/\$node"
export TMPDIR="$dir/\$node"
exec unshare --uts sh -c "hostname \$node; \$*"
EOF
chmod +x "$dir/agent"
cat >"$dir/mpirun" <<EOF
#!/bin/sh
# mpirun on node btlnode0; its ranks there run in its namespace
mkdir -p "$dir/btlnode0"
export TMPDIR="$dir/btlnode0"
exec unshare --uts sh -c 'hostname btlnode0 && exec "\$0" "\$@"' "$MPIRUN" "\$@"
EOF
chmod +x "$dir/mpirun"
MPIRUN=$dir/mpirun
# two daemons of one machine: PMIx's shared-memory store would be shared by both
export PMIX_MCA_gds=hash
FAKE_NODES=(--mca plm_rsh_agent "$dir/agent" -x PMIX_MCA_gds=hash)
NODES=(--host "btlnode0:2,btlnode1:2" "${FAKE_NODES[@]}")

hosts=$(run_btl tcp 4 "${NODES[@]}" hostname) || { echo "$hosts"; die "cannot start the two fake nodes"; }
[ "$(echo "$hosts" | sort | uniq -c | awk '{ print $1 $2 }' | tr '\n' ' ')" = "2btlnode0 2btlnode1 " ] ||
	{ echo "$hosts"; die "ranks are not two per fake node"; }
nodes=$(run_btl tcp 4 "${NODES[@]}" ./btl_nodes) ||
	{ echo "$nodes"; die "Open MPI's nodes are not the fake nodes"; }
[ "$(echo "$nodes" | grep '^CHECK' | sort)" = "CHECK 0 btlnode0 0 1
CHECK 1 btlnode0 0 1
CHECK 2 btlnode1 2 3
CHECK 3 btlnode1 2 3" ] || { echo "$nodes"; die "Open MPI's nodes are not the fake nodes"; }
want=$(run_btl tcp 4 "${NODES[@]}" ./btl_p2p $((1 << 20)) | grep '^CHECK')
[ -n "$want" ] || die "btl_p2p over btl tcp on two fake nodes printed no checks"
for shm in 0 1; do
	out=$(run_btl sctp 4 "${NODES[@]}" -x SCTPT_SHM=$shm --mca btl_base_verbose 10 \
		./btl_p2p $((1 << 20))) || { echo "$out"; die "btl sctp on two fake nodes (SCTPT_SHM=$shm) failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
		{ echo "$out"; die "btl sctp on two fake nodes (SCTPT_SHM=$shm): answers differ from tcp"; }
	# every rank gave the core the cards of the whole job before anyone sent to it
	[ "$(echo "$out" | grep -c 'btl sctp: the cards of 3 of the job.s 4 processes given to the core')" -eq 4 ] ||
		{ echo "$out" | grep 'btl sctp'; die "SCTPT_SHM=$shm: not every rank registered the job's cards"; }
	echo "two fake nodes, 2 ranks each, SCTPT_SHM=$shm: btl sctp gives btl tcp's answers"
done
# One-sided across the two nodes, one rank on each: osc rdma over btl sctp's RDMA must give osc
# pt2pt over btl tcp's answers. Off one node osc rdma takes even its own locks through the BTL,
# with no endpoint for itself (the BTL says its atomics are coherent with the CPU's).
NODES1=(--host "btlnode0:1,btlnode1:1" "${FAKE_NODES[@]}")
want=$(run_btl tcp 2 "${NODES1[@]}" --mca osc pt2pt ./btl_osc $((1 << 20)) | grep '^CHECK')
[ "$(echo "$want" | wc -l)" -eq 8 ] || die "osc pt2pt over btl tcp on two fake nodes printed no checks"
out=$(run_btl sctp 2 "${NODES1[@]}" -x SCTPT_SHM=0 --mca osc rdma --mca osc_rdma_btls sctp \
	./btl_osc $((1 << 20))) || { echo "$out"; die "osc rdma over btl sctp on two fake nodes failed"; }
[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
	{ echo "--- tcp"; echo "$want"; echo "--- sctp"; echo "$out"; die "osc rdma on two fake nodes: answers differ"; }
echo "two fake nodes, 1 rank each: osc rdma over btl sctp gives osc pt2pt over btl tcp's answers"
# Two ranks on each node: osc rdma keeps a node's windows' state in shared memory under a
# local leader and reaches other nodes through the BTL. A rank that is only ever a target of
# a rank on the other node (rank 2 of rank 1's puts) never adds it to the BTL: its RDMA queue
# pair must exist all the same. And with no CPU-atomics shortcut, osc rdma 4.1 reaches its
# own window through the BTL with no endpoint.
want=$(run_btl tcp 4 "${NODES[@]}" --mca osc pt2pt ./btl_osc $((1 << 20)) | grep '^CHECK')
[ "$(echo "$want" | wc -l)" -eq 8 ] || die "osc pt2pt over btl tcp on 2 x 2 ranks printed no checks"
for shm in 0 1; do
	out=$(run_btl sctp 4 "${NODES[@]}" -x SCTPT_SHM=$shm --mca osc rdma --mca osc_rdma_btls sctp \
		./btl_osc $((1 << 20))) ||
		{ echo "$out"; die "osc rdma over btl sctp on 2 x 2 ranks (SCTPT_SHM=$shm) failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
		{ echo "--- tcp"; echo "$want"; echo "--- sctp"; echo "$out"
		  die "osc rdma on 2 x 2 ranks (SCTPT_SHM=$shm): answers differ"; }
	echo "two fake nodes, 2 ranks each, SCTPT_SHM=$shm: osc rdma over btl sctp gives osc pt2pt over btl tcp's answers"
done

#!/usr/bin/env bash
# FNN striping through the provider (FI_SCTP_FNN_TABLE, FI_SCTP_FNN_ADDRS): an emulated Flat
# Neighborhood Network (test/testbed's fnn-cluster.sh: a namespace per PC, a bridge per
# switch, 200 Mbit/s links) of 4 PCs x 2 NICs; fi_pingpong -c between PC 0 and PC 1, which
# share both switches: each side must stripe its peer over 2 rails, and every size must pass.
. "$(dirname "$0")/../testbed/tb_common.sh"
TB_SRC=$(cd "$(dirname "$0")/../testbed" && pwd)
CLUSTER="$TB_SRC/fnn-cluster.sh"
[ "$(id -u)" -eq 0 ] || skip "the testbed needs root"
for c in ip tc nft nsenter timeout; do command -v $c >/dev/null || skip "$c missing"; done
need_netns
command -v fi_pingpong >/dev/null || skip "fi_pingpong (libfabric-bin) not installed"
[ -f "$FI_PROVIDER_PATH/libsctp-fi.so" ] || die "$FI_PROVIDER_PATH/libsctp-fi.so not built"
if [ "${SANITIZERS:-no}" = yes ]; then
	export LD_PRELOAD="$(gcc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
fi
tb_up o "$TB_SRC/designs/pc4x2.table" --rate 200mbit
ips() { awk -v pc="$1" '$1 == pc { printf "%s%s", sep, $4; sep = "," }' "$TB_DIR/addrs"; }
a0=$(ips 0)
a1=$(ips 1)
[ -n "$a0" ] && [ -n "$a1" ] || die "no addresses for PCs 0 and 1 in $TB_DIR/addrs"
envs=(FI_SCTP_SHM=0 FI_SCTP_FNN_TABLE="$TB_DIR/table" FI_SCTP_FNN_ADDRS="$TB_DIR/addrs"
	FI_LOG_LEVEL=info FI_LOG_PROV=sctp)
port=$((40000 + RANDOM % 20000))
srv=$(mktemp)
ip netns exec "$TB_PREFIX-pc0" env "${envs[@]}" FI_SCTP_ADDRS="$a0" timeout 120 \
	fi_pingpong -p sctp -e rdm -I 50 -c -B $port >"$srv" 2>&1 &
spid=$!
_pids+=("$spid")
for try in $(seq 1 50); do
	out=$(ip netns exec "$TB_PREFIX-pc1" env "${envs[@]}" FI_SCTP_ADDRS="$a1" timeout 120 \
		fi_pingpong -p sctp -e rdm -I 50 -c -P $port "${a0%%,*}" 2>&1) && break
	echo "$out" | grep -q "Connection refused" || break
	sleep 0.2
done
wait "$spid"; rc=$?
sout=$(cat "$srv")
rm -f "$srv"
[ $rc -eq 0 ] || { echo "$out"; echo "$sout"; die "fi_pingpong server failed (status $rc)"; }
n=$(echo "$out" | grep -cE '^[0-9.]+[km]? +50 +=50 ')
[ "$n" -eq 6 ] || { echo "$out"; die "$n of 6 sizes completed"; }
for side in client server; do
	o=$out
	[ $side = server ] && o=$sout
	echo "$o" | grep -q "striped over 2 rails" ||
		{ echo "$o" | grep sctp | head -20; die "the $side did not stripe its peer over 2 rails"; }
done
echo "PC 0 <-> PC 1 ($a0 <-> $a1): both striped over 2 rails; 6 sizes x 50 checked round trips"
echo "$out" | grep -E '^(bytes|1m)'

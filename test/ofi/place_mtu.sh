#!/usr/bin/env bash
# test_ofi_place with FI_THREAD_DOMAIN, where every message whose receive was posted in time
# must be placed: on loopback (one 64000-byte packet carries 64 KiB), and, given namespaces,
# on the loopback of a namespace whose MTU is 1500 and then 9000, so that a message's first
# packet holds only its head and the rest follows packet by packet.
. "$(dirname "$0")/../common.sh"
export OFI_TEST_THREADING=domain
./test_ofi_place || die "test_ofi_place with FI_THREAD_DOMAIN"
[ "$(id -u)" -eq 0 ] && ip netns add "${NS_PREFIX}probe" 2>/dev/null || {
	echo "no network namespaces here (root needed): MTU 1500 and 9000 not run"
	exit 0
}
ip netns del "${NS_PREFIX}probe"
ns_add mtu
ns=$(ns_name mtu)
for mtu in 1500 9000; do
	ip -n "$ns" link set lo mtu $mtu || die "lo mtu $mtu"
	echo "lo MTU $mtu:"
	ip netns exec "$ns" ./test_ofi_place || die "test_ofi_place at MTU $mtu"
done

# Shared helpers for shell tests: source "$(dirname "$0")/../common.sh" (srcdir-relative).
# Automake's test driver: exit 0 pass, 1 fail, 77 skip, 99 hard error.

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# Namespaces made by this test: unique per test process, all deleted on exit.
NS_PREFIX="sm$$"
_ns_made=()
_pids=()
ns_cleanup() {
	local p ns
	for p in "${_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${_pids[@]}"; do wait "$p" 2>/dev/null; done
	for ns in "${_ns_made[@]}"; do ip netns del "$ns" 2>/dev/null; done
	_ns_made=()
}
trap ns_cleanup EXIT

need_netns() {
	[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
	command -v ip >/dev/null || skip "iproute2 missing"
	ip netns add "${NS_PREFIX}probe" 2>/dev/null || skip "cannot create network namespaces here"
	ip netns del "${NS_PREFIX}probe"
}

# ns_name NAME: the full name of this test's namespace NAME.
ns_name() { echo "${NS_PREFIX}-$1"; }
# ns_add NAME: creates namespace $(ns_name NAME) with loopback up. Call it directly, not in
# $(...): the list of namespaces to delete lives in this shell.
ns_add() {
	local ns="${NS_PREFIX}-$1"
	ip netns add "$ns" || die "ip netns add $ns"
	_ns_made+=("$ns")
	ip -n "$ns" link set lo up
}

# ns_link NS_A IF_A ADDR_A NS_B IF_B ADDR_B: a veth pair between two namespaces (addresses CIDR).
ns_link() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" || die "veth $2-$5"
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$4" addr add "$6" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}

# bg CMD...: runs CMD in the background, remembered for cleanup by PID.
bg() { "$@" & _pids+=($!); }

#!/usr/bin/env bash
# Clusters from three design tables come up and go down with nothing left behind; every pair
# that shares a switch reaches each other over each shared switch (from the NIC on it to the
# peer's address on it), and a PC never reaches a peer's address on a switch it is not on,
# from any of its NICs, even with the destination forced on-link (the switches are separate
# bridges and no PC forwards): so pairs that share no switch cannot reach each other at all.
# With routing/fnn built, `fnn stripe A B --addrs` on the cluster's address plan must give
# k rails to a pair sharing k switches, each of them reaching.
. "$(dirname "$0")/tb_common.sh"
need_testbed

# ping_ok NS IF ADDR / ping_fails NS IF ADDR (bounded: 2 echoes, at most 1 s / 0.4 s)
ping_ok() { ip netns exec "$1" timeout 5 "$TB_PING" -I "$2" -c 2 -W 1 "$3"; }
ping_fails() { ! ip netns exec "$1" timeout 5 "$TB_PING" -I "$2" -c 2 -W 0.4 "$3" 2>/dev/null; }

check_design() {
	local tag=$1 table=$2 a b na nb s sa ok=0 no=0 apart=0 probed=
	tb_up "$tag" "$table" --rate 200mbit
	local nics="$TB_DIR/nics" npcs
	npcs=$(sed -n 's/^NPCS=//p' "$TB_DIR/env")
	[ "$(wc -l <"$TB_DIR/addrs")" -eq $(($(wc -l <"$nics") + 1)) ] || die "$table: address plan incomplete"
	for ((a = 0; a < npcs; a++)); do
		for ((b = 0; b < npcs; b++)); do
			[ $a -ne $b ] || continue
			local shared
			shared=$(awk -v a=$a -v b=$b '$1 == a { sa[$3] = 1 } $1 == b { sb[$3] = 1 }
				END { for (s in sa) if (s in sb) print s }' "$nics")
			[ -n "$shared" ] || apart=$((apart + 1))
			while read -r na sa; do   # a's NIC na on switch sa
				while read -r nb s; do   # b's NIC nb on switch s
					if [ "$s" = "$sa" ]; then
						[ $a -lt $b ] || continue   # one direction suffices for success
						ping_ok "$TB_PREFIX-pc$a" "nic$na" "198.18.$s.$((b + 1))" ||
							die "$table: PC $a nic$na cannot reach PC $b on switch $s"
						ok=$((ok + 1))
					elif [ -z "$shared" ] || { [ $a -lt $b ] && [ "$probed" != "$a $b" ]; }; then
						# every address of a pair sharing nothing; one probe for the others
						probed="$a $b"
						ping_fails "$TB_PREFIX-pc$a" "nic$na" "198.18.$s.$((b + 1))" ||
							die "$table: PC $a nic$na reaches PC $b on switch $s, which it is not on"
						no=$((no + 1))
					fi
				done < <(awk -v b=$b '$1 == b { print $2, $3 }' "$nics")
			done < <(awk -v a=$a '$1 == a { print $2, $3 }' "$nics")
		done
	done
	[ -x "${FNN:-}" ] && check_stripes "$table" "$npcs"
	echo "$table: $npcs PCs, $ok shared-switch paths reach, $no cross-switch probes fail," \
		"$((apart / 2)) pairs share no switch"
	tb_down
}

# check_stripes TABLE NPCS: routing/fnn's `fnn stripe A B --addrs` on the cluster's state
# files gives each pair one rail per shared switch, and each rail's (local interface,
# remote address) reaches.
check_stripes() {
	local a b rails want lif rip n=0
	for ((a = 0; a < $2; a++)); do
		for ((b = a + 1; b < $2; b++)); do
			want=$(awk -v a=$a -v b=$b '$1 == a { sa[$3] = 1 } $1 == b { sb[$3] = 1 }
				END { for (s in sa) if (s in sb) n++; print n + 0 }' "$TB_DIR/nics")
			# (fnn stripe reports a pair sharing no switch as an error: no rails)
			rails=$(timeout 10 "$FNN" stripe "$TB_DIR/table" $a $b --addrs "$TB_DIR/addrs" 2>&1) ||
				[ "$want" -eq 0 ] || die "fnn stripe $a $b failed: $rails"
			[ "$(echo "$rails" | grep -c '^switch')" -eq "$want" ] ||
				die "$1: fnn stripe $a $b gives other rails than the $want shared switches: $rails"
			while read -r lif rip; do
				ping_ok "$TB_PREFIX-pc$a" "$lif" "$rip" || die "$1: rail $lif -> $rip of $a-$b does not reach"
				n=$((n + 1))
			done < <(echo "$rails" | sed -n 's/.*local nic [0-9]* (\(nic[0-9]*\) [0-9.]*) -> remote nic [0-9]* (\([0-9.]*\) .*/\1 \2/p')
		done
	done
	echo "$1: fnn stripe gives every pair one rail per shared switch; all $n rails reach"
}

check_design a "$TB_SRC/designs/pc4x2.table"
check_design b "$TB_SRC/designs/pc8x3.table"
check_design c "$TB_SRC/designs/split4.table"

# A bad table is refused with the line named, and leaves nothing behind.
bad=$(mktemp)
printf '0: 0 1\n0: 2 3\n' >"$bad"
msg=$("$CLUSTER" up "$bad" --prefix "t$$x" 2>&1) && { rm -f "$bad"; die "duplicate switch accepted"; }
rm -f "$bad"
echo "$msg" | grep -q 'line 2: switch 0 appears twice' || die "bad table message: $msg"
[ ! -e "/run/fnn-testbed/t$$x" ] && ! ip netns list | grep -q "^t$$x-" || die "bad table left state"
echo "bad table refused: $msg"

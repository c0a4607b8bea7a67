#!/bin/sh
# ftroute end to end: generate, write, read back, degrade from a list, route with each
# engine, check, measure a pattern file, re-route with minimal change, LFT dump and reload,
# and errors that name the file and line.
FTROUTE=${FTROUTE:-../../routing/fattree/ftroute}
tmp=$(mktemp -d /tmp/ft_cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() { "$FTROUTE" "$@" >"$tmp/out" 2>&1 || fail "ftroute $*: $(cat "$tmp/out")"; }
has() { grep -q -- "$1" "$tmp/out" || fail "expected '$1' in: $(cat "$tmp/out")"; }

run -g "3;2,2,3;1,2,2;1,2,1" -n -o "$tmp/fig1.net"
has "switches=16 nodes=12 leaves=6"
for e in dmodc dmodk minhop; do
	run -t "$tmp/fig1.net" -g "3;2,2,3;1,2,2;1,2,1" -e $e -c --shifts 0
	has "invalid_pairs=0 "
	has "deadlock=no"
done
run -t "$tmp/fig1.net" -c --shifts 0 --a2a
has "^shift .* max 1 "

# degrade from a list, then a pattern file by node name, index and GUID
printf 'link sw-l1-0 3\nswitch sw-l3-1\n' >"$tmp/faults"
printf '"node0 HCA-1" "node11 HCA-1"\n1 10\n0x0002c9ff00000007 0\n' >"$tmp/pairs"
run -t "$tmp/fig1.net" --degrade-list "$tmp/faults" -c --pattern "$tmp/pairs"
has "cables_removed=4"
has "invalid_pairs=0 .*updown_violations=0 loops=0 deadlock=no"
has "^file .* routes 3 .* invalid 0 "

# minimal-change re-routing keeps at least as many entries as a full re-route
run -g rlft:3:8 --degrade-links 3 --seed 7 --reroute -c
has "invalid_pairs=0 .*nonminimal=0 .*deadlock=no"
awk '/^reroute:/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	exit !(v["changed_minimal"] <= v["changed_full_dmodc"] && v["changed_minimal"] > 0) }' "$tmp/out" ||
	fail "reroute counts: $(grep reroute "$tmp/out")"

# tables through the OpenSM dump format and back
run -g rlft:2:8 --degrade-links 2 -o "$tmp/d.net" --lft "$tmp/d.dump" --shifts 0
grep '^shift' "$tmp/out" >"$tmp/q1"
run -t "$tmp/d.net" --load-lft "$tmp/d.dump" --shifts 0 -c
grep '^shift' "$tmp/out" >"$tmp/q2"
cmp -s "$tmp/q1" "$tmp/q2" || fail "quality differs after dump and reload"
has "invalid_pairs=0 "

# errors name the file and the line
printf 'Switch 4 "A"\n[1] "B"[1]\n' >"$tmp/bad.net"
"$FTROUTE" -t "$tmp/bad.net" >"$tmp/out" 2>&1 && fail "bad topology accepted"
has "bad.net:2: remote node \"B\" is not declared"
printf 'link nosuch 1\n' >"$tmp/badfaults"
"$FTROUTE" -t "$tmp/fig1.net" --degrade-list "$tmp/badfaults" >"$tmp/out" 2>&1 && fail "bad list accepted"
has "badfaults:1: no switch 'nosuch'"
"$FTROUTE" -g "3;2,2;1,2,2;1,2,1" >"$tmp/out" 2>&1 && fail "bad spec accepted"
has "bad PGFT spec"
"$FTROUTE" -t "$tmp/d.net" -e dmodk >"$tmp/out" 2>&1 && fail "dmodk on a degraded fabric"
has "dmodk: needs a complete PGFT"
echo "ok"

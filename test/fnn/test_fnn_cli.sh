#!/bin/bash
# The fnn command end to end: design -> analyze -> labels/addrs/routes/advanced/stripe,
# and a hand-edited table with a bad line is refused with the line named.
. "$(dirname "$0")/../common.sh"
FNN=${FNN:-../../routing/fnn/fnn}
[ -x "$FNN" ] || die "fnn binary not found at $FNN"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; ns_cleanup' EXIT

"$FNN" bound --pcs 64 --nics 4 --switches 8x31,8 | grep -q "bound 1.8591 links/pair (7496/4032)" ||
	die "KLAT2 bound"
"$FNN" design --pcs 24 --nics 3 --switches 6x12 --pattern grid:4x6 --seed 3 --generations 300 \
	--quiet -o "$tmp/d.table" 2>"$tmp/design.err" || die "design failed: $(cat "$tmp/design.err")"
grep -q "^5:" "$tmp/d.table" || die "design table has no line for switch 5"
"$FNN" analyze "$tmp/d.table" --pattern grid:4x6 --switches 6x12 >"$tmp/a.txt" || die "analyze"
grep -q "pairs without a common switch 0" "$tmp/a.txt" || die "design leaves pairs disconnected: $(cat "$tmp/a.txt")"
grep -q "AT BOUND" "$tmp/a.txt" || die "design not at the bound: $(cat "$tmp/a.txt")"
grep -q "^pattern grid:4x6:" "$tmp/a.txt" || die "no pattern score"

"$FNN" labels "$tmp/d.table" --prefix k -o "$tmp/l.html" || die "labels"
[ "$(grep -o "class='label'" "$tmp/l.html" | wc -l)" -eq 24 ] || die "expected 24 labels"
"$FNN" addrs "$tmp/d.table" -o "$tmp/addrs" || die "addrs"
[ "$(grep -vc '^#' "$tmp/addrs")" -eq 72 ] || die "expected 72 NIC addresses"
"$FNN" routes "$tmp/d.table" --pattern grid:4x6 -o "$tmp/routes" || die "routes table"
[ "$(grep -vc '^#' "$tmp/routes")" -eq 276 ] || die "expected 276 routed pairs"
grep -q -- " -1 " "$tmp/routes" && die "a pair without a route"
mkdir "$tmp/scripts"
"$FNN" routes "$tmp/d.table" --addrs "$tmp/addrs" --prefix k --script-dir "$tmp/scripts" || die "scripts"
[ -f "$tmp/scripts/k23.sh" ] || die "no script for k23"
sh -n "$tmp/scripts/k0.sh" || die "k0.sh is not valid sh"
[ "$(grep -c '^ip route replace' "$tmp/scripts/k0.sh")" -eq 23 ] || die "k0.sh: expected 23 routes"
"$FNN" advanced "$tmp/d.table" -o "$tmp/adv" 2>"$tmp/adv.err" || die "advanced"
grep -q "per-node table 24 bytes" "$tmp/adv.err" || die "advanced size: $(cat "$tmp/adv.err")"
"$FNN" advanced "$tmp/d.table" --mac --addrs "$tmp/addrs" -o "$tmp/advmac" || die "advanced --mac"
[ "$(grep -vc '^#' "$tmp/advmac")" -eq $((24 * 23)) ] || die "MAC table: expected 552 rows"
grep -q "^0 1: " "$tmp/advmac" || die "MAC table has no row 0 1"
"$FNN" stripe "$tmp/d.table" 0 1 --addrs "$tmp/addrs" >"$tmp/stripe" || die "stripe"
grep -q "^switch [0-9]*: local nic [0-9] (eth[0-9] 10\." "$tmp/stripe" || die "stripe output: $(cat "$tmp/stripe")"

printf '0: 0 1\n1: 1 2\nbad line\n' >"$tmp/bad.table"
"$FNN" analyze "$tmp/bad.table" 2>"$tmp/bad.err" && die "bad table accepted"
grep -q "bad.table: line 3: expected a switch number" "$tmp/bad.err" || die "error message: $(cat "$tmp/bad.err")"
"$FNN" design --pcs 4 --nics 2 --switches 2x 2>/dev/null && die "bad switches accepted"
exit 0

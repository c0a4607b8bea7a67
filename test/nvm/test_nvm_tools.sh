#!/bin/sh
# test_nvm_tools: a VM in another process (nvmd) managed with nvmctl over a link
# (NVM_LINK: udp, the loopback link, or sctp, the SCTP core): load (from PDL), run,
# send to a trigger, see the DISPLAY, replace, errors come back, unload; then the
# paper's PING/PONG between two nvmd processes.  nvmd is bounded (--seconds) and
# stopped by its PID.
set -u
: "${NVM_BIN:=../../nvm}" "${PDL_DIR:=pdl}" "${NVM_LINK:=udp}"
tmp=$(mktemp -d) || exit 1
pid=
pidb=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	[ -n "$pidb" ] && kill "$pidb" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- nvmd output:"; cat "$tmp/out" 2>/dev/null; exit 1; }
# nvmd_addr FILE: the address nvmd printed in FILE, waiting up to 5 s for it.
nvmd_addr() {
	for i in $(seq 1 50); do
		a=$(sed -n 's/^nvmd: listening on \(.*\)$/\1/p' "$1")
		[ -n "$a" ] && { echo "$a"; return 0; }
		sleep 0.1
	done
	return 1
}

"$NVM_BIN/nvmd" --link "$NVM_LINK" --port 0 --seconds 30 --seg 2:64 > "$tmp/out" 2>&1 &
pid=$!
addr=$(nvmd_addr "$tmp/out") || fail "nvmd did not start"
case "$NVM_LINK:$addr" in udp:127.0.0.1:*|sctp:sctp:127.0.0.1:*:*) ;; *) fail "address $addr";; esac
ctl() { "$NVM_BIN/nvmctl" --to "$addr" "$@"; }
wait_for() {
	for i in $(seq 1 50); do grep -q "$1" "$tmp/out" && return 0; sleep 0.1; done
	fail "no '$1' in nvmd output"
}

cat > "$tmp/double.pdl" <<'PDL'
PROGRAM double: VAR x; TRIGGERS 1;
MESSAGE 1: BEGIN x = FIELD(0) * 2; DISPLAY x; END;
END;
PDL
cat > "$tmp/echo.pdl" <<'PDL'
PROGRAM echo: VAR b[2]; TRIGGERS 1;
MESSAGE 1: BEGIN GET b OFFSET 0 FROM MESSAGE LEN 16; b[1] = b[1] + 1; REPLY b LEN 16 AS 9; END;
END;
PDL
cat > "$tmp/triple.pdl" <<'PDL'
PROGRAM triple: VAR x; TRIGGERS 1;
MESSAGE 1: BEGIN x = FIELD(0) * 3; DISPLAY x; END;
END;
PDL
printf 'PROGRAM bad: BEGIN x = 1; END; END;\n' > "$tmp/bad.pdl"

ctl load 7 "$tmp/double.pdl" || fail "load"
ctl run 7 || fail "run"
ctl send 7 1 21 || fail "send"
wait_for "^display 7 42$"
ctl replace 7 "$tmp/triple.pdl" || fail "replace"
ctl send 7 1 5 || fail "send after replace"
wait_for "^display 7 15$"
if ctl load 7 "$tmp/double.pdl" 2> "$tmp/err"; then fail "second load of id 7 succeeded"; fi
grep -q "already loaded" "$tmp/err" || fail "error text did not come back: $(cat "$tmp/err")"
if ctl load 8 "$tmp/bad.pdl" 2> "$tmp/err"; then fail "bad.pdl loaded"; fi
grep -q "bad.pdl:1:20: error: 'x' is not declared" "$tmp/err" || fail "compile error: $(cat "$tmp/err")"
ctl load 9 "$tmp/echo.pdl" && ctl run 9 && ctl send 9 1 5 6 || fail "echo"
wait_for "^host 9 9 5 7$"
ctl unload 7 || fail "unload"
if ctl unload 7 2>/dev/null; then fail "second unload succeeded"; fi
ctl send 7 1 1 || fail "send to nobody is accepted (and dropped by the VM)"
wait_for "^event drop 7 "
echo "ok   nvmd + nvmctl over the $NVM_LINK link"

# The paper's PING in one process against PONG in another, the AT address mapped
# to the second VM's address.
"$NVM_BIN/nvmd" --link "$NVM_LINK" --port 0 --seconds 30 > "$tmp/outb" 2>&1 &
pidb=$!
addrb=$(nvmd_addr "$tmp/outb") || fail "second nvmd did not start"
"$NVM_BIN/nvmctl" --to "$addrb" load 415 "$PDL_DIR/pong.pdl" || fail "load pong"
"$NVM_BIN/nvmctl" --to "$addrb" run 415 || fail "run pong"
kill "$pid"; wait "$pid" 2>/dev/null
"$NVM_BIN/nvmd" --link "$NVM_LINK" --port 0 --seconds 30 --map "0:0:0:96:221:127:255:140=$addrb" \
	> "$tmp/out" 2>&1 &
pid=$!
addr=$(nvmd_addr "$tmp/out") || fail "nvmd for ping did not start"
ctl load 7 "$PDL_DIR/ping.pdl" || fail "load ping"
ctl run 7 || fail "run ping"
wait_for "^event stop 7 "
n=$(grep -c '^display 7 ' "$tmp/out")
[ "$n" = 200 ] || fail "ping displayed $n values, wanted 200"
# timerec > timesent for every exchange
awk '/^display 7 /{ v[n++] = $3 } END { for (i = 0; i < n; i += 2) if (v[i+1] <= v[i]) exit 1;
	s = 0; for (i = 0; i < n; i += 2) s += v[i+1] - v[i]; printf "  mean round trip between processes: %.1f us\n", s / (n/2) / 1000 }' \
	"$tmp/out" || fail "timestamps out of order"
echo "ok   paper PING/PONG between two nvmd processes over the $NVM_LINK link"

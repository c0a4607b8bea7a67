#!/bin/bash
# The KLAT2 wiring-label page renders in headless Chromium: a screenshot is produced and
# the rendered DOM holds one label per PC with four NIC patches each.
. "$(dirname "$0")/../common.sh"
FNN=${FNN:-../../routing/fnn/fnn}
SRC=${srcdir:-.}
CHROMIUM=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed"
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$FNN" labels "$SRC/klat2.table" --prefix k -o "$tmp/labels.html" || die "fnn labels"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	--disable-background-networking --disable-component-update --disable-sync
	--user-data-dir="$tmp/profile")
timeout 60 "$CHROMIUM" "${flags[@]}" --window-size=1200,1600 \
	--screenshot="$tmp/labels.png" "file://$tmp/labels.html" >"$tmp/shot.log" 2>&1 &
pid=$!
wait "$pid" || die "chromium screenshot failed: $(tail -5 "$tmp/shot.log")"
pid=
[ -s "$tmp/labels.png" ] || die "no screenshot"
[ "$(head -c 8 "$tmp/labels.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || die "not a PNG"
size=$(stat -c %s "$tmp/labels.png")
[ "$size" -gt 20000 ] || die "screenshot is only $size bytes: blank page?"
if [ -n "$FNN_KEEP_SCREENSHOT" ]; then cp "$tmp/labels.png" "$FNN_KEEP_SCREENSHOT"; fi

timeout 60 "$CHROMIUM" "${flags[@]}" --dump-dom "file://$tmp/labels.html" \
	>"$tmp/dom.html" 2>"$tmp/dom.log" &
pid=$!
wait "$pid" || die "chromium dump-dom failed: $(tail -5 "$tmp/dom.log")"
pid=
labels=$(grep -o 'class="label"' "$tmp/dom.html" | wc -l)
patches=$(grep -o 'class="nic" data-switch' "$tmp/dom.html" | wc -l)
[ "$labels" -eq 64 ] || die "rendered $labels labels, expected 64"
[ "$patches" -eq $((64 * 4 + 9)) ] || die "rendered $patches NIC patches, expected 265"
exit 0

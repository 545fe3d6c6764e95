#!/usr/bin/env bash
# Builds the `hc` tool, starts the embedded local test server on 127.0.0.1, and shows each
# handler at work against it. No internet needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== building hc"
swift build --product hc 2>&1 | tail -1
hc=$(swift build --show-bin-path)/hc

portfile=$(mktemp)
# The server exits when this script does: its stdin is a pipe from us.
exec 3> >(python3 Tests/server/testserver.py --port 0 --exit-on-stdin-eof --lifetime 300 > "$portfile")
for _ in $(seq 50); do [ -s "$portfile" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(awk '{print $2}' "$portfile")"
echo "== local server at $base"

run() {
  echo
  echo "\$ hc $*"
  "$hc" "$@" || echo "(exit code $?)"
  echo
}
demo_dir=$(mktemp -d)
run get "$base/text?text=h%C3%A9llo%20w%C3%B6rld" --as text
run get "$base/text?charset=iso-8859-1&text=caf%C3%A9" --as text
run get "$base/text?charset=utf-8&raw_hex=616263ff6465" --as text
run get "$base/json?doc=%7B%22user%22%3A%7B%22name%22%3A%22Zo%C3%AB%22%2C%22age%22%3Anull%2C%22tags%22%3A%5B%22a%22%2C%22b%22%5D%7D%7D" --as json --remove-nulls
run get "$base/json?doc=%7B%22user%22%3A%7B%22tags%22%3A%5B%22a%22%2C%22b%22%5D%7D%7D" --as json --path user.tags.1
run get "$base/json?doc=%7B%22a%22%3A%20%5B1%2C%202%2C%2C%203%5D%7D" --as json
run get "$base/status/401?json=1" --as json
run get "$base/image/png" --as image
run get "$base/image/jpeg?ctype=image/png" --as image
run get "$base/bytes/3000000" -o "$demo_dir/download.bin"
run get "$base/reset?bytes=100000" -o "$demo_dir/broken.bin"
echo "files left in the download folder: $(ls "$demo_dir" | tr '\n' ' ')"
run get "$base/bytes/16" --as discard -i
run get "$base/ctype?type=application/problem%2Bjson&body=%7B%7D" --as text --accept-type '*/*+json'
run get "$base/status/404" --accept-status 404 --as text
run get "$base/gzip-bomb/50000000" --max-size 1000000 --as bytes
run get "$base/stall?bytes=10" --timeout 0.5
run get -L "$base/redirect-to?url=file:///etc/passwd"
echo
exec 3>&-
rm -rf "$portfile" "$demo_dir"

#!/usr/bin/env bash
# Stops what start-s3.sh started in the scratch folder $1 (by the pid files there) and removes the folder.
set -uo pipefail
dir=${1:?usage: stop-s3.sh S3_DIR}
for name in client.rgw osd.0 mon.a; do
  pidfile="$dir/run/$name.pid"
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
done
rm -rf "$dir"

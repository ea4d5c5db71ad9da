#!/usr/bin/env bash
# Stops the cluster start-pg.sh started in $1 and removes the folder.
set -uo pipefail
dir=${1:?usage: stop-pg.sh PG_DIR}
bindir=""
for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
  if [ -x "$d/pg_ctl" ]; then bindir=$d; break; fi
done
if [ -z "$bindir" ]; then bindir=$(dirname "$(command -v pg_ctl)"); fi
as=()
if [ "$(id -u)" = 0 ]; then as=(setpriv --reuid=postgres --regid="$(id -g postgres)" --init-groups --); fi
"${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
rm -rf "$dir"

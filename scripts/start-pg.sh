#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster (Debian's PostgreSQL 15) on a free loopback port in a scratch
# folder, trust auth for the user `ckpt` on loopback, database `ckpt`. Prints shell assignments:
#   PG_DIR=… PG_URL=postgres://ckpt@127.0.0.1:PORT/ckpt
# Stop it with scripts/stop-pg.sh PG_DIR. PostgreSQL refuses to run as root: as root it runs as `postgres`.
set -euo pipefail
bindir=""
for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
  if [ -x "$d/pg_ctl" ]; then bindir=$d; break; fi
done
if [ -z "$bindir" ]; then bindir=$(dirname "$(command -v pg_ctl)"); fi
dir=${1:-$(mktemp -d /tmp/ckpt-pg.XXXXXX)}
mkdir -p "$dir"
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
as=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$dir"
  as=(setpriv --reuid=postgres --regid="$(id -g postgres)" --init-groups --)
fi
"${as[@]}" "$bindir/initdb" -D "$dir/data" -U ckpt --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1
# fsync stays on: the store's durability promises are tested against a real commit.
"${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200" start >/dev/null
"${as[@]}" "$bindir/createdb" -h 127.0.0.1 -p "$port" -U ckpt ckpt
echo "PG_DIR=$dir"
echo "PG_URL=postgres://ckpt@127.0.0.1:$port/ckpt"

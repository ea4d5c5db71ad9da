#!/usr/bin/env bash
# `npm run test:shared` (issue 17): starts PostgreSQL and an S3 endpoint (Ceph radosgw) on loopback in
# scratch folders, runs the backend contract suite and a selection of session / restore / GC /
# multi-process suites against the shared driver (CKPT_TEST_STORE), and stops both servers at the end.
# Extra arguments are passed to vitest (e.g. a file filter).
set -euo pipefail
cd "$(dirname "$0")/.."
pg_dir=$(mktemp -d /tmp/ckpt-pg.XXXXXX)
s3_dir=$(mktemp -d /tmp/ckpt-s3.XXXXXX)
cleanup() {
  scripts/stop-s3.sh "$s3_dir"
  scripts/stop-pg.sh "$pg_dir"
}
trap cleanup EXIT
pg_env=$(scripts/start-pg.sh "$pg_dir")
s3_env=$(scripts/start-s3.sh "$s3_dir")
pg_url=$(sed -n 's/^PG_URL=//p' <<<"$pg_env")
s3_endpoint=$(sed -n 's/^S3_ENDPOINT=//p' <<<"$s3_env")
export AWS_ACCESS_KEY_ID=$(sed -n 's/^AWS_ACCESS_KEY_ID=//p' <<<"$s3_env")
export AWS_SECRET_ACCESS_KEY=$(sed -n 's/^AWS_SECRET_ACCESS_KEY=//p' <<<"$s3_env")
export CKPT_TEST_STORE="$pg_url?blobs=s3://ckpt-test&endpoint=$s3_endpoint"
# The CLI suites run the built bin/ckpt.js.
[ -f dist/index.js ] || npm run build --silent
suites=(
  test/shared-backend.test.ts
  test/two-machines.test.ts
  test/fleet-feed.test.ts
  test/fleet-serve.test.ts
  test/fleet-web.test.ts
  test/fleet-kills.test.ts
  test/fleet-s3-outage.test.ts
  test/fleet-pg-restart.test.ts
  test/fleet-soak.test.ts
  test/store-copy.test.ts
  test/restore-semantics.test.ts
  test/restore-rewind.test.ts
  test/scan-effects.test.ts
  test/capture-multiprocess.test.ts
  test/gc-race.test.ts
  test/cli-checkpoint.test.ts
  src/capture/capture.test.ts
  src/session/session-store.test.ts
)
if [ $# -gt 0 ]; then suites=("$@"); fi
npx vitest run "${suites[@]}"

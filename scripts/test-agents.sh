#!/usr/bin/env bash
# `npm run test:agents` (issue 26): installs the real agent CLIs the suites drive (pinned, from the npm
# registry, into $CKPT_AGENTS_CACHE or ~/.cache/ckpt-agents; a cached install is reused), builds ckpt
# (the hooks run bin/ckpt.js), then runs the suites under test/agents against scripted
# fake model servers on loopback. Extra arguments are passed to vitest (e.g. a file filter).
# CKPT_AGENTS_DEBUG=DIR keeps each agent run's --debug-file there; CKPT_AGENTS_KEEP=1 keeps the worlds.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsx test/agents/harness/install-agent.ts
npm run build --silent
exec npx vitest run --config test/agents/vitest.config.ts "$@"

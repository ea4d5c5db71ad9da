#!/usr/bin/env node
// Entry point of the `ckpt` command. Hooks start it once per tool call, so start-up matters: an exact
// hook call (`ckpt [--store DIR] [--workspace DIR] hook <agent> [--daemon]`) first runs the thin hook
// client, which loads no ckpt engine and forwards the event to the store's daemon; only when no daemon
// answers does it load the lean in-process hook entry. A scan (`ckpt [global flags] scan [--tool T]`)
// runs the lean scan entry, which loads the scan command only. Everything else runs the whole CLI: the esbuild
// bundle (dist/bundle/, built by `npm run build`) when present, else tsc's dist/.
// This file is CommonJS (bin/package.json): a hook or scan runs the build's CommonJS copies of the hook
// client, the in-process hook and the scan entry (hook-client.cjs, hook-main.cjs, scan-main.cjs), so
// that such a process never starts Node's ES module loader — ~40 ms less CPU per in-process hook on
// Node 20 (DESIGN §10 "The hook path in CommonJS"). The rest of the CLI is ES modules, via import().
// Node ≥ 22.1 can also cache compiled code (feature-detected; Node 20 has no such cache).
'use strict';
const { existsSync, readlinkSync } = require('node:fs');
const module_ = require('node:module');
const { dirname, join } = require('node:path');
const { pathToFileURL } = require('node:url');

module_.enableCompileCache?.();
const argv = process.argv.slice(2);
const bundle = join(__dirname, '..', 'dist', 'bundle');
const bundled = existsSync(join(bundle, 'main.js'));
const code = (bundleFile, distFile) => pathToFileURL(bundled ? join(bundle, bundleFile) : join(__dirname, '..', 'dist', distFile)).href;
// A build from before the CommonJS hook entries (a clone pulled but not rebuilt) has the ESM ones only.
const hookCjs = bundled && existsSync(join(bundle, 'hook-client.cjs')) && existsSync(join(bundle, 'hook-main.cjs'));

/**
 * The folder a hook runs from. When it was removed (the agent deleted the folder it was working in),
 * process.cwd() throws; a hook must still answer, so it moves to the nearest folder above it that
 * exists (Linux names the removed one in /proc) — the event's own `cwd` names the workspace.
 */
function hookDir() {
  try {
    return process.cwd();
  } catch {
    let dir = '/';
    try {
      dir = readlinkSync('/proc/self/cwd').replace(/ \(deleted\)$/, '');
    } catch {}
    while (!existsSync(dir)) dir = dirname(dir);
    process.chdir(dir);
    return dir;
  }
}

async function run() {
  if (argv.includes('hook')) {
    const { hookClient, parseHookArgs } = hookCjs ? require(join(bundle, 'hook-client.cjs')) : await import(code('hook-client.js', 'hooks/client/hook-client.js'));
    const args = parseHookArgs(argv);
    if (args) {
      const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: hookDir() };
      const answer = await hookClient(args, { ...io, script: __filename });
      if ('exitCode' in answer) process.exitCode = answer.exitCode;
      else {
        const { hookMain } = hookCjs ? require(join(bundle, 'hook-main.cjs')) : await import(code('hook-main.js', 'hooks/hook-main.js'));
        process.exitCode = await hookMain(args, { ...io, input: answer.input, ...(answer.note ? { note: answer.note } : {}) });
      }
    }
  }
  // A build from before the scan entry existed (a clone pulled but not rebuilt) runs the whole CLI.
  const scanEntry = argv.includes('scan') ? code('scan-main.js', 'cli/scan-main.js') : undefined;
  if (process.exitCode === undefined && scanEntry && existsSync(new URL(scanEntry))) {
    const scanCjs = bundled ? join(bundle, 'scan-main.cjs') : undefined;
    const { isScanCall, scanMain } = scanCjs && existsSync(scanCjs) ? require(scanCjs) : await import(scanEntry);
    if (isScanCall(argv)) process.exitCode = await scanMain(argv);
  }
  if (process.exitCode === undefined) {
    const { main } = await import(code('main.js', 'cli/main.js'));
    process.exitCode = await main(argv);
  }
}

// As an uncaught error at the top level of an ES module would: printed, exit 1. A clone that was
// never built has no dist/: said in one line, and a hook still exits 0 (it never breaks its agent).
run().catch((err) => {
  const unbuilt = err && err.code === 'ERR_MODULE_NOT_FOUND' && !existsSync(join(__dirname, '..', 'dist'));
  if (!unbuilt) {
    console.error(err);
    process.exitCode = 1;
    return;
  }
  process.stderr.write(`ckpt is not built in ${join(__dirname, '..')}: run npm ci && npm run build there\n`);
  const strict = /^(1|true|yes|on)$/i.test(process.env.CKPT_HOOK_STRICT || '');
  process.exitCode = argv.includes('hook') ? (strict ? 2 : 0) : 1;
});

#!/usr/bin/env node
// Entry point of the `ckpt` command. Hooks start it once per tool call, so start-up matters: an exact
// hook call (`ckpt [--store DIR] [--workspace DIR] hook <agent> [--daemon]`) first runs the thin hook
// client, which loads no ckpt engine and forwards the event to the store's daemon; only when no daemon
// answers does it load the lean in-process hook entry. A scan (`ckpt [global flags] scan [--tool T]`)
// runs the lean scan entry, which loads the scan command only. Everything else runs the whole CLI: the esbuild
// bundle (dist/bundle/, built by `npm run build`) when present, else tsc's dist/.
// Node ≥ 22.1 can also cache compiled code (feature-detected; Node 20 has no such cache).
import { existsSync } from 'node:fs';
import module from 'node:module';

module.enableCompileCache?.();
const argv = process.argv.slice(2);
const bundle = new URL('../dist/bundle/', import.meta.url);
const bundled = existsSync(new URL('main.js', bundle));
const code = (bundleFile, distFile) => (bundled ? new URL(bundleFile, bundle).href : new URL(`../dist/${distFile}`, import.meta.url).href);
if (argv.includes('hook')) {
  const { hookClient, parseHookArgs } = await import(code('hook-client.js', 'hooks/client/hook-client.js'));
  const args = parseHookArgs(argv);
  if (args) {
    const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
    const answer = await hookClient(args, { ...io, script: decodeURIComponent(new URL(import.meta.url).pathname) });
    if ('exitCode' in answer) process.exitCode = answer.exitCode;
    else {
      const { hookMain } = await import(code('hook-main.js', 'hooks/hook-main.js'));
      process.exitCode = await hookMain(args, { ...io, input: answer.input, ...(answer.note ? { note: answer.note } : {}) });
    }
  }
}
// A build from before the scan entry existed (a clone pulled but not rebuilt) runs the whole CLI.
const scanEntry = argv.includes('scan') ? code('scan-main.js', 'cli/scan-main.js') : undefined;
if (process.exitCode === undefined && scanEntry && existsSync(new URL(scanEntry))) {
  const { isScanCall, scanMain } = await import(scanEntry);
  if (isScanCall(argv)) process.exitCode = await scanMain(argv);
}
if (process.exitCode === undefined) {
  const { main } = await import(code('main.js', 'cli/main.js'));
  process.exitCode = await main(argv);
}

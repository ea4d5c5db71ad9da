#!/usr/bin/env node
// Entry point of the `ckpt` command. Hooks start it once per tool call, so start-up matters: it runs
// the esbuild bundle (dist/bundle/, built by `npm run build`) when present — and for an exact hook call
// (`ckpt [--store DIR] [--workspace DIR] hook <agent>`) only the lean hook entry — else tsc's dist/.
// Node ≥ 22.1 can also cache compiled code (feature-detected; Node 20 has no such cache).
import { existsSync } from 'node:fs';
import module from 'node:module';

module.enableCompileCache?.();
const argv = process.argv.slice(2);
const bundle = new URL('../dist/bundle/', import.meta.url);
const bundled = existsSync(new URL('main.js', bundle));
if (bundled && argv.includes('hook')) {
  const { hookMain, parseHookArgs } = await import(new URL('hook-main.js', bundle).href);
  const args = parseHookArgs(argv);
  if (args) {
    const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
    process.exitCode = await hookMain(args, io);
  }
}
if (process.exitCode === undefined) {
  const { main } = await import(bundled ? new URL('main.js', bundle).href : '../dist/cli/main.js');
  process.exitCode = await main(argv);
}

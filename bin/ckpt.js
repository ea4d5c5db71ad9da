#!/usr/bin/env node
// Entry point of the `ckpt` command: runs the compiled CLI. Hooks start it once per tool call, so
// start-up matters: Node ≥ 22.1 can cache compiled code (feature-detected; Node 20 has no such cache).
import module from 'node:module';

module.enableCompileCache?.();
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv.slice(2));

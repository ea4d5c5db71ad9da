#!/usr/bin/env node
// Entry point of the `ckpt` command: runs the compiled CLI.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));

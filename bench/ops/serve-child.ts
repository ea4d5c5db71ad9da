// Runs the real `ckpt` CLI from the sources (through tsx) in a child process: the bench starts
// `ckpt serve` with it, so the daemon figures measure the daemon as users run it.
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));

// V8 settings for the CLI's long-running commands (`ckpt serve`, `ckpt mcp`; DESIGN §10 "Daemon").
// A resident process runs each request's code once per request, seconds or minutes apart: with
// V8's defaults most of it stays in the bytecode interpreter for its first hundreds of calls, and
// bytecode not run for a few garbage collections is thrown away and compiled again on the next call.
// For such a process it pays to compile every function to baseline machine code (Sparkplug) on its
// first call and to keep bytecode. Measured on `http-hook-capture` (14 paired bench runs): 1.41–1.60×
// with the defaults, 1.13–1.50× with these. Short-lived commands (hooks, the CLI) keep the defaults:
// they would pay for compiling code they run once.
//
// Set at run time (node's documented v8.setFlagsFromString; node keeps V8's flags writable for it)
// because the CLI cannot choose node's command line. Not done by the library: a host process's V8
// is not ckpt's to tune.
import { setFlagsFromString } from 'node:v8';

export const RESIDENT_V8_FLAGS = ['--always-sparkplug', '--no-flush-bytecode'] as const;

/** Tunes this process's V8 for serving requests for a long time. Idempotent. */
export function tuneForResidentProcess(): void {
  for (const flag of RESIDENT_V8_FLAGS) setFlagsFromString(flag);
}

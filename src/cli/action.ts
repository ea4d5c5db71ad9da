// Wraps a commander action: builds the CLI context from the global flags and the injected streams.
import type { Command } from 'commander';
import { createCliContext, type CliContext, type CliContextOptions, type GlobalFlags } from './context.js';
import { createOutput, type CliIo, type Output } from './io.js';

export function action(run: (args: unknown[], ctx: CliContext, out: Output, cmd: Command) => Promise<void>, options: CliContextOptions = {}) {
  return async (...raw: unknown[]) => {
    const cmd = raw.at(-1) as Command;
    const flags = cmd.optsWithGlobals<GlobalFlags>();
    const io = rootIo(cmd);
    const out = createOutput(io, Boolean(flags.json));
    await run(raw.slice(0, -1), createCliContext(io, flags, options), out, cmd);
  };
}

/** The streams the program was built with (attached to the root command by buildProgram). */
export function rootIo(cmd: Command): CliIo {
  let c: Command = cmd;
  while (c.parent) c = c.parent;
  return (c as Command & { ckptIo: CliIo }).ckptIo;
}

/** Lets a command end with an exit code other than 0 without an error (e.g. `ckpt hook` in strict mode). */
export function setExitCode(cmd: Command, code: number): void {
  let c: Command = cmd;
  while (c.parent) c = c.parent;
  (c as Command & { ckptExitCode?: number }).ckptExitCode = code;
}

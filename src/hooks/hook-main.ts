// The lean entry of `ckpt [--store DIR] [--workspace DIR] hook <agent>`: an agent runs it once per
// tool call, so it loads only what a hook needs (no command-line framework, no other commands) and is
// bundled on its own (dist/ckpt-hook.mjs). bin/ckpt.js routes here when the arguments are exactly a
// hook call; anything else goes to the full CLI, which runs the same `runHook`.
import { resolve } from 'node:path';
import { defaultStoreDir, storeLocation } from '../index.js';
import { agentSpec } from './agents/index.js';
import { readCapped } from './hook-input.js';
import { runHook } from './run-hook.js';

export interface HookArgs {
  agent: string;
  store?: string;
  workspace?: string;
}

/** The hook call in `argv`, or undefined when it is anything else (then the full CLI handles it). */
export function parseHookArgs(argv: readonly string[]): HookArgs | undefined {
  const flags: Record<string, string> = {};
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--(store|workspace)(?:=(.*))?$/.exec(arg);
    if (!m) break;
    const value = m[2] ?? argv[++i];
    if (value === undefined) return undefined;
    flags[m[1]!] = value;
  }
  if (argv[i] !== 'hook' || argv.length !== i + 2 || argv[i + 1]!.startsWith('-')) return undefined;
  return { agent: argv[i + 1]!, ...flags };
}

export async function hookMain(args: HookArgs, io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv; cwd: string }): Promise<number> {
  let spec;
  try {
    spec = agentSpec(args.agent);
  } catch (err) {
    io.stderr.write(`ckpt: ${(err as Error).message}\n`);
    return 2;
  }
  const outcome = await runHook({
    spec,
    input: await readCapped(io.stdin),
    env: io.env,
    storeDir: args.store ? storeLocation(args.store, io.cwd) : defaultStoreDir(io.env),
    ...(args.workspace ? { workspace: resolve(io.cwd, args.workspace) } : {}),
  });
  if (outcome.stdout) io.stdout.write(outcome.stdout);
  if (outcome.stderr) io.stderr.write(outcome.stderr);
  return outcome.exitCode;
}

// The lean entry of `ckpt [--store DIR] [--workspace DIR] hook <agent>`: an agent runs it once per
// tool call, so it loads only what a hook needs (no command-line framework, no other commands) and is
// bundled on its own (dist/ckpt-hook.mjs). bin/ckpt.js routes here when the arguments are exactly a
// hook call; anything else goes to the full CLI, which runs the same `runHook`.
import { resolve } from 'node:path';
import { defaultStoreDir, storeLocation } from '../index.js';
import { agentSpec } from './agents/index.js';
import { readCapped } from './hook-input.js';
import { strictHooks, type HookArgs } from './client/hook-client.js';
import { runHook } from './run-hook.js';

export { parseHookArgs, type HookArgs } from './client/hook-client.js';

export interface HookMainIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The event, when the thin client (client/hook-client.ts) already read it. */
  input?: { data: Buffer; tooLarge: boolean; bytes: number };
  /** Said to the agent's user with this event's answer (the thin client's fallback note). */
  note?: string;
}

export async function hookMain(args: HookArgs, io: HookMainIo): Promise<number> {
  let spec;
  try {
    spec = agentSpec(args.agent);
  } catch (err) {
    // As the CLI prints any error: code and message. A hook never breaks its agent: exit 0 (2 in strict mode).
    io.stderr.write(`error [INVALID_ARGUMENT] ${(err as Error).message}\n`);
    return strictHooks(io.env) ? 2 : 0;
  }
  const outcome = await runHook({
    spec,
    input: io.input ?? (await readCapped(io.stdin)),
    env: io.env,
    storeDir: args.store ? storeLocation(args.store, io.cwd) : defaultStoreDir(io.env),
    ...(args.workspace ? { workspace: resolve(io.cwd, args.workspace) } : {}),
  });
  const stdout = io.note && outcome.exitCode === 0 ? withNote(outcome.stdout, io.note) : outcome.stdout;
  if (stdout) io.stdout.write(stdout);
  if (outcome.stderr) io.stderr.write(outcome.stderr);
  return outcome.exitCode;
}

/** The hook's JSON answer with `note` put before its systemMessage (or as the only one). */
function withNote(stdout: string, note: string): string {
  let v: Record<string, unknown> = {};
  try {
    if (stdout.trim()) v = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    return stdout;
  }
  v.systemMessage = typeof v.systemMessage === 'string' ? `${note}; ${v.systemMessage}` : note;
  return `${JSON.stringify(v)}\n`;
}

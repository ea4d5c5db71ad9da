// Spawning real processes for the baselines (git, find): output discarded, stderr kept for errors.
import { spawn } from 'node:child_process';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Collect stdout (otherwise it goes to /dev/null). */
  capture?: boolean;
}

/** Runs `cmd args…` to completion; rejects with its stderr on a non-zero exit. Resolves to stdout when captured. */
export function run(cmd: string, args: string[], options: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', options.capture ? 'pipe' : 'ignore', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else {
        const msg = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' | ');
        reject(new Error(`${cmd} ${args.slice(0, 3).join(' ')} failed (${code ?? signal}): ${msg}`));
      }
    });
  });
}

/** Writes back every dirty page of the machine (`sync`). */
export async function flushIo(): Promise<void> {
  await run('sync', []);
}

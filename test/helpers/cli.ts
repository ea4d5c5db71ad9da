// Runs the built `ckpt` CLI as a real child process (tests need `npm run build` first, which `npm test` does).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CKPT_BIN = fileURLToPath(new URL('../../bin/ckpt.js', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export function runCli(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CKPT_BIN, ...args], {
      cwd: options.cwd,
      // Plain text unless a test asks otherwise: picocolors turns colours on whenever CI is set.
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) }),
    );
    child.stdin.end(options.input ?? '');
  });
}

// Runs a shell command line on a pseudo-terminal (util-linux `script`), so the CLI sees a terminal on
// stdin (and on stdout unless the command redirects it). `input` is typed into the terminal.
import { spawn } from 'node:child_process';
import { CKPT_BIN } from './cli.js';

export interface PtyRun {
  code: number;
  /** Everything the terminal showed (stdout and stderr of the command, the echoed input). */
  screen: string;
}

/** `node <bin>` quoted for sh, to start a command line with. */
export const CKPT_SH = `${quote(process.execPath)} ${quote(CKPT_BIN)}`;

export function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export function runInPty(commandLine: string, options: { cwd: string; input?: string; env?: NodeJS.ProcessEnv }): Promise<PtyRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', commandLine, '/dev/null'], {
      cwd: options.cwd,
      env: { ...process.env, TERM: 'xterm', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.on('data', (d) => (screen += d));
    child.stderr.on('data', (d) => (screen += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, screen }));
    child.stdin.end(options.input ?? '');
  });
}

// Full scans of `ckpt serve` run as `ckpt scan --json` in a child process (DESIGN §10 "Daemon"): a
// full scan of a big tree holds every path, the walk and the new index at once, and a resident
// daemon would keep that peak (V8 and malloc hold on to freed memory). The child takes the same
// workspace scan lock an in-process scan would, so the result is the same; CKPT_NO_DAEMON=1 keeps it
// from asking the daemon back. Its error (the CLI's JSON error on stderr) becomes the same CkptError.
import { spawn } from 'node:child_process';
import { CkptError, ERROR_CODES, scanResultOf, type ErrorCode, type ScanResult, type Session } from '../index.js';

/** The full-scan runner for the daemon of the store folder `storeDir`, re-running this CLI (`node [flags] <entry>`). */
export function scanInChild(entry: string, storeDir: string): (session: Session, tool: string) => Promise<ScanResult> {
  return (session, tool) =>
    new Promise<ScanResult>((resolve, reject) => {
      const args = [...process.execArgv, entry, '--store', storeDir, '--workspace', session.workspaceRoot, '--session', session.id, 'scan', '--tool', tool, '--json'];
      // Its own process group: a Ctrl-C meant for the daemon must not kill the scan the daemon then waits for.
      // In the daemon's folder while it exists; in the store once it was removed (a project cloned
      // again in place under a daemon started there: every full scan failed at the child's start).
      const child = spawn(process.execPath, args, { cwd: currentFolder() ?? storeDir, env: { ...process.env, CKPT_NO_DAEMON: '1' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      child.on('error', (e) => reject(new CkptError('IO', `could not start the scan process: ${e.message}`, {}, { cause: e })));
      child.on('close', (code, signal) => {
        if (code === 0) {
          try {
            resolve(scanResultOf(JSON.parse(out) as Record<string, unknown>));
          } catch {
            reject(new CkptError('INTERNAL', `the scan process printed no result: ${out.slice(0, 200)}`));
          }
          return;
        }
        reject(childError(err, code, signal));
      });
    });
}

/** This process's folder, or undefined once it was removed. */
function currentFolder(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

/** The CLI's `--json` error (`{"error":{code,message,data}}`, the last line of stderr) as a CkptError. */
export function childError(stderr: string, code: number | null, signal: NodeJS.Signals | null): CkptError {
  const last = stderr.trim().split('\n').at(-1) ?? '';
  try {
    const e = (JSON.parse(last) as { error?: { code?: string; message?: string; data?: Record<string, unknown> } }).error;
    if (e?.code && e.message && Object.hasOwn(ERROR_CODES, e.code)) return new CkptError(e.code as ErrorCode, e.message, e.data ?? {});
  } catch {
    // not the CLI's JSON error: reported as the process's failure below
  }
  return new CkptError('IO', `the scan process ${signal ? `was killed (${signal})` : `exited ${code}`}: ${stderr.trim().slice(-300)}`, { exitCode: code, signal });
}

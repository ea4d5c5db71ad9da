// A scan through the store's daemon when one runs (DESIGN §10 "Daemon", issue 13): the daemon watches
// the workspace, so its scan looks only at the paths touched since the last one. Used by every
// adapter that scans — `ckpt scan` and the command hooks (`ckpt hook <agent>` after a shell tool).
// Any failure to reach the daemon (no daemon, a stale claim, a refused connection, a wrong token)
// answers undefined and the caller scans in-process; an answer from the daemon — success or a ckpt
// error — is the result. CKPT_NO_DAEMON=1, and capture switched off (CKPT_DISABLE=1), always answer
// undefined. (The in-process scan after a dead or stopped daemon first catches the owner index up with
// what that daemon owed: owner-index.ts readOwners.)
import { DEFAULT_MAX_BLOB_BYTES, type StoreContext, type WorkspaceContext } from '../context.js';
import { CkptError, type ErrorCode } from '../errors.js';
import { scanResultOf } from '../scan/scan-json.js';
import type { ScanResult } from '../scan/scan-types.js';
import { daemonClaim, daemonToken } from './daemon-files.js';
import { processStatus } from '../process-alive.js';

const CONNECT_TIMEOUT_MS = 1000;

/** The scan result as the daemon answered it, with the daemon's url. */
export type DaemonScanResult = ScanResult & { daemon: string };

export async function scanViaDaemon(
  store: { daemonCtx: StoreContext },
  session: { id: string; workspaceRoot: string; ctx: WorkspaceContext },
  tool: string,
  env: NodeJS.ProcessEnv,
): Promise<DaemonScanResult | undefined> {
  if (/^(1|true|yes|on)$/i.test(env.CKPT_NO_DAEMON ?? '')) return undefined;
  // Capture switched off here (CKPT_DISABLE): the daemon does not see this process's environment and
  // would record the scan; the in-process scan answers `disabled` and records nothing.
  if (!session.ctx.options.captureEnabled) return undefined;
  const { running: daemon } = await daemonClaim(store.daemonCtx);
  if (!daemon || daemon.pid === process.pid) return undefined;
  // A size cap other than the daemon's (--max-file-size, CKPT_MAX_FILE_SIZE, here or where the daemon
  // started): it scans with its own, and stored what the user asked to skip (a probe). Scanned here.
  if (session.ctx.options.maxBlobBytes !== (daemon.maxBlobBytes ?? DEFAULT_MAX_BLOB_BYTES)) return undefined;
  // Stopped (Ctrl-Z, SIGSTOP): it would answer nothing until the timeout. Scanned here, as with no daemon.
  if (processStatus(daemon.pid) === 'stopped') return undefined;
  const target = daemon.socket ? { socketPath: daemon.socket } : daemon.port !== undefined ? { host: daemon.host ?? '127.0.0.1', port: daemon.port } : undefined;
  if (!target) return undefined;
  const token = await daemonToken(store.daemonCtx);
  const body = JSON.stringify({ workspace: session.workspaceRoot, tool });
  // Loaded here, not with the module: most hook processes never talk to a daemon. getBuiltinModule
  // (Node ≥ 20.16) where there is one: a hook entry run from V8's code cache (bin/ckpt.js) would
  // need Node's experimental loader for an import().
  const { request } = process.getBuiltinModule?.('node:http') ?? (await import('node:http'));
  const reply = await new Promise<{ status: number; text: string } | undefined>((resolve) => {
    const req = request(
      {
        ...target,
        method: 'POST',
        path: `/sessions/${encodeURIComponent(session.id)}/scan`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), host: '127.0.0.1' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () => resolve(undefined));
      },
    );
    // Only connecting is bounded: once the daemon has the request, its scan takes what it takes.
    const timer = setTimeout(() => req.destroy(), CONNECT_TIMEOUT_MS);
    req.on('socket', (s) => s.once('connect', () => clearTimeout(timer)));
    req.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    req.end(body);
  });
  if (!reply) return undefined;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(reply.text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (reply.status !== 200) {
    const e = json.error as { code?: string; message?: string; data?: Record<string, unknown> } | undefined;
    if (reply.status === 401 || reply.status === 403 || !e?.code) return undefined; // not ours to trust: scan here
    throw new CkptError(e.code as ErrorCode, e.message ?? 'the daemon failed the scan', { ...e.data, daemon: daemon.url });
  }
  return { ...scanResultOf(json), daemon: daemon.url };
}


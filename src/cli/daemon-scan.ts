// `ckpt scan` through the store's daemon when one runs (issue 13): the daemon watches the workspace,
// so its scan looks only at the paths touched since the last one. Any failure to reach it (no
// daemon, a stale claim, a refused connection) falls back to scanning in-process; an answer from the
// daemon — success or a ckpt error — is the result. CKPT_NO_DAEMON=1 always scans in-process.
import { request } from 'node:http';
import { CkptError, daemonToken, runningDaemon, type ErrorCode, type ScanResult, type Session, type Store } from '../index.js';

const CONNECT_TIMEOUT_MS = 1000;

export async function scanThroughDaemon(store: Store, session: Session, tool: string, env: NodeJS.ProcessEnv): Promise<ScanResult | undefined> {
  if (/^(1|true|yes|on)$/i.test(env.CKPT_NO_DAEMON ?? '')) return undefined;
  const daemon = await runningDaemon(store.ctx);
  if (!daemon || daemon.pid === process.pid) return undefined;
  const token = await daemonToken(store.ctx);
  const body = JSON.stringify({ workspace: session.workspaceRoot, tool });
  const target = daemon.socket ? { socketPath: daemon.socket } : daemon.port !== undefined ? { host: daemon.host ?? '127.0.0.1', port: daemon.port } : undefined;
  if (!target) return undefined;
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
  return { skipped: [], dirs: 0, gitReferenced: 0, stored: 0, ...json, daemon: daemon.url } as unknown as ScanResult;
}

// The address that signs a browser into the store's daemon (DESIGN §9 `ckpt open`, §10 "Web
// timeline"): a fresh one-time code from POST /web/code (bearer token), as
// `http://HOST:PORT/login?code=…`. Only a TCP daemon has one: a browser cannot reach a unix socket.
import { request } from 'node:http';
import { CkptError, daemonToken, type DaemonInfo, type Store } from '../index.js';

export async function webLoginUrl(store: Store, daemon: Pick<DaemonInfo, 'url' | 'host' | 'port' | 'socket'>): Promise<string> {
  if (daemon.socket || daemon.port === undefined) {
    throw new CkptError('INVALID_ARGUMENT', `the daemon listens on ${daemon.url}: a browser needs a TCP daemon (ckpt serve without --socket)`, { url: daemon.url });
  }
  const token = await daemonToken(store.daemonCtx);
  const host = daemon.host ?? '127.0.0.1';
  const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      { host, port: daemon.port, method: 'POST', path: '/web/code', headers: { authorization: `Bearer ${token}`, host: '127.0.0.1', 'content-length': 0 } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  }).catch((err: Error) => {
    throw new CkptError('IO', `cannot reach the daemon at ${daemon.url}: ${err.message}`, { url: daemon.url }, { cause: err });
  });
  let code: unknown;
  try {
    code = (JSON.parse(reply.text) as { code?: unknown }).code;
  } catch {
    code = undefined;
  }
  if (reply.status !== 200 || typeof code !== 'string') {
    throw new CkptError('INVALID_ARGUMENT', `the daemon at ${daemon.url} gave no login code (HTTP ${reply.status})`, { url: daemon.url, status: reply.status });
  }
  const base = daemon.url.startsWith('http') ? daemon.url : `http://${host}:${daemon.port}`;
  return `${base}/login?code=${encodeURIComponent(code)}`;
}

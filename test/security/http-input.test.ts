// Issue 27 items 8 and 9. Control characters in a path or id parameter gave 500 INTERNAL (NUL) and
// raw request values reached the daemon's log (a newline forges a line): now 400, and logged text is
// escaped. `ckpt serve --host 0.0.0.0` started silently and the Host check let `Host: 127.0.0.1`
// through from a LAN address: now a non-loopback host needs --allow-remote (and warns), and on a
// non-loopback connection a loopback Host is refused.
import { networkInterfaces } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { escapeForLog, startDaemon, type RunningDaemon } from '../../src/http/daemon.js';
import { isLoopbackAddress } from '../../src/http/request-guard.js';
import { isCkptError, openStore, type Store } from '../../src/index.js';
import { createClient } from '../helpers/http.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon | undefined;
let logged: string[];

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-input-');
  store = await openStore({ dir: dirs.store });
  logged = [];
});

afterEach(async () => {
  await daemon?.close();
  daemon = undefined;
  await dirs.cleanup();
});

describe('control characters in request values', () => {
  it('are 400 INVALID_ARGUMENT in queries, path parameters and body fields; nothing reaches the log', async () => {
    daemon = await startDaemon({ store, version: 'test', log: (l) => logged.push(l) });
    const client = createClient(daemon.url, daemon.token);
    await client.call('POST', '/sessions', { body: { workspace: dirs.workspace, id: 's1' } });
    const w = encodeURIComponent(dirs.workspace);
    const bad = ['\u0000', '\n', '\r\nerror INTERNAL: forged', '\u001b[31m', '\u007f'];
    for (const c of bad) {
      const e = encodeURIComponent(c);
      for (const path of [`/sessions?workspace=${w}${e}`, `/sessions/s1${e}/status?workspace=${w}`, `/sessions/s1/file?workspace=${w}&tag=1&path=a${e}`, `/sessions/s1/show?workspace=${w}&tag=1${e}`]) {
        const res = await client.call('GET', path);
        expect(res.status, JSON.stringify(path)).toBe(400);
        expect(res.json().error.code).toBe('INVALID_ARGUMENT');
      }
      for (const [path, body] of [
        ['/sessions', { workspace: `${dirs.workspace}${c}` }],
        ['/sessions', { workspace: dirs.workspace, id: `x${c}` }],
        ['/sessions/s1/capture', { workspace: dirs.workspace, paths: [`a${c}b`] }],
        ['/sessions/s1/undo', { workspace: dirs.workspace, tag: '1', path: `a${c}`, dryRun: true }],
      ] as const) {
        const res = await client.call('POST', path, { body });
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      }
    }
    expect(logged).toEqual([]);
  });

  it('escapes what is logged: one line whatever the message', () => {
    expect(escapeForLog('no such session "a\nerror INTERNAL: forged"\u0000\u001b[0m')).toBe('no such session "a\\u000aerror INTERNAL: forged"\\u0000\\u001b[0m');
    expect(escapeForLog('plain /path/ü')).toBe('plain /path/ü');
  });
});

/** A non-loopback IPv4 address of this machine, if it has one. */
const lanAddress = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

describe('listening beyond loopback', () => {
  it('refuses a non-loopback --host without allowRemote; warns with it', async () => {
    const err = await startDaemon({ store, version: 'test', host: '0.0.0.0' }).catch((e: unknown) => e);
    expect(isCkptError(err, 'INVALID_ARGUMENT'), String(err)).toBe(true);
    expect(String((err as Error).message)).toMatch(/--allow-remote/);
    daemon = await startDaemon({ store, version: 'test', host: '0.0.0.0', allowRemote: true, log: (l) => logged.push(l) });
    expect(logged.join('\n')).toMatch(/WARNING: listening on 0\.0\.0\.0.*clear text/);
  });

  it('takes loopback literals only: a name starting 127. resolves to what its DNS says (a probe bound 0.0.0.0 through one)', async () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', 'localhost']) expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['127.probe.test', '127.0.0.1.nip.io', '127.evil.example', '0.0.0.0', '::ffff:10.0.0.1', '1270.0.0.1']) expect(isLoopbackAddress(a), a).toBe(false);
    const err = await startDaemon({ store, version: 'test', host: '127.probe.test' }).catch((e: unknown) => e);
    expect(isCkptError(err, 'INVALID_ARGUMENT'), String(err)).toBe(true);
    expect(String((err as Error).message)).toMatch(/not a loopback address.*--allow-remote/);
  });

  it.skipIf(!lanAddress)('on a LAN address, a loopback Host header is refused (403); the address itself is accepted', async () => {
    daemon = await startDaemon({ store, version: 'test', host: '0.0.0.0', allowRemote: true });
    const port = new URL(daemon.url).port;
    const lan = createClient(`http://${lanAddress}:${port}`, daemon.token);
    expect((await lan.call('GET', '/health', { host: `127.0.0.1:${port}` })).status).toBe(403);
    expect((await lan.call('GET', '/health', { host: `localhost:${port}` })).status).toBe(403);
    expect((await lan.call('POST', '/hooks/claude', { host: `127.0.0.1:${port}`, body: {} })).status).toBe(403);
    expect((await lan.call('GET', '/health', { host: `${lanAddress}:${port}` })).status).toBe(200);
    // Over loopback the loopback names still work.
    const local = createClient(`http://127.0.0.1:${port}`, daemon.token);
    expect((await local.call('GET', '/health', { host: `127.0.0.1:${port}` })).status).toBe(200);
  });
});

describe('answers a browser must not keep (a probe found a .env in Chromium\'s disk cache)', () => {
  it('every API answer is no-store and nosniff, errors and refusals too', async () => {
    daemon = await startDaemon({ store, version: 'test' });
    const client = createClient(daemon.url, daemon.token);
    for (const reply of [await client.call('GET', '/health'), await client.call('GET', '/sessions?workspace=/nowhere'), await createClient(daemon.url, 'wrong').call('GET', '/health')]) {
      expect(reply.headers['cache-control'], `${reply.status} ${reply.text}`).toBe('no-store');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
    }
  });
});

describe('a hook request without the credential', () => {
  it('is answered 401 and its connection closed, whatever body it announced (a probe held one for 5 minutes)', async () => {
    daemon = await startDaemon({ store, version: 'test' });
    const { port } = new URL(daemon.url);
    const { connect } = await import('node:net');
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    const t0 = Date.now();
    socket.write(`POST /hooks/claude HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
    const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 5000))]);
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(at, 'closed after the answer').toBeGreaterThan(0);
    expect(at - t0).toBeLessThan(5000);
  });
});

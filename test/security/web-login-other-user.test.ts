// `ckpt open` hands the one-time login code to the browser on xdg-open's command line, which every
// local user can read in /proc/PID/cmdline (found by a probe, 2026-12-06: another user polling /proc
// redeemed the code before the browser and held the web page's session, API access included). The
// daemon now tells, on Linux, which user made a `/login` connection (the uid of the client's end in
// /proc/net/tcp) and answers only its own: another user's attempt is 403 and leaves the code unused.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, request, type IncomingMessage } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../src/http/daemon.js';
import { peerUid, UNKNOWN_PEER, type PeerSocket } from '../../src/http/peer-uid.js';
import { openStore, type Store } from '../../src/store.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-login-user-');
  store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
});

afterEach(async () => {
  await daemon.close();
  await dirs.cleanup();
});

const code = async (): Promise<string> =>
  ((await (await fetch(`${daemon.url}/web/code`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}` } })).json()) as { code: string }).code;

const linux = process.platform === 'linux';

describe('the web login', () => {
  it.skipIf(!linux || process.getuid?.() !== 0 || spawnSync('curl', ['--version']).status !== 0)('refuses a code another local user (nobody) read from a command line, and leaves it to the browser', async () => {
    const c = await code();
    const url = `${daemon.url}/login?code=${encodeURIComponent(c)}`;
    // curl as nobody, as a process watching /proc/*/cmdline would run it.
    // (Not spawnSync: the daemon answers from this process's event loop.)
    const thief = await promisify(execFile)('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'curl', '-s', '-m', '10', '-o', '/dev/null', '-D', '-', url], { encoding: 'utf8' });
    expect(thief.stdout).toMatch(/^HTTP\/1\.1 403/);
    expect(thief.stdout.toLowerCase()).not.toContain('set-cookie');
    // The user's browser still signs in with the same code.
    const own = await fetch(url, { redirect: 'manual' });
    expect(own.status).toBe(303);
    expect(own.headers.get('set-cookie')).toMatch(/^ckpt_session=/);
  });

  it.skipIf(!linux)("knows the user of a loopback connection (IPv4 and IPv6): this process's own", async () => {
    for (const host of ['127.0.0.1', '::1']) {
      const server = createServer((req: IncomingMessage, res) => res.end(String(peerUid(req.socket))));
      const listening = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(0, host, () => resolve(true));
      });
      if (!listening) continue; // no IPv6 loopback here
      const port = (server.address() as { port: number }).port;
      const body = await new Promise<string>((resolve, reject) => {
        request({ host, port, path: '/' }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(text));
        })
          .on('error', reject)
          .end();
      });
      await new Promise((resolve) => server.close(resolve));
      expect(body, host).toBe(String(process.getuid!()));
    }
    // From another machine (--allow-remote), or a connection the tables do not list: nobody can tell.
    expect(peerUid({ remoteAddress: '203.0.113.9', remotePort: 1, localAddress: '127.0.0.1', localPort: 2 })).toBeUndefined();
    expect(peerUid({ remoteAddress: '127.0.0.1', remotePort: 1, localAddress: '127.0.0.1', localPort: 2 })).toBeUndefined();
  });

  it.skipIf(!linux)('a connection its client closed first (TIME_WAIT, listed as uid 0) is no one\'s, never root\'s', async () => {
    const ends: PeerSocket[] = [];
    const server = createNetServer((s) => {
      ends.push({ remoteAddress: s.remoteAddress, remotePort: s.remotePort, localAddress: s.localAddress, localPort: s.localPort });
      s.on('end', () => s.end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = connect((server.address() as { port: number }).port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    expect(peerUid(ends[0]!)).toBe(process.getuid!());
    client.end();
    await new Promise((resolve) => client.once('close', resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(peerUid(ends[0]!)).toBe(UNKNOWN_PEER);
    await new Promise((resolve) => server.close(resolve));
  });
});

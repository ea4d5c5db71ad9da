// Issue 27 items 2 and 3: the web cookie is not sufficient. Browsers send it to every port of
// 127.0.0.1, so a dev server the agent started receives it; replayed with `X-Ckpt: 1` it used to read
// and restore files. Now every API route also needs the page key (handed to the page in the login
// redirect's fragment), and POST /web/code checks the bearer token itself, not just that one was sent.
import { request } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../src/http/daemon.js';
import { openStore, type Store } from '../../src/store.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon;
let cookie: string;
let key: string;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-sec-cookie-');
  store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
  const s = await (await store.openWorkspace(dirs.workspace)).create({ id: 's1' });
  await s.turn({ text: 'hi' });
  await writeFile(`${dirs.workspace}/secret.txt`, 'top secret');
  await s.capture(['secret.txt'], { tool: 'Edit' });
  const code = ((await (await fetch(`${daemon.url}/web/code`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}` } })).json()) as { code: string }).code;
  const res = await fetch(`${daemon.url}/login?code=${code}`, { redirect: 'manual' });
  cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  key = /#k=([\w-]+)$/.exec(res.headers.get('location') ?? '')?.[1] ?? '';
});

afterEach(async () => {
  await daemon.close();
  await dirs.cleanup();
});

const ws = (): string => encodeURIComponent(dirs.workspace);

/** Status of an SSE request (the stream is dropped once the head arrives). */
function streamStatus(path: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(daemon.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, headers }, (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy();
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the web cookie alone', () => {
  it('is replayed by a listener on another port: reads, restores and the live feed refuse it', async () => {
    const stolen = { cookie, 'x-ckpt': '1' };
    const reads = [`/workspaces`, `/sessions?workspace=${ws()}`, `/sessions/s1/file?workspace=${ws()}&tag=1&path=secret.txt`, `/sessions/s1/events?workspace=${ws()}`, `/web/sessions?workspace=${ws()}`, '/health'];
    for (const path of reads) expect((await fetch(`${daemon.url}${path}`, { headers: stolen })).status, path).toBe(401);
    const restore = await fetch(`${daemon.url}/sessions/s1/restore/preview`, { method: 'POST', headers: { ...stolen, 'content-type': 'application/json' }, body: JSON.stringify({ workspace: dirs.workspace, tag: '0' }) });
    expect(restore.status).toBe(401);
    expect(await streamStatus(`/events?workspace=${ws()}`, stolen)).toBe(401);
    // A wrong key is no better; a key without the cookie is nothing.
    // One character changed, always to a different one: the last character of a 32-byte base64url key
    // is 'A' one time in 16, so a fixed replacement made this test fail one run in 16.
    const wrongKey = `${key[0] === 'A' ? 'B' : 'A'}${key.slice(1)}`;
    expect(wrongKey).not.toBe(key);
    expect((await fetch(`${daemon.url}/workspaces`, { headers: { cookie, 'x-ckpt-key': wrongKey } })).status).toBe(401);
    expect((await fetch(`${daemon.url}/workspaces`, { headers: { 'x-ckpt-key': key } })).status).toBe(401);
    // The key in a query string counts only for the live feed (an EventSource cannot send headers).
    expect((await fetch(`${daemon.url}/workspaces?key=${key}`, { headers: { cookie } })).status).toBe(401);
  });

  it('opens only the page shell and its static files; with the page key the API answers', async () => {
    expect((await fetch(`${daemon.url}/`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${daemon.url}/web/app.js`, { headers: { cookie } })).status).toBe(200);
    const signed = { cookie, 'x-ckpt-key': key };
    expect((await fetch(`${daemon.url}/workspaces`, { headers: signed })).status).toBe(200);
    const file = await fetch(`${daemon.url}/sessions/s1/file?workspace=${ws()}&tag=1&path=secret.txt`, { headers: signed });
    expect(file.status).toBe(200);
    expect(await streamStatus(`/events?workspace=${ws()}&key=${key}`, { cookie })).toBe(200);
    // Writes still need X-Ckpt: 1 as well.
    const body = JSON.stringify({ workspace: dirs.workspace, tag: '1' });
    expect((await fetch(`${daemon.url}/sessions/s1/restore/preview`, { method: 'POST', headers: { ...signed, 'content-type': 'application/json' }, body })).status).toBe(401);
    expect((await fetch(`${daemon.url}/sessions/s1/restore/preview`, { method: 'POST', headers: { ...signed, 'x-ckpt': '1', 'content-type': 'application/json' }, body })).status).toBe(200);
  });
});

describe('a cookie of the same name set by a page on another port', () => {
  // Cookies are not port-scoped: a dev server on 127.0.0.1:3000 can set `ckpt_session=junk; Path=/sessions`,
  // which the browser sends before the page's own (longer path first) on every /sessions request. The
  // page was signed out for good, a new sign-in included, while only the first value was looked at.
  it('does not sign the page out: any live value of the cookie counts, a junk one alone still nothing', async () => {
    const signed = { 'x-ckpt-key': key };
    const tossed = `ckpt_session=junk; ${cookie}`;
    expect((await fetch(`${daemon.url}/sessions/s1/file?workspace=${ws()}&tag=1&path=secret.txt`, { headers: { ...signed, cookie: tossed } })).status).toBe(200);
    expect((await fetch(`${daemon.url}/sessions/s1/restore/preview`, { method: 'POST', headers: { ...signed, cookie: tossed, 'x-ckpt': '1', 'content-type': 'application/json' }, body: JSON.stringify({ workspace: dirs.workspace, tag: '1' }) })).status).toBe(200);
    expect(await streamStatus(`/events?workspace=${ws()}&key=${key}`, { cookie: tossed })).toBe(200);
    expect((await fetch(`${daemon.url}/workspaces`, { headers: { ...signed, cookie: 'ckpt_session=junk; ckpt_session=other' } })).status).toBe(401);
  });
});

describe('POST /web/code', () => {
  it('needs the bearer token itself: a cookie (with or without the key) plus any Authorization value mints nothing', async () => {
    for (const headers of [
      { cookie, 'x-ckpt': '1', authorization: 'Bearer junk' },
      { cookie, 'x-ckpt': '1', 'x-ckpt-key': key, authorization: 'Bearer junk' },
      { cookie, 'x-ckpt': '1', 'x-ckpt-key': key, authorization: 'Basic Zm9vOmJhcg==' },
      { cookie, 'x-ckpt': '1', 'x-ckpt-key': key, authorization: '' },
    ]) {
      const res = await fetch(`${daemon.url}/web/code`, { method: 'POST', headers: headers as Record<string, string> });
      expect(res.status, JSON.stringify(headers.authorization)).toBe(401);
    }
    expect((await fetch(`${daemon.url}/web/code`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}` } })).status).toBe(200);
  });
});

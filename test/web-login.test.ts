// The web page's login over real HTTP (issue 14): one-time codes, the session cookie accepted by
// the API, writes with the cookie only with `X-Ckpt: 1`, the page and assets behind the guard with
// a `default-src 'self'` CSP, paged events without blob ids, and `ckpt open --print`.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { openStore, type Store } from '../src/store.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-weblogin-');
  store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
});

afterEach(async () => {
  await daemon.close();
  await dirs.cleanup();
});

const code = async (): Promise<string> => {
  const res = await fetch(`${daemon.url}/web/code`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { code: string }).code;
};

const login = async (c: string): Promise<Response> => fetch(`${daemon.url}/login?code=${encodeURIComponent(c)}`, { redirect: 'manual' });

describe('web login', () => {
  it('exchanges a code once for an HttpOnly SameSite=Strict cookie and a redirect without the code', async () => {
    const c = await code();
    // A HEAD (a link preview, a prefetch) neither spends the code nor signs in.
    const head = await fetch(`${daemon.url}/login?code=${encodeURIComponent(c)}`, { method: 'HEAD', redirect: 'manual' });
    expect([head.status, head.headers.get('set-cookie')]).toEqual([200, null]);
    expect((await fetch(`${daemon.url}/login?code=nope`, { method: 'HEAD' })).status).toBe(401);
    const res = await login(c);
    expect(res.status).toBe(303);
    // The page key rides in the fragment (issue 27): the cookie alone opens no API route.
    expect(res.headers.get('location')).toMatch(/^\/#k=[\w-]{43}$/);
    const key = res.headers.get('location')!.slice('/#k='.length);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^ckpt_session=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\//);
    expect((await login(c)).status).toBe(401);
    expect((await login('x'.repeat(24))).status).toBe(401);
    // The cookie opens the page and the API; nothing without it.
    const session = cookie.split(';')[0]!;
    const signed = { cookie: session, 'x-ckpt-key': key };
    const page = await fetch(`${daemon.url}/`, { headers: { cookie: session } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('/web/app.js');
    expect((await fetch(`${daemon.url}/web/app.js`, { headers: { cookie: session } })).headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${daemon.url}/web/app.js`)).status).toBe(401);
    expect((await fetch(`${daemon.url}/workspaces`, { headers: signed })).status).toBe(200);
    expect((await fetch(`${daemon.url}/workspaces`, { headers: { cookie: session } })).status).toBe(401);
    const bare = await fetch(`${daemon.url}/`);
    expect(bare.status).toBe(401);
    expect(await bare.text()).not.toContain('app.js');
    expect((await fetch(`${daemon.url}/workspaces`, { headers: { cookie: 'ckpt_session=forged' } })).status).toBe(401);
    // Only the bearer token issues codes: a cookie does not.
    expect((await fetch(`${daemon.url}/web/code`, { method: 'POST', headers: { cookie: session, 'x-ckpt': '1' } })).status).toBe(401);

    // A write with the cookie needs X-Ckpt: 1 (a cross-site form cannot send it).
    const body = JSON.stringify({ workspace: dirs.workspace, id: 's1' });
    const noHeader = await fetch(`${daemon.url}/sessions`, { method: 'POST', headers: { ...signed, 'content-type': 'application/json' }, body });
    expect(noHeader.status).toBe(401);
    const withHeader = await fetch(`${daemon.url}/sessions`, { method: 'POST', headers: { ...signed, 'content-type': 'application/json', 'x-ckpt': '1' }, body });
    expect(withHeader.status).toBe(200);

    // Paged events, no blob ids.
    const s = await (await store.openWorkspace(dirs.workspace)).get('s1');
    await s.turn({ text: 'hi', scan: false }); // no look: the capture of the file made since is its only record
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${dirs.workspace}/a.txt`, 'x');
    await s.capture(['a.txt'], { tool: 'Edit' });
    const q = new URLSearchParams({ workspace: dirs.workspace, offset: '1', limit: '2' });
    const page2 = (await (await fetch(`${daemon.url}/sessions/s1/events?${q}`, { headers: signed })).json()) as { total: number; offset: number; events: { type: string }[] };
    expect(page2.total).toBe(3);
    expect(page2.events.map((e) => e.type)).toEqual(['turn', 'capture']);
    expect(JSON.stringify(page2)).not.toMatch(/"blob"/);
    const list = (await (await fetch(`${daemon.url}/web/sessions?workspace=${encodeURIComponent(dirs.workspace)}`, { headers: signed })).json()) as { sessions: unknown[] };
    expect(list.sessions).toMatchObject([{ id: 's1', turns: 1, captures: 1, filesTouched: 1 }]);
  });

  it('ckpt open --print prints an address with a fresh working code', async () => {
    const run = await runCli(['--store', dirs.store, 'open', '--print', '--json'], { cwd: dirs.workspace });
    expect(run.code).toBe(0);
    const { url, launched } = run.json();
    expect(launched).toBe(false);
    expect(url).toMatch(new RegExp(`^${daemon.url}/login\\?code=`));
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(303);
    // Without --json: the address alone, as the help says (a newcomer probe: it was a sentence).
    const text = await runCli(['--store', dirs.store, 'open', '--print'], { cwd: dirs.workspace });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${daemon.url}/login\\?code=[^\\s]+\n$`));
  });
});

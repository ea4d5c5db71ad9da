// The HTTP daemon (issue 13): a real server on a random loopback port and real HTTP requests — the
// guards (token 401, Host 403, body cap 413, bad JSON 400), the happy path of every route, the
// restore preview token (stale -> 409), live events from another process, one daemon per store.
import { readFile, writeFile, mkdir, stat } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { openStore, type Store } from '../src/store.js';
import { runCli } from './helpers/cli.js';
import { createClient } from './helpers/http.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon;
let client: ReturnType<typeof createClient>;
let ws: string;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-http-');
  store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
  client = createClient(daemon.url, daemon.token);
  ws = dirs.workspace;
});

afterEach(async () => {
  await daemon.close();
  await dirs.cleanup();
});

const post = (path: string, body: unknown) => client.call('POST', path, { body });
const get = (path: string) => client.call('GET', path);
const q = (extra: Record<string, string> = {}) => `?${new URLSearchParams({ workspace: ws, ...extra })}`;

describe('guards', () => {
  it('listens on loopback and keeps its token in a 0600 file', async () => {
    expect(daemon.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const st = await stat(join(dirs.store, 'daemon', 'token'));
    expect(st.mode & 0o777).toBe(0o600);
    expect((await readFile(join(dirs.store, 'daemon', 'token'), 'utf8')).trim()).toBe(daemon.token);
  });

  it('401 without or with a wrong token, 403 for a foreign Host, no CORS headers', async () => {
    const none = await client.call('GET', '/health', { token: null });
    expect(none.status).toBe(401);
    expect(none.json().error.code).toBe('UNAUTHORIZED');
    expect((await client.call('GET', '/health', { token: 'f'.repeat(64) })).status).toBe(401);
    const rebound = await client.call('GET', '/health', { host: 'attacker.example:80' });
    expect(rebound.status).toBe(403);
    expect(rebound.json().error.code).toBe('FORBIDDEN');
    const ok = await client.call('GET', '/health', { host: 'localhost', headers: { origin: 'http://attacker.example' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('413 for an oversized body, 400 with a code for bad JSON or bad input, 404 for unknown routes', async () => {
    const big = await client.head(['POST /sessions HTTP/1.1', `host: ${new URL(daemon.url).host}`, 'content-type: application/json', `content-length: ${2 * 1024 * 1024}`]);
    expect(big).toMatch(/^HTTP\/1\.1 413 /);
    const bad = await client.call('POST', '/sessions', { raw: '{"workspace": ' });
    expect(bad.status).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'INVALID_ARGUMENT', data: { reason: 'json' } });
    const invalid = await post('/sessions', { workspace: 'relative/path' });
    expect(invalid.status).toBe(400);
    const missing = await post('/sessions', {});
    expect(missing.status).toBe(400);
    expect(missing.json().error.data.issues[0].path).toBe('workspace');
    expect((await get('/nope')).status).toBe(404);
    expect((await get(`/sessions/none${q()}`)).json().error.code).toBe('SESSION_NOT_FOUND');
  });
});

describe('routes', () => {
  it('serve the CLI contract: sessions, turn, capture, settle, scan, log, diff, restore, undo, rewind, prune, gc, verify, stats', async () => {
    const created = await post('/sessions', { workspace: ws, id: 's1', title: 'first', baseline: false });
    expect(created.status).toBe(200);
    expect(created.json().session).toMatchObject({ id: 's1', title: 'first' });
    expect((await get(`/sessions${q()}`)).json().sessions.map((s: { id: string }) => s.id)).toEqual(['s1']);
    expect((await get(`/sessions/s1${q()}`)).json()).toMatchObject({ session: { id: 's1' }, turns: 0, captures: 0 });
    expect((await get(`/sessions/~latest${q()}`)).json().session.id).toBe('s1');
    expect((await get('/workspaces')).json().workspaces).toHaveLength(1);

    await writeFile(join(ws, 'a.txt'), 'one\n');
    expect((await post('/sessions/s1/scan', { workspace: ws })).json()).toMatchObject({ baseline: true });
    expect((await post('/sessions/s1/turn', { workspace: ws, messageCount: 1 })).json()).toEqual({ turn: 1, tag: '1' });
    const cap = (await post('/sessions/s1/capture', { workspace: ws, paths: ['a.txt'], tool: 'Edit' })).json();
    expect(cap).toMatchObject({ tag: '1.1', files: [{ path: 'a.txt', state: 'file', bytes: 4 }] });
    expect(cap.files[0].blob).toBeUndefined();
    await writeFile(join(ws, 'a.txt'), 'two\n');
    expect((await post('/sessions/s1/settle', { workspace: ws, paths: ['a.txt'] })).json()).toMatchObject({ tag: '1.1' });
    await writeFile(join(ws, 'b.txt'), 'made by a shell\n');
    const scanned = (await post('/sessions/s1/scan', { workspace: ws, tool: 'Bash' })).json();
    expect(scanned).toMatchObject({ tag: '1.2', files: [{ path: 'b.txt', change: 'created' }] });
    expect(scanned.watched).toBe(2); // the second scan through the daemon looks at the touched paths only (a.txt, b.txt)

    const log = (await get(`/sessions/s1/log${q()}`)).json();
    expect(log.checkpoints.map((c: { tag: string }) => c.tag)).toEqual(['1.1', '1.2']);
    const diff = (await get(`/sessions/s1/diff${q({ from: '1', patch: '1' })}`)).json();
    expect(diff.changes).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'a.txt', status: 'M' }), expect.objectContaining({ path: 'b.txt', status: 'A' })]));
    expect(diff.patch).toContain('+two');
    // status, show and file at a tag (scoped to the session's own records)
    expect((await get(`/sessions/s1/status${q()}`)).json()).toMatchObject({ session: 's1', turn: 1 });
    expect((await get(`/sessions/s1/show${q({ tag: '1' })}`)).json()).toMatchObject({ tag: '1', next: { tag: '1.1' } });
    expect((await get(`/sessions/s1/file${q({ tag: '1', path: 'a.txt' })}`)).json()).toMatchObject({ path: 'a.txt', state: 'file', content: Buffer.from('one\n').toString('base64') });
    const raw = await get(`/sessions/s1/file${q({ tag: '1', path: 'a.txt', raw: '1' })}`);
    expect(raw.text).toBe('one\n');
    expect((await get(`/sessions/s1/file${q({ tag: '1', path: '../x' })}`)).status).toBe(400);

    // restore: preview, then the restore with its token
    const preview = (await post('/sessions/s1/restore/preview', { workspace: ws, tag: '1' })).json();
    expect(preview).toMatchObject({ dryRun: true, restored: ['a.txt'], deleted: ['b.txt'] });
    expect(preview.plan).toEqual(expect.arrayContaining([{ path: 'a.txt', action: 'write' }]));
    expect(await readFile(join(ws, 'a.txt'), 'utf8')).toBe('two\n');
    const noToken = await post('/sessions/s1/restore', { workspace: ws, tag: '1' });
    expect(noToken.status).toBe(400);
    const otherTag = await post('/sessions/s1/restore', { workspace: ws, tag: '1.1', token: preview.token });
    expect(otherTag.status).toBe(400);
    const restored = (await post('/sessions/s1/restore', { workspace: ws, tag: '1', token: preview.token })).json();
    expect(restored).toMatchObject({ to: '1', restored: ['a.txt'], deleted: ['b.txt'] });
    expect(await readFile(join(ws, 'a.txt'), 'utf8')).toBe('one\n');

    // Undo and rewind need their preview's token as restore does (issue 27 item 4).
    expect((await post('/sessions/s1/undo', { workspace: ws, tag: restored.undo, path: 'a.txt' })).status).toBe(400);
    const undoPreview = (await post('/sessions/s1/undo', { workspace: ws, tag: restored.undo, path: 'a.txt', dryRun: true })).json();
    const undo = (await post('/sessions/s1/undo', { workspace: ws, tag: restored.undo, path: 'a.txt', token: undoPreview.token })).json();
    expect(undo.restored).toEqual(['a.txt']);
    expect(await readFile(join(ws, 'a.txt'), 'utf8')).toBe('two\n');

    const fork = (await post('/sessions/s1/fork', { workspace: ws, at: '1', id: 'f1' })).json();
    expect(fork.session).toMatchObject({ id: 'f1', parent: 's1' });
    expect((await get(`/tree${q()}`)).json().tree[0].session.id).toBe('s1');

    const rewind = (await post('/sessions/s1/rewind', { workspace: ws, tag: '1', dryRun: true })).json();
    expect(rewind).toMatchObject({ dryRun: true, session: 's1' });
    expect((await post('/sessions/s1/prune', { workspace: ws, keepTurns: 5 })).json()).toMatchObject({ session: 's1' });
    expect((await post('/gc', { dryRun: true, grace: '0s' })).json()).toMatchObject({ dryRun: true });
    expect((await post('/verify', {})).json()).toMatchObject({ ok: true });
    expect((await get('/verify')).status).toBe(404); // heavy work is behind POST (issue 27 item 12)
    expect((await get('/stats')).json().workspaces).toHaveLength(1);
    expect((await client.call('DELETE', `/sessions/f1${q()}`)).json()).toEqual({ removed: 'f1' });
    expect((await get(`/sessions/f1${q()}`)).status).toBe(404);

    const doc = (await get('/openapi.json')).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/sessions/{id}/restore'].post.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['workspace', 'tag', 'token']));
  });

  it('refuses a restore whose preview is stale (409, nothing changed)', async () => {
    await post('/sessions', { workspace: ws, id: 's1', baseline: false });
    await writeFile(join(ws, 'a.txt'), 'one\n');
    await post('/sessions/s1/turn', { workspace: ws });
    await post('/sessions/s1/capture', { workspace: ws, paths: ['a.txt'] });
    await writeFile(join(ws, 'a.txt'), 'two\n');
    await post('/sessions/s1/settle', { workspace: ws, paths: ['a.txt'] });
    const preview = (await post('/sessions/s1/restore/preview', { workspace: ws, tag: '1' })).json();
    // Another writer moves the session on (here the CLI, as a separate process).
    const cli = await runCli(['--store', dirs.store, '--workspace', ws, '--session', 's1', 'turn', '--json'], { cwd: ws });
    expect(cli.code).toBe(0);
    const stale = await post('/sessions/s1/restore', { workspace: ws, tag: '1', token: preview.token });
    expect(stale.status).toBe(409);
    expect(stale.json().error.code).toBe('CONFLICT');
    expect(await readFile(join(ws, 'a.txt'), 'utf8')).toBe('two\n');
  });

  it('refuses a restore when the files changed since its preview, even at the same seq (the look finds a hand edit)', async () => {
    await post('/sessions', { workspace: ws, id: 's1' }); // with a baseline: turns scan, restores look
    await writeFile(join(ws, 'a.txt'), 'one\n');
    await post('/sessions/s1/turn', { workspace: ws });
    await post('/sessions/s1/capture', { workspace: ws, paths: ['a.txt'] });
    await writeFile(join(ws, 'a.txt'), 'two\n');
    await post('/sessions/s1/settle', { workspace: ws, paths: ['a.txt'] });
    const preview = (await post('/sessions/s1/restore/preview', { workspace: ws, tag: '1', force: true })).json();
    expect(preview.plan).toEqual([{ path: 'a.txt', action: 'write' }]);
    await writeFile(join(ws, 'notes.txt'), 'by hand, after the preview\n');
    const stale = await post('/sessions/s1/restore', { workspace: ws, tag: '1', force: true, token: preview.token });
    expect(stale.status).toBe(409);
    expect(stale.json().error.code).toBe('CONFLICT');
    expect(await readFile(join(ws, 'notes.txt'), 'utf8')).toBe('by hand, after the preview\n');
    expect(await readFile(join(ws, 'a.txt'), 'utf8')).toBe('two\n');
    // Previewed again, it shows the hand edit and runs.
    const again = (await post('/sessions/s1/restore/preview', { workspace: ws, tag: '1', force: true })).json();
    expect(again.plan).toEqual(expect.arrayContaining([{ path: 'notes.txt', action: 'delete' }]));
    const done = await post('/sessions/s1/restore', { workspace: ws, tag: '1', force: true, token: again.token });
    expect(done.status).toBe(200);
    expect(await readFile(join(ws, 'a.txt'), 'utf8')).toBe('one\n');
  });
});

describe('live events', () => {
  it('streams appends made by another process, filtered, and resumes after Last-Event-ID', async () => {
    await post('/sessions', { workspace: ws, id: 's1', baseline: false });
    await post('/sessions', { workspace: ws, id: 's2' });
    const stream = client.sse(`/events?${new URLSearchParams({ workspace: ws, session: 's1' })}`);
    await stream.until((e) => e.some((x) => x.event === 'hello'));
    const cli = await runCli(['--store', dirs.store, '--workspace', ws, '--session', 's1', 'turn', '--text', 'hi', '--json'], { cwd: ws });
    expect(cli.code).toBe(0);
    await runCli(['--store', dirs.store, '--workspace', ws, '--session', 's2', 'turn', '--json'], { cwd: ws });
    await stream.until((e) => e.some((x) => x.event === 'turn'));
    const turn = stream.events.find((x) => x.event === 'turn')!;
    expect(JSON.parse(turn.data)).toMatchObject({ session: 's1', root: ws, event: { type: 'turn', turn: 1, text: 'hi' } });

    // The daemon's own appends arrive too; a reconnect with Last-Event-ID gets what it missed.
    stream.close();
    await post('/sessions/s1/turn', { workspace: ws });
    await post('/sessions/s2/turn', { workspace: ws });
    const again = client.sse(`/events?${new URLSearchParams({ session: 's1' })}`, { 'last-event-id': turn.id! });
    await again.until((e) => e.filter((x) => x.event === 'turn').length >= 1);
    const turns = again.events.filter((x) => x.event === 'turn').map((x) => JSON.parse(x.data));
    expect(turns.every((t) => t.session === 's1')).toBe(true);
    expect(turns[0].event.turn).toBe(2);
    again.close();

    const unknown = client.sse('/events', { 'last-event-id': 'deadbeef-3' });
    await unknown.until((e) => e.some((x) => x.event === 'reset'));
    unknown.close();
  });
});

describe('one daemon per store', () => {
  it('a second daemon refuses and says where the first listens', async () => {
    const second = await runCli(['--store', dirs.store, 'serve', '--json'], { cwd: ws });
    expect(second.code).toBe(7);
    expect(JSON.parse(second.stderr).error).toMatchObject({ code: 'LOCKED', data: { url: daemon.url } });
  });

  it('a restart without --port listens on the port of the last start (installed HTTP hooks name it)', async () => {
    const { port } = daemon.info;
    await daemon.close();
    daemon = await startDaemon({ store, version: 'test' });
    expect(daemon.info.port).toBe(port);
    // Taken by someone else meanwhile: any free port instead.
    await daemon.close();
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', r));
    try {
      daemon = await startDaemon({ store, version: 'test' });
      expect(daemon.info.port).not.toBe(port);
    } finally {
      squatter.close();
    }
  });

  it('takes over the claim of a daemon that died', async () => {
    await daemon.close();
    const dead = spawn(process.execPath, ['-e', '0']);
    const pid = dead.pid!;
    await new Promise((r) => dead.on('exit', r));
    await mkdir(join(dirs.store, 'daemon'), { recursive: true });
    await writeFile(join(dirs.store, 'daemon', 'daemon.json'), JSON.stringify({ pid, url: 'http://127.0.0.1:1', startedAt: new Date().toISOString() }));
    daemon = await startDaemon({ store, version: 'test' });
    expect(JSON.parse(await readFile(join(dirs.store, 'daemon', 'daemon.json'), 'utf8')).pid).toBe(process.pid);
  });
});

describe('the CLI with a daemon running', () => {
  it('ckpt scan goes through the daemon (watched), and scans in-process with CKPT_NO_DAEMON=1', async () => {
    await post('/sessions', { workspace: ws, id: 's1', baseline: false });
    await writeFile(join(ws, 'a.txt'), 'one\n');
    const args = ['--store', dirs.store, '--workspace', ws, '--session', 's1', 'scan', '--json'];
    const first = await runCli(args, { cwd: ws });
    expect(first.json()).toMatchObject({ baseline: true });
    await writeFile(join(ws, 'a.txt'), 'two\n');
    const second = await runCli(args, { cwd: ws });
    expect(second.code).toBe(0);
    expect(second.json()).toMatchObject({ tag: '0.1', watched: 1, files: [{ path: 'a.txt', change: 'modified' }] });
    await writeFile(join(ws, 'a.txt'), 'three\n');
    const local = await runCli(args, { cwd: ws, env: { CKPT_NO_DAEMON: '1' } });
    expect(local.json()).toMatchObject({ tag: '0.2', files: [{ path: 'a.txt', change: 'modified' }] });
    expect(local.json().watched).toBeUndefined();
  });

  it('--max-file-size and CKPT_MAX_FILE_SIZE hold with a daemon running (it scans with its own cap: a probe saw it store what was to be skipped)', async () => {
    await post('/sessions', { workspace: ws, id: 's1', baseline: false });
    const args = ['--store', dirs.store, '--workspace', ws, '--session', 's1', 'scan', '--json'];
    expect((await runCli(args, { cwd: ws })).json()).toMatchObject({ baseline: true });
    await writeFile(join(ws, 'big'), 'x'.repeat(3000));
    const flag = (await runCli([...args, '--max-file-size', '1K'], { cwd: ws })).json();
    expect(flag.watched).toBeUndefined();
    expect(flag.skipped).toEqual([expect.objectContaining({ path: 'big', why: 'too-large' })]);
    await writeFile(join(ws, 'big'), 'y'.repeat(3000));
    const env = (await runCli(args, { cwd: ws, env: { CKPT_MAX_FILE_SIZE: '1K' } })).json();
    expect(env.watched).toBeUndefined();
    expect(env.skipped).toEqual([expect.objectContaining({ path: 'big', why: 'too-large' })]);
  });

  it("a daemon started with its own cap (CKPT_MAX_FILE_SIZE where it started) does not scan for a CLI at another", async () => {
    await daemon.close();
    await store.close?.();
    store = await openStore({ dir: dirs.store, maxBlobBytes: 1024 });
    daemon = await startDaemon({ store, version: 'test' });
    client = createClient(daemon.url, daemon.token);
    await post('/sessions', { workspace: ws, id: 's1', baseline: false });
    const args = ['--store', dirs.store, '--workspace', ws, '--session', 's1', 'scan', '--json'];
    expect((await runCli(args, { cwd: ws })).json()).toMatchObject({ baseline: true });
    await writeFile(join(ws, 'big'), 'x'.repeat(3000));
    const cli = (await runCli(args, { cwd: ws })).json();
    expect(cli.watched, 'scanned in the CLI').toBeUndefined();
    expect(cli).toMatchObject({ files: [{ path: 'big', change: 'created' }] });
    expect(cli.skipped ?? [], 'stored: the CLI cap is the default').toEqual([]);
    await writeFile(join(ws, 'big'), 'y'.repeat(3000));
    // The daemon's own cap: it answers.
    expect((await runCli(args, { cwd: ws, env: { CKPT_MAX_FILE_SIZE: '1K' } })).json().skipped).toEqual([expect.objectContaining({ path: 'big', why: 'too-large' })]);
  });

  it('CKPT_DISABLE=1 records nothing with a daemon running either (the daemon does not see the env)', async () => {
    await post('/sessions', { workspace: ws, id: 's1', baseline: false });
    const args = ['--store', dirs.store, '--workspace', ws, '--session', 's1', 'scan', '--json'];
    expect((await runCli(args, { cwd: ws })).json()).toMatchObject({ baseline: true });
    await writeFile(join(ws, 'a.txt'), 'one\n');
    const off = await runCli(args, { cwd: ws, env: { CKPT_DISABLE: '1' } });
    expect(off.code).toBe(0);
    expect(off.json()).toMatchObject({ tag: null, files: [], disabled: true });
    expect((await runCli(args.slice(0, -1), { cwd: ws, env: { CKPT_DISABLE: '1' } })).stdout).toContain('nothing scanned');
    // Switched back on, the change is still there to record.
    expect((await runCli(args, { cwd: ws })).json()).toMatchObject({ tag: '0.1', files: [{ path: 'a.txt', change: 'created' }] });
  });
});

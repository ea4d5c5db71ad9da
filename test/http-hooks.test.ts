// HTTP hooks on the daemon (issue 13): `POST /hooks/claude` records Claude Code's hook JSON as
// `ckpt hook claude` does — capture before Edit/Write, settle after, a watched scan after Bash — and
// never blocks the agent (200 with a systemMessage when it fails) unless strict. And command hooks
// scan through the daemon when one runs for the store, in-process when none does. Real daemon on a
// random loopback port, real requests, real CLI child processes.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../src/http/daemon.js';
import { agentSessionId } from '../src/index.js';
import { hookCredential, hookKey } from '../src/daemon/hook-credential.js';
import { openStore, type Store } from '../src/store.js';
import { claudeEvents as ev, claudeSession } from './fixtures/claude-events.js';
import { runCli } from './helpers/cli.js';
import { createClient } from './helpers/http.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let store: Store;
let daemon: RunningDaemon | undefined;
let client: ReturnType<typeof createClient>;
let ws: string;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-http-hooks-');
  store = await openStore({ dir: dirs.store });
  daemon = await startDaemon({ store, version: 'test' });
  client = createClient(daemon.url, daemon.token);
  ws = dirs.workspace;
  // These hooks carry no ?workspace= (user scope): they record only in a workspace the store knows (issue 27 item 6).
  await store.openWorkspace(ws);
});

afterEach(async () => {
  await daemon?.close();
  await dirs.cleanup();
});

const hook = (body: unknown, query = '') => client.call('POST', `/hooks/claude${query}`, typeof body === 'string' ? { raw: body } : { body });
const checkpoints = async (externalId: string) => {
  const s = await (await store.openWorkspace(ws)).get(agentSessionId('claude', externalId));
  return (await s.checkpoints()).map((c) => `${c.tag}:${c.tool}`);
};
const health = async () => (await client.call('GET', '/health')).json();

describe('POST /hooks/claude', () => {
  it('records a session: baseline, turn, capture before Edit, settle after, a watched scan after Bash', async () => {
    const s = claudeSession(ws);
    await writeFile(join(ws, 'a.txt'), 'one\n');
    const start = await hook(ev.sessionStart(s));
    expect(start.status).toBe(200);
    expect(start.json()).toEqual({});
    expect((await hook(ev.userPromptSubmit(s, 'fix a.txt'))).json()).toEqual({});
    const edit = { file_path: join(ws, 'a.txt'), old_string: 'one', new_string: 'two', replace_all: false };
    expect((await hook(ev.preToolUse(s, 'Edit', edit, 'toolu_1'))).json()).toEqual({});
    await writeFile(join(ws, 'a.txt'), 'two\n');
    expect((await hook(ev.postToolUse(s, 'Edit', edit, 'toolu_1', { filePath: join(ws, 'a.txt') }))).json()).toEqual({});
    // The workspace is watched from the session's start; its first scan (the turn start's) is still a
    // full one (what changed before the watch began is unknown), the next ones look only at touched paths.
    const bash = { command: 'echo x > b.txt', description: 'write b' };
    await hook(ev.preToolUse(s, 'Bash', bash, 'toolu_2'));
    expect((await hook(ev.postToolUse(s, 'Bash', bash, 'toolu_2', { stdout: '' }))).json()).toEqual({});
    expect((await health()).scans).toEqual({ total: 2, watched: 1, inChild: 0 });
    await hook(ev.preToolUse(s, 'Bash', bash, 'toolu_3'));
    await writeFile(join(ws, 'b.txt'), 'x\n');
    expect((await hook(ev.postToolUse(s, 'Bash', bash, 'toolu_3', { stdout: '' }))).json()).toEqual({});
    expect((await health()).scans).toEqual({ total: 3, watched: 2, inChild: 0 });
    expect(await checkpoints(s.session_id)).toEqual(['1.1:Edit', '1.2:Bash']);
    const restoredFrom = await (await store.openWorkspace(ws)).get(agentSessionId('claude', s.session_id));
    expect((await restoredFrom.diff('1')).changes.map((f) => `${f.path}:${f.status}`).sort()).toEqual(['a.txt:M', 'b.txt:A']);
  });

  it('a capture of new content is durable in its event when answered; its blob-store copy follows (drained on stop)', async () => {
    const s = claudeSession(ws);
    await hook(ev.sessionStart(s));
    await hook(ev.userPromptSubmit(s, 'edit new.txt'));
    await writeFile(join(ws, 'new.txt'), 'content the store has never seen\n');
    const edit = { file_path: join(ws, 'new.txt'), old_string: 'content', new_string: 'text', replace_all: false };
    expect((await hook(ev.preToolUse(s, 'Edit', edit, 'toolu_9'))).json()).toEqual({});
    const session = await (await store.openWorkspace(ws)).get(agentSessionId('claude', s.session_id));
    const capture = (await session.events()).filter((e) => e.type === 'capture').at(-1)!;
    const id = (capture.files as { blob: string }[])[0]!.blob;
    expect(capture.inline).toHaveProperty(id);
    await daemon!.close();
    daemon = undefined;
    expect(await store.ctx.blobs.has(id)).toBe(true);
    expect(store.ctx.options.defer).toBeUndefined();
  });

  it('parallel tool calls of one session (concurrent posts) are each captured and settled', async () => {
    const s = claudeSession(ws);
    const names = ['p0.txt', 'p1.txt', 'p2.txt', 'p3.txt', 'p4.txt', 'p5.txt'];
    // Before the session's baseline: made after it, before any prompt, they would be the user's first.
    for (const n of names) await writeFile(join(ws, n), `old ${n}\n`);
    await hook(ev.sessionStart(s));
    const input = (n: string) => ({ file_path: join(ws, n), content: `new ${n}\n` });
    const pre = await Promise.all(names.map((n, i) => hook(ev.preToolUse(s, 'Write', input(n), `toolu_p${i}`))));
    expect(pre.map((r) => [r.status, r.text])).toEqual(names.map(() => [200, '{}']));
    for (const n of names) await writeFile(join(ws, n), `new ${n}\n`);
    const post = await Promise.all(names.map((n, i) => hook(ev.postToolUse(s, 'Write', input(n), `toolu_p${i}`, {}))));
    expect(post.map((r) => r.text)).toEqual(names.map(() => '{}'));
    const session = await (await store.openWorkspace(ws)).get(agentSessionId('claude', s.session_id));
    const events = await session.events();
    expect(events.filter((e) => e.type === 'capture').length).toBe(names.length);
    expect(events.filter((e) => e.type === 'settle').length).toBe(names.length);
    const d = await session.diff('0');
    expect(d.changes.map((c) => `${c.path}:${c.status}`).sort()).toEqual(names.map((n) => `${n}:M`));
  });

  it('takes a hook body over the 1 MiB cap of other routes (a Write of a large file), up to the hook input cap', async () => {
    const s = claudeSession(ws);
    await writeFile(join(ws, 'big.txt'), 'old\n');
    const write = { file_path: join(ws, 'big.txt'), content: 'y'.repeat(3 * 1024 * 1024) };
    const pre = await hook(ev.preToolUse(s, 'Write', write, 'toolu_w'));
    expect(pre.status).toBe(200);
    expect(pre.json()).toEqual({});
    expect(await checkpoints(s.session_id)).toEqual(['0.1:Write']);
    // Other routes keep their cap.
    const other = await client.call('POST', '/sessions', { raw: JSON.stringify({ workspace: ws, title: 'x'.repeat(2 * 1024 * 1024) }) });
    expect(other.status).toBe(413);
  });

  it('never blocks: bad JSON, a path outside the project, an input over the cap -> 200 with a systemMessage; strict blocks', async () => {
    const s = claudeSession(ws);
    const bad = await hook('{"hook_event_name": ');
    expect(bad.status).toBe(200);
    expect(bad.json().systemMessage).toMatch(/INVALID_ARGUMENT/);
    const escape = await hook(ev.preToolUse(s, 'Edit', { file_path: '/etc/passwd', old_string: 'a', new_string: 'b' }, 'toolu_3'));
    expect(escape.status).toBe(200);
    expect(escape.json().systemMessage).toMatch(/PATH_ESCAPE/);
    const huge = await hook(ev.preToolUse(s, 'Write', { file_path: join(ws, 'h.txt'), content: 'z'.repeat(9 * 1024 * 1024) }, 'toolu_4'));
    expect(huge.status).toBe(200);
    expect(huge.json().systemMessage).toMatch(/over the 8388608-byte cap/);
    const log = (await readFile(join(dirs.store, 'hooks.log'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(log.map((e: { code: string }) => e.code)).toEqual(['INVALID_ARGUMENT', 'PATH_ESCAPE', 'INVALID_ARGUMENT']);

    const strict = await hook(ev.preToolUse(s, 'Edit', { file_path: '/etc/passwd', old_string: 'a', new_string: 'b' }, 'toolu_5'), '?strict=1');
    expect(strict.status).toBe(200);
    expect(strict.json()).toMatchObject({ decision: 'block', hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny' } });
    expect(strict.json().reason).toMatch(/PATH_ESCAPE/);
  });

  it('needs the bearer token and a loopback Host; a bad hook URL query is 400; an unknown agent is 400; other /hooks paths are the app\'s', async () => {
    const s = claudeSession(ws);
    const noToken = await client.call('POST', '/hooks/claude', { body: ev.sessionStart(s), token: null });
    expect([noToken.status, noToken.json().error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect((await client.call('POST', '/hooks/claude', { body: ev.sessionStart(s), token: 'x'.repeat(43) })).status).toBe(401);
    const foreign = await client.call('POST', '/hooks/claude', { body: ev.sessionStart(s), host: 'evil.example:80' });
    expect([foreign.status, foreign.json().error.code]).toEqual([403, 'FORBIDDEN']);
    const badQuery = await hook(ev.sessionStart(s), '?workspace=relative');
    expect([badQuery.status, badQuery.json().error.message]).toEqual([400, 'invalid query: workspace: must be an absolute path']);
    expect((await hook(ev.sessionStart(s), '?strict=yes')).status).toBe(400);
    // Parsed queries are remembered by their text: a refused one is refused again, not remembered.
    expect((await hook(ev.sessionStart(s), '?workspace=relative')).status).toBe(400);
    expect((await client.call('POST', '/hooks/nobody', { body: ev.sessionStart(s) })).json().error.code).toBe('INVALID_ARGUMENT');
    expect((await client.call('POST', '/hooks/%E0', { body: ev.sessionStart(s) })).json().error.code).toBe('INVALID_ARGUMENT');
    expect((await client.call('POST', '/hooks/claude/more', { body: ev.sessionStart(s) })).status).toBe(404);
    expect((await client.call('GET', '/hooks/claude')).status).toBe(404);
    // The connection stays usable after refused requests whose bodies were not read.
    expect((await hook(ev.sessionStart(s))).status).toBe(200);
    expect(await readFile(join(dirs.store, 'hooks.log'), 'utf8').catch(() => '')).toBe('');
    const doc = (await client.call('GET', '/openapi.json')).json();
    expect(doc.paths['/hooks/{agent}'].post.parameters.map((p: { name: string }) => p.name)).toEqual(['agent', 'workspace', 'strict']);
  });

  it('?workspace= names the project; without it the workspace is found from cwd (a subfolder after `cd`)', async () => {
    const s = claudeSession(ws);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(ws, 'sub'));
    await hook(ev.sessionStart(s), `?workspace=${encodeURIComponent(ws)}`);
    const inSub = { ...s, cwd: join(ws, 'sub') };
    const write = { file_path: join(ws, 'sub', 'c.txt'), content: 'c\n' };
    await hook(ev.preToolUse(inSub, 'Write', write, 'toolu_c'));
    expect(await checkpoints(s.session_id)).toEqual(['0.1:Write']);
  });
});

describe('command hooks with a daemon running', () => {
  it('the scan after Bash goes through the daemon (watched); with no daemon it is done in-process', async () => {
    const s = claudeSession(ws);
    const cmd = (event: unknown) => runCli(['--store', dirs.store, 'hook', 'claude'], { cwd: ws, input: JSON.stringify(event), env: { CLAUDE_PROJECT_DIR: ws } });
    const bash = { command: 'touch f', description: '' };
    expect((await cmd(ev.sessionStart(s))).code).toBe(0);
    await cmd(ev.preToolUse(s, 'Bash', bash, 'toolu_1'));
    // The first daemon scan of a workspace is a full one (the watcher has just started).
    await writeFile(join(ws, 'f1'), '1');
    await cmd(ev.postToolUse(s, 'Bash', bash, 'toolu_1', {}));
    const first = (await health()).scans;
    expect(first.total).toBe(1);
    await writeFile(join(ws, 'f2'), '2');
    const r = await cmd(ev.postToolUse(s, 'Bash', bash, 'toolu_2', {}));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect((await health()).scans).toEqual({ total: 2, watched: first.watched + 1, inChild: 0 });
    expect(await checkpoints(s.session_id)).toEqual(['0.1:Bash', '0.2:Bash']);

    await daemon!.close();
    daemon = undefined;
    await writeFile(join(ws, 'f3'), '3');
    expect((await cmd(ev.postToolUse(s, 'Bash', bash, 'toolu_3', {}))).code).toBe(0);
    expect(await checkpoints(s.session_id)).toEqual(['0.1:Bash', '0.2:Bash', '0.3:Bash']);
  });

  it('a daemon that exits when idle does not once an agent\'s HTTP hooks posted to it: its port is theirs (another process could take it)', async () => {
    const idleDaemon = async () => {
      let idled = false;
      const d = await startDaemon({ store, version: 'test', idle: { ms: 200, onIdle: () => void (idled = true) } });
      return { d, idled: () => idled };
    };
    await daemon?.close();
    daemon = undefined;
    // No HTTP hook (only the thin client's store token): it exits when idle.
    const quiet = await idleDaemon();
    await createClient(quiet.d.url, quiet.d.token).call('POST', '/hooks/claude', { body: ev.sessionStart(claudeSession(ws)) });
    await new Promise((r) => setTimeout(r, 700));
    expect(quiet.idled()).toBe(true);
    await quiet.d.close();
    // An HTTP hook (a hook credential, as `ckpt init` installs them): it stays.
    const held = await idleDaemon();
    const credential = hookCredential(await hookKey(store.daemonCtx), ws);
    const r = await createClient(held.d.url, credential).call('POST', `/hooks/claude?workspace=${encodeURIComponent(ws)}`, { body: ev.sessionStart(claudeSession(ws)) });
    expect(r.status).toBe(200);
    await new Promise((r) => setTimeout(r, 700));
    expect(held.idled()).toBe(false);
    await held.d.close();
  });
});

// `ckpt mcp` end to end: the real built CLI spawned as an MCP server, driven by the SDK's own Client
// over stdio. Every structuredContent is validated by the client against the tool's outputSchema.
import { chmod, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { startMcp, textOf, type McpHandle } from './helpers/mcp.js';
import { runCli } from './helpers/cli.js';
import { claude } from '../src/hooks/agents/claude.js';
import { installEntries } from '../src/hooks/agent-spec.js';

let dirs: TempDirs;
let mcp: McpHandle;
const w = (rel: string) => join(dirs.workspace, rel);
const read = (rel: string) => readFile(w(rel), 'utf8');

const READ_ONLY = ['session_list', 'session_show', 'session_tree', 'log', 'show', 'diff', 'read_file', 'status', 'restore_preview'];
const RECORDING = ['session_new', 'session_fork', 'turn', 'checkpoint', 'settle'];
const DESTRUCTIVE = ['restore', 'undo', 'rewind'];

beforeAll(async () => {
  dirs = await makeTempDirs('ckpt-mcp-');
  mcp = await startMcp({ store: dirs.store, workspace: dirs.workspace });
}, 30_000);
afterAll(async () => {
  await mcp?.close();
  await dirs?.cleanup();
});

describe('ckpt mcp: tools', () => {
  it('lists every tool with a description, input and output schemas and complete annotations', async () => {
    const { tools } = await mcp.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of [...READ_ONLY, ...RECORDING, ...DESTRUCTIVE]) {
      const tool = byName.get(name);
      expect(tool, name).toBeDefined();
      expect(tool!.description!.length, name).toBeGreaterThan(60);
      expect(tool!.inputSchema.type).toBe('object');
      expect(tool!.outputSchema?.type, name).toBe('object');
      const a = tool!.annotations!;
      expect(a, name).toMatchObject({ openWorldHint: false });
      for (const hint of [a.readOnlyHint, a.destructiveHint, a.idempotentHint]) expect(typeof hint, name).toBe('boolean');
      expect(a.readOnlyHint, name).toBe(READ_ONLY.includes(name));
      expect(a.destructiveHint, name).toBe(DESTRUCTIVE.includes(name));
    }
    // The destructive calls cannot be made without a token.
    for (const name of DESTRUCTIVE) expect(byName.get(name)!.inputSchema.required).toContain('token');
    expect(byName.get('read_file')!.inputSchema.required).toEqual(expect.arrayContaining(['tag', 'path']));
  });

  it('records, diffs, previews and restores with a token; the files on disk follow', async () => {
    await writeFile(w('a.txt'), 'one\ntwo\n');
    const { session } = await mcp.ok('session_new', { title: 'mcp scenario', info: { agent: 'test-agent' } });
    expect(session).toMatchObject({ title: 'mcp scenario', kind: 'root', depth: 0, agent: 'test-agent' });
    expect(await mcp.ok('turn', { messageCount: 3, text: 'change a, add b' })).toMatchObject({ turn: 1, tag: '1' });
    const cp = await mcp.ok('checkpoint', { paths: ['a.txt', 'src/b.txt'], tool: 'Edit' });
    expect(cp).toMatchObject({ kind: 'capture', tag: '1.1', files: [{ path: 'a.txt', state: 'file' }, { path: 'src/b.txt', state: 'absent' }] });
    await writeFile(w('a.txt'), 'one\nTWO\n');
    await mkdir(w('src'));
    await writeFile(w('src/b.txt'), 'bee\n');
    await mcp.ok('settle', { paths: ['a.txt', 'src/b.txt'] });

    const clean = await mcp.ok('status', {});
    expect(clean).toMatchObject({ session: session.id, turn: 1, lastCapture: { tag: '1.1' }, unsettled: [] });
    await writeFile(w('a.txt'), 'one\nbehind ckpt\n');
    const moved = await mcp.ok('status', {});
    expect(moved.changed).toMatchObject({ count: 1, paths: ['a.txt'] });
    expect(textOf(await mcp.call('status', {}))).toContain('a.txt');
    await writeFile(w('a.txt'), 'one\nTWO\n');

    const stat = await mcp.ok('diff', { from: '1' });
    expect(stat.changes).toEqual([
      { path: 'a.txt', status: 'M', added: 1, removed: 1 },
      { path: 'src/b.txt', status: 'A', added: 1, removed: 0 },
    ]);
    expect(stat.patch).toBeUndefined();
    const patch = await mcp.ok('diff', { from: '1', patch: true });
    expect(patch.patch).toContain('-two');
    expect(patch.patch).toContain('+TWO');

    const show = await mcp.ok('show', { tag: '1.1' });
    expect(show).toMatchObject({ turn: { turn: 1, messageCount: 3, text: 'change a, add b' }, next: { tag: '1.1', tool: 'Edit' } });
    const before = await mcp.ok('read_file', { tag: '1', path: 'a.txt' });
    expect(before).toMatchObject({ state: 'file', source: 'capture', from: '1.1', encoding: 'utf8', content: 'one\ntwo\n' });
    expect((await mcp.ok('log', {})).checkpoints.map((c: { tag: string }) => c.tag)).toEqual(['1.1']);

    const preview = await mcp.ok('restore_preview', { tag: '1' });
    // src/ did not exist at turn 1 either: the restore removes the folder it created.
    expect(preview.plan).toEqual([
      { path: 'src/b.txt', action: 'delete' },
      { path: 'src', action: 'delete' },
      { path: 'a.txt', action: 'write' },
    ]);
    expect(preview.token).toMatch(/^ckpt1\./);
    const previewText = textOf(await mcp.call('restore_preview', { tag: '1' }));
    expect(previewText).toContain('Show this plan to the user');
    // Nothing changed by previewing.
    expect(await read('a.txt')).toBe('one\nTWO\n');

    const done = await mcp.ok('restore', { tag: '1', token: preview.token });
    expect(done).toMatchObject({ to: '1', restored: ['a.txt'], drift: [] });
    expect(done.deleted).toContain('src/b.txt');
    expect(done.undo).toMatch(/^1\.\d+$/);
    expect(await read('a.txt')).toBe('one\ntwo\n');
    await expect(read('src/b.txt')).rejects.toMatchObject({ code: 'ENOENT' });

    // The token is spent: the restore moved the session.
    expect((await mcp.fails('restore', { tag: '1', token: preview.token })).code).toBe('TOKEN_STALE');

    // Undo the restore through its undo tag, two-step as well.
    const back = await mcp.ok('restore_preview', { tag: done.undo });
    await mcp.ok('restore', { tag: done.undo, token: back.token });
    expect(await read('a.txt')).toBe('one\nTWO\n');
    expect(await read('src/b.txt')).toBe('bee\n');
  });

  it('refuses a forged, edited, mismatched or stale token, changing nothing', async () => {
    await mcp.ok('turn', {});
    await mcp.ok('checkpoint', { paths: ['a.txt'] });
    await writeFile(w('a.txt'), 'turn two\n');
    await mcp.ok('settle', { paths: ['a.txt'] });
    const tag = '2';
    const preview = await mcp.ok('restore_preview', { tag });
    const [prefix, body, mac] = (preview.token as string).split('.');

    const forged = await mcp.fails('restore', { tag, token: `${prefix}.${body}.${'A'.repeat(mac!.length)}` });
    expect(forged.code).toBe('TOKEN_INVALID');
    const edited = JSON.parse(Buffer.from(body!, 'base64url').toString());
    edited.force = true;
    const tampered = await mcp.fails('restore', { tag, force: true, token: `${prefix}.${Buffer.from(JSON.stringify(edited)).toString('base64url')}.${mac}` });
    expect(tampered.code).toBe('TOKEN_INVALID');
    expect((await mcp.fails('restore', { tag, token: 'not a token' })).code).toBe('TOKEN_INVALID');
    // Issued for restore to 2 of everything: not for another tag, a path filter, force, or undo.
    expect((await mcp.fails('restore', { tag: '1', token: preview.token })).code).toBe('TOKEN_INVALID');
    expect((await mcp.fails('restore', { tag, paths: ['a.txt'], token: preview.token })).code).toBe('TOKEN_INVALID');
    expect((await mcp.fails('restore', { tag, force: true, token: preview.token })).code).toBe('TOKEN_INVALID');
    const wrongOp = await mcp.fails('undo', { tag, path: 'a.txt', token: preview.token });
    expect(wrongOp.code).toBe('TOKEN_INVALID');
    expect(wrongOp.text).toContain('preview exactly what you mean to run');
    expect(await read('a.txt')).toBe('turn two\n');

    // The session moved after the preview, even by an event that leaves the plan as it was.
    const lastSeq = preview.lastSeq as number;
    await mcp.ok('turn', {});
    const moved1 = await mcp.fails('restore', { tag, token: preview.token });
    expect(moved1).toMatchObject({ code: 'TOKEN_STALE', data: { previewSeq: lastSeq, lastSeq: lastSeq + 1 } });
    expect(moved1.text).toContain('restore_preview again');
    // A new capture after the preview.
    const fresh = await mcp.ok('restore_preview', { tag });
    await mcp.ok('checkpoint', { paths: ['other.txt'] });
    expect((await mcp.fails('restore', { tag, token: fresh.token })).code).toBe('TOKEN_STALE');
    expect(await read('a.txt')).toBe('turn two\n');

    // A file the plan concerns changed after the preview (nothing recorded): the workspace moved.
    const again = await mcp.ok('restore_preview', { tag });
    await writeFile(w('a.txt'), 'edited after the preview\n');
    const moved = await mcp.fails('restore', { tag, token: again.token });
    expect(moved).toMatchObject({ code: 'TOKEN_STALE', data: { workspaceMoved: true } });
    expect(await read('a.txt')).toBe('edited after the preview\n');
  });

  it('refuses drift as the CLI does; force must be previewed', async () => {
    // d.txt is there when the turn begins (made during it, a checkpoint would record it as the user's new file first).
    await writeFile(w('d.txt'), 'd1\n');
    await mcp.ok('turn', {});
    await mcp.ok('checkpoint', { paths: ['d.txt'] });
    await writeFile(w('d.txt'), 'd2\n');
    await mcp.ok('settle', { paths: ['d.txt'] });
    await writeFile(w('d.txt'), 'changed behind ckpt\n');
    const turn = (await mcp.ok('session_show', {})).turns as number;

    const preview = await mcp.ok('restore_preview', { tag: String(turn), paths: ['d.txt'] });
    expect(preview.drift).toEqual(['d.txt']);
    expect(preview.wouldRefuse).toEqual({ code: 'DRIFT', paths: ['d.txt'] });
    const drift = await mcp.fails('restore', { tag: String(turn), paths: ['d.txt'], token: preview.token });
    expect(drift.code).toBe('DRIFT');
    expect(await read('d.txt')).toBe('changed behind ckpt\n');

    const forced = await mcp.ok('restore_preview', { tag: String(turn), paths: ['d.txt'], force: true });
    expect(forced.wouldRefuse).toBeUndefined();
    const r = await mcp.ok('restore', { tag: String(turn), paths: ['d.txt'], force: true, token: forced.token });
    expect(r.drift).toEqual(['d.txt']);
    expect(await read('d.txt')).toBe('d1\n');
    // The drifted content went into the undo capture.
    expect((await mcp.ok('read_file', { tag: r.undo, path: 'd.txt' })).content).toBe('changed behind ckpt\n');
  });

  it('undoes one path and rewinds, each with its own preview', async () => {
    await mcp.ok('turn', { messageCount: 10, text: 'undo test' });
    const turn = String((await mcp.ok('session_show', {})).turns);
    await mcp.ok('checkpoint', { paths: ['u1.txt', 'u2.txt'] });
    await writeFile(w('u1.txt'), 'u1\n');
    await writeFile(w('u2.txt'), 'u2\n');
    await mcp.ok('settle', { paths: ['u1.txt', 'u2.txt'] });

    const p = await mcp.ok('restore_preview', { operation: 'undo', tag: turn, path: 'u1.txt' });
    expect(p.plan).toEqual([{ path: 'u1.txt', action: 'delete' }]);
    await mcp.ok('undo', { tag: turn, path: 'u1.txt', token: p.token });
    await expect(read('u1.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await read('u2.txt')).toBe('u2\n');

    const rw = await mcp.ok('restore_preview', { operation: 'rewind', tag: turn });
    expect(rw.watermark).toEqual({ turn: Number(turn), messageCount: 10 });
    expect(rw.userMessage).toEqual({ turn: Number(turn), text: 'undo test' });
    const r = await mcp.ok('rewind', { tag: turn, token: rw.token });
    expect(r).toMatchObject({ watermark: { turn: Number(turn), messageCount: 10 }, forked: false, deleted: ['u2.txt'] });
    await expect(read('u2.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    // A rewind token is not a restore token.
    expect((await mcp.fails('rewind', { tag: turn, token: p.token })).code).toBe('TOKEN_INVALID');
    // A rewind into a fork says which session tools without `session` act on now (as the CLI does).
    const fp = await mcp.ok('restore_preview', { operation: 'rewind', tag: turn, fork: true });
    const fr = await mcp.call('rewind', { tag: turn, token: fp.token, fork: true });
    expect(fr.structuredContent).toMatchObject({ forked: true });
    const fork = (fr.structuredContent as { session: string }).session;
    expect(textOf(fr)).toContain(`continuing in fork ${fork}: it is now the default session, tools without a session act on it`);
    expect((await mcp.ok('session_show', {})).session.id).toBe(fork);
  });

  it('a rewind to a turn that recorded no message count says so in words (no "? messages"), preview and result', async () => {
    await mcp.ok('turn', { text: 'no count' });
    const turn = String((await mcp.ok('session_show', {})).turns);
    await writeFile(w('nc.txt'), 'nc\n');
    await mcp.ok('checkpoint', {});
    const preview = await mcp.call('restore_preview', { operation: 'rewind', tag: turn });
    expect(textOf(preview)).toContain(`conversation goes back to turn ${turn}\n`);
    expect(textOf(preview)).not.toContain('?');
    const token = (preview.structuredContent as { token: string }).token;
    const done = textOf(await mcp.call('rewind', { tag: turn, token }));
    expect(done).toContain(`conversation watermark: turn ${turn}; `);
    expect(done).not.toContain('? messages');
  });

  it('checkpoints a shell command by scanning, and forks and lists sessions', async () => {
    const first = await mcp.ok('checkpoint', {});
    expect(first.kind).toBe('scan');
    await writeFile(w('made-by-shell.txt'), 'generated\n');
    const scan = await mcp.ok('checkpoint', { tool: 'Bash' });
    expect(scan.tag).toMatch(/^\d+\.\d+$/);
    expect(scan.files).toContainEqual(expect.objectContaining({ path: 'made-by-shell.txt', change: 'created' }));

    const { session: parent } = await mcp.ok('session_show', {});
    const fork = await mcp.ok('session_fork', { at: '1', title: 'alt' });
    expect(fork.session).toMatchObject({ kind: 'fork', parent: parent.id, title: 'alt' });
    const tree = await mcp.ok('session_tree', {});
    // The parent is the default session: the fork the rewind test made, itself one level down.
    const depth = tree.nodes.find((n: { id: string }) => n.id === parent.id).depth;
    expect(tree.nodes).toContainEqual(expect.objectContaining({ id: fork.session.id, depth: depth + 1, parent: parent.id }));
    const list = await mcp.ok('session_list', {});
    expect(list.sessions.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([parent.id, fork.session.id]));
  });
});

describe('ckpt mcp: errors', () => {
  it('maps ckpt failures to tool errors naming the code, and changes nothing', async () => {
    const session = (await mcp.ok('session_list', {})).sessions.find((s: { kind: string }) => s.kind === 'root').id;
    const events = (await mcp.ok('session_show', { session })).lastSeq;
    expect((await mcp.fails('show', { session, tag: '999' })).code).toBe('TAG_NOT_FOUND');
    expect((await mcp.fails('restore_preview', { session, tag: '999' })).code).toBe('TAG_NOT_FOUND');
    const escape = await mcp.fails('read_file', { session, tag: '1', path: '../outside.txt' });
    expect(escape.code).toBe('PATH_ESCAPE');
    expect(escape.text).toMatch(/^PATH_ESCAPE: /);
    expect((await mcp.fails('read_file', { session, tag: '1', path: '/etc/passwd' })).code).toBe('PATH_ESCAPE');
    expect((await mcp.fails('checkpoint', { session, paths: ['ok.txt', '../../etc/passwd'] })).code).toBe('PATH_ESCAPE');
    expect((await mcp.fails('restore_preview', { session, tag: '1', paths: ['../x'] })).code).toBe('PATH_ESCAPE');
    expect((await mcp.fails('session_show', { session: 'no-such-session' })).code).toBe('SESSION_NOT_FOUND');
    expect((await mcp.fails('restore_preview', { session, operation: 'undo', tag: '1' })).code).toBe('INVALID_ARGUMENT');
    expect((await mcp.ok('session_show', { session })).lastSeq).toBe(events);
  });

  it('answers malformed arguments with schema errors and keeps serving', async () => {
    const bad: [string, Record<string, unknown>][] = [
      ['show', {}], // missing tag
      ['show', { tag: true }], // wrong type (a whole number is a turn: accepted)
      ['show', { tag: 2.5 }], // a fractional number is not a tag
      ['show', { tag: 'not-a-tag' }],
      ['show', { tag: '1'.repeat(200_000) }], // huge string
      ['read_file', { tag: '1', path: 'x'.repeat(100_000) }],
      ['checkpoint', { paths: 'a.txt' }],
      ['checkpoint', { paths: Array.from({ length: 20_000 }, () => 'a') }],
      ['restore', { tag: '1' }], // no token
      ['restore', { tag: '1', token: 'x', forse: true }], // unknown (misspelt) argument
      ['session_new', { id: '../escape' }],
      ['no_such_tool', {}],
    ];
    for (const [name, args] of bad) {
      const r = await mcp.call(name, args);
      expect(r.isError, `${name} ${JSON.stringify(args).slice(0, 80)}`).toBe(true);
      expect(textOf(r)).toMatch(/Invalid arguments|Tool no_such_tool not found/);
      expect(textOf(r).length).toBeLessThan(20_000);
    }
    expect((await mcp.ok('session_list', {})).sessions.length).toBeGreaterThan(0);
  });
});

describe('ckpt mcp: resources', () => {
  it('lists the templates and reads a session log and files at tags', async () => {
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['ckpt://sessions/{id}/log', 'ckpt://sessions/{id}/files/{tag}/{+path}']);
    const session = (await mcp.ok('session_list', {})).sessions.find((s: { kind: string }) => s.kind === 'root').id;
    const listed = await mcp.client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(`ckpt://sessions/${session}/log`);

    const log = await mcp.client.readResource({ uri: `ckpt://sessions/${session}/log` });
    const doc = JSON.parse((log.contents[0] as { text: string }).text);
    expect(doc.checkpoints[0]).toMatchObject({ tag: '1.1', files: [{ path: 'a.txt' }, { path: 'src/b.txt' }] });

    const a = await mcp.client.readResource({ uri: `ckpt://sessions/${session}/files/1/a.txt` });
    expect(a.contents[0]).toMatchObject({ mimeType: 'text/plain', text: 'one\ntwo\n' });
    const nested = await mcp.client.readResource({ uri: `ckpt://sessions/${session}/files/1.2/src/b.txt` });
    expect(nested.contents[0]).toMatchObject({ text: 'bee\n' });
  });

  it('refuses paths outside the workspace and unknown sessions', async () => {
    const session = (await mcp.ok('session_list', {})).sessions.find((s: { kind: string }) => s.kind === 'root').id;
    await expect(mcp.client.readResource({ uri: `ckpt://sessions/${session}/files/1/%2E%2E%2Foutside.txt` })).rejects.toThrow(/PATH_ESCAPE/);
    await expect(mcp.client.readResource({ uri: `ckpt://sessions/${session}/files/1/%2Fetc%2Fpasswd` })).rejects.toThrow(/PATH_ESCAPE/);
    await expect(mcp.client.readResource({ uri: `ckpt://sessions/${session}/files/999/a.txt` })).rejects.toThrow(/TAG_NOT_FOUND/);
    await expect(mcp.client.readResource({ uri: 'ckpt://sessions/nobody/log' })).rejects.toThrow(/SESSION_NOT_FOUND/);
  });
});

describe('ckpt mcp: workspace scoping', () => {
  it("never shows another workspace's sessions or content", async () => {
    const other = join(dirs.base, 'other-ws');
    await mkdir(other);
    await writeFile(join(other, 'a.txt'), 'secret of the other workspace\n');
    const second = await startMcp({ store: dirs.store, workspace: other });
    try {
      await second.ok('session_new', { id: 'other-session' });
      await second.ok('turn', {});
      await second.ok('checkpoint', { paths: ['a.txt'] });
      await writeFile(join(other, 'a.txt'), 'changed\n');
    } finally {
      await second.close();
    }
    const ids = (await mcp.ok('session_list', {})).sessions.map((s: { id: string }) => s.id);
    expect(ids).not.toContain('other-session');
    expect((await mcp.fails('session_show', { session: 'other-session' })).code).toBe('SESSION_NOT_FOUND');
    expect((await mcp.fails('read_file', { session: 'other-session', tag: '1', path: 'a.txt' })).code).toBe('SESSION_NOT_FOUND');
    expect((await mcp.fails('restore_preview', { session: 'other-session', tag: '1' })).code).toBe('SESSION_NOT_FOUND');
    await expect(mcp.client.readResource({ uri: 'ckpt://sessions/other-session/files/1/a.txt' })).rejects.toThrow(/SESSION_NOT_FOUND/);
    await expect(mcp.client.readResource({ uri: 'ckpt://sessions/other-session/log' })).rejects.toThrow(/SESSION_NOT_FOUND/);
    // The same relative path through this workspace's own session is this workspace's file.
    const mine = await mcp.ok('read_file', { tag: '1', path: 'a.txt', session: (await mcp.ok('session_list', {})).sessions.find((s: { kind: string }) => s.kind === 'root').id });
    expect(mine.content).not.toContain('secret');
    await rm(other, { recursive: true, force: true });
  });
});

describe('ckpt mcp beside the agent hooks', () => {
  // A model that follows the server's instructions in Claude Code with ckpt's hooks installed calls
  // `turn` on every prompt. In the hooks' session that was a second turn per prompt: turn N stopped
  // being the user's prompt N (a probe under the real Claude Code: `ckpt restore 3` gave the tree from
  // within prompt two, exit 0). Such a session gets its turns from the hooks only.
  it("Claude Code runs no ckpt hook for ckpt's own tools that change no file (a scan after a preview made its token stale)", async () => {
    const { tools } = await mcp.client.listTools();
    const matcher = installEntries(claude).find((e) => e.event === 'PostToolUse')!.matcher!;
    const runsHook = (name: string) => new RegExp(matcher).test(`mcp__ckpt__${name}`);
    for (const t of tools) {
      expect(runsHook(t.name), t.name).toBe(Boolean(t.annotations?.destructiveHint));
      expect(claude.passiveTools.includes(`mcp__ckpt__${t.name}`), t.name).toBe(!t.annotations?.destructiveHint);
    }
    // Another server's tools (or ckpt's under another name) are still recorded.
    expect(new RegExp(matcher).test('mcp__fs__write_file')).toBe(true);
  });

  it("refuses turn in a session ckpt's hooks record (nothing recorded); a session made over MCP still takes turns", async () => {
    const ws = join(dirs.base, 'hooked-ws');
    await mkdir(ws);
    await writeFile(join(ws, 'a.txt'), 'one\n');
    const prompt = async (text: string) => {
      const event = { session_id: 'conv-1', transcript_path: join(ws, 't.jsonl'), cwd: ws, hook_event_name: 'UserPromptSubmit', prompt: text };
      const r = await runCli(['--store', dirs.store, 'hook', 'claude'], { cwd: ws, input: JSON.stringify(event), env: { CKPT_NO_DAEMON: '1', CLAUDE_PROJECT_DIR: ws } });
      expect(r.code, r.stderr).toBe(0);
    };
    await prompt('first prompt');
    const hooked = await startMcp({ store: dirs.store, workspace: ws });
    try {
      const session = 'claude-conv-1';
      const before = await hooked.ok('session_show', { session });
      expect(before.turns).toBe(1);
      for (const args of [{}, { session }, { session, text: 'first prompt', messageCount: 1 }]) {
        const refused = await hooked.fails('turn', args);
        expect(refused.code).toBe('INVALID_ARGUMENT');
        expect(refused.text).toContain('hooks');
      }
      expect(await hooked.ok('session_show', { session })).toMatchObject({ turns: 1, lastSeq: before.lastSeq });
      await prompt('second prompt');
      const log = await runCli(['--store', dirs.store, '--session', session, 'log', '--json'], { cwd: ws });
      expect(log.json().turns.map((t: { turn: number; text: string }) => [t.turn, t.text])).toEqual([
        [1, 'first prompt'],
        [2, 'second prompt'],
      ]);
      // A session the model starts itself (even one naming an agent) is not the hooks': turn works there.
      const own = (await hooked.ok('session_new', { info: { agent: 'claude', externalId: 'conv-1' } })).session.id;
      expect(own).not.toBe(session);
      expect(await hooked.ok('turn', { session: own })).toMatchObject({ turn: 1 });
    } finally {
      await hooked.close();
    }
  });
});

describe('ckpt mcp: protocol faults', () => {
  it('answers garbage lines and protocol faults with JSON-RPC errors (logged on stderr too), and keeps serving', async () => {
    const { spawn } = await import('node:child_process');
    const { CKPT_BIN } = await import('./helpers/cli.js');
    const child = spawn(process.execPath, [CKPT_BIN, 'mcp', '--store', dirs.store, '--workspace', dirs.workspace], { stdio: ['pipe', 'pipe', 'pipe'] });
    const replies: Record<string, unknown>[] = [];
    let buffer = '';
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        replies.push(JSON.parse(line) as Record<string, unknown>); // stdout carries JSON-RPC only
      }
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const send = (msg: unknown) => child.stdin.write(`${typeof msg === 'string' ? msg : JSON.stringify(msg)}\n`);
    const reply = async (id: number) => {
      for (let i = 0; i < 200; i++) {
        const r = replies.find((x) => x.id === id);
        if (r) return r as { result?: { tools?: unknown[]; isError?: boolean }; error?: { code: number } };
        await new Promise((res) => setTimeout(res, 25));
      }
      throw new Error(`no reply to ${id}`);
    };
    try {
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      await reply(1);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send('this is not json');
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: 'not an object' });
      send({ jsonrpc: '2.0', id: 3, method: 'no/such/method' });
      send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'show', arguments: { tag: 'x'.repeat(1_000_000) } } });
      send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
      // Params the SDK's schema refuses: "Invalid params" naming the field (the SDK says "Internal error" with its validator's dump).
      send({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'log', arguments: null } });
      send({ jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: 5 } });
      expect(await reply(6)).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/^invalid params: params\.arguments: .*null/), data: { fields: [{ path: 'params.arguments' }] } } });
      expect(await reply(7)).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/^invalid params: params\.uri: /) } });
      expect((await reply(3)).error?.code).toBe(-32601);
      expect((await reply(4)).result?.isError).toBe(true);
      expect((await reply(5)).result?.tools?.length).toBeGreaterThan(10);
      // A line that is not JSON is answered "Parse error" (id null), a request that is not valid JSON-RPC
      // "Invalid Request" with its id; both are noted on stderr too.
      expect((await reply(2)).error?.code).toBe(-32600);
      expect(replies.find((r) => r.id === null)).toMatchObject({ error: { code: -32700 } });
      expect(stderr).toMatch(/ckpt mcp: .*(JSON|Unexpected token)/);
      expect(child.exitCode).toBeNull();
    } finally {
      child.stdin.end();
      await new Promise((res) => child.once('close', res));
    }
    expect(child.exitCode).toBe(0);
  });
});

describe('ckpt mcp: conflicts between sessions', () => {
  it('names a path another session wrote since this one recorded it', async () => {
    await mcp.ok('session_new', { id: 'conflict-a' });
    await mcp.ok('session_new', { id: 'conflict-b' });
    await mcp.ok('checkpoint', { session: 'conflict-a', paths: ['shared.txt'] });
    await writeFile(w('shared.txt'), 'a wrote\n');
    await mcp.ok('settle', { session: 'conflict-a', paths: ['shared.txt'] });
    await mcp.ok('checkpoint', { session: 'conflict-b', paths: ['shared.txt'] });
    await writeFile(w('shared.txt'), 'b wrote\n');
    await mcp.ok('settle', { session: 'conflict-b', paths: ['shared.txt'] });
    const r = await mcp.call('checkpoint', { session: 'conflict-a', paths: ['shared.txt'] });
    expect(r.structuredContent).toMatchObject({ conflicts: [{ path: 'shared.txt', otherSession: 'conflict-b' }] });
    expect(textOf(r)).toContain('CONFLICT');
  });
});

describe('ckpt mcp: diff and log carry what the CLI gives', () => {
  it("keeps a change's mode, type and link, and a logged file's change and target", async () => {
    const ws = join(dirs.base, 'kinds-ws');
    await mkdir(ws);
    await writeFile(join(ws, 'script.sh'), 'v0\n');
    await chmod(join(ws, 'script.sh'), 0o644);
    await writeFile(join(ws, 'target'), 'data\n');
    await writeFile(join(ws, 'becomes-link'), 'old\n');
    const m = await startMcp({ store: dirs.store, workspace: ws });
    try {
      await m.ok('session_new', { id: 'kinds' });
      await m.ok('turn', {});
      await m.ok('checkpoint', {});
      await m.ok('turn', {});
      await chmod(join(ws, 'script.sh'), 0o755);
      await rm(join(ws, 'becomes-link'));
      await symlink('target', join(ws, 'becomes-link'));
      await writeFile(join(ws, 'created.txt'), 'n\n');
      await m.ok('checkpoint', {});
      const { changes } = await m.ok('diff', { from: '1' });
      expect(changes).toContainEqual(expect.objectContaining({ path: 'script.sh', status: 'M', mode: { from: '644', to: '755' } }));
      expect(changes).toContainEqual(expect.objectContaining({ path: 'becomes-link', type: { from: 'file', to: 'symlink' }, link: { to: 'target' } }));
      expect(textOf(await m.call('diff', { from: '1' }))).toContain('mode 644 -> 755');
      const { checkpoints } = await m.ok('log', {});
      const files = checkpoints.at(-1).files;
      expect(files).toContainEqual(expect.objectContaining({ path: 'created.txt', change: 'created' }));
      expect(files).toContainEqual(expect.objectContaining({ path: 'becomes-link', target: 'target' }));
    } finally {
      await m.close();
    }
  });
});

describe('ckpt mcp --config', () => {
  it('prints a client configuration that starts a working server', async () => {
    const { runCli } = await import('./helpers/cli.js');
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const printed = await runCli(['--workspace', dirs.workspace, '--store', dirs.store, 'mcp', '--config'], { cwd: dirs.base });
    expect(printed.code).toBe(0);
    const entry = printed.json().mcpServers.ckpt as { command: string; args: string[] };
    expect(entry.args).toEqual(expect.arrayContaining(['mcp', '--workspace', dirs.workspace]));
    const client = new Client({ name: 'config-test', version: '1' });
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, cwd: dirs.base, stderr: 'ignore' }));
    try {
      const r = await client.callTool({ name: 'session_list', arguments: {} });
      expect((r.structuredContent as { workspace: string }).workspace).toBe(dirs.workspace);
    } finally {
      await client.close();
    }
  });

  it('writes in a store that came from $CKPT_STORE (a desktop client has none of the shell\'s variables)', async () => {
    const { runCli } = await import('./helpers/cli.js');
    const fromEnv = await runCli(['mcp', '--config'], { cwd: dirs.workspace, env: { CKPT_STORE: dirs.store } });
    expect(fromEnv.json().mcpServers.ckpt.args).toEqual(expect.arrayContaining(['--store', dirs.store]));
    const none = await runCli(['mcp', '--config'], { cwd: dirs.workspace, env: { CKPT_STORE: '', CKPT_HOME: '' } });
    expect(none.json().mcpServers.ckpt.args).not.toContain('--store');
  });
});

describe('ckpt mcp: the user confirms through the client (elicitation)', () => {
  it('asks the user with the plan before a destructive call; a decline changes nothing', async () => {
    const local = await makeTempDirs('ckpt-mcp-elicit-');
    const asked: string[] = [];
    let answer: 'accept' | 'decline' = 'decline';
    const m = await startMcp({
      store: local.store,
      workspace: local.workspace,
      elicit: (params) => {
        asked.push(params.message);
        return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
      },
    });
    try {
      await writeFile(join(local.workspace, 'f.txt'), 'before\n');
      await m.ok('session_new', {});
      await m.ok('turn', {});
      await m.ok('checkpoint', { paths: ['f.txt'] });
      await writeFile(join(local.workspace, 'f.txt'), 'after\n');
      await m.ok('settle', { paths: ['f.txt'] });
      const preview = await m.ok('restore_preview', { tag: '1' });
      expect(asked).toEqual([]); // previewing asks nobody

      const declined = await m.fails('restore', { tag: '1', token: preview.token });
      expect(declined).toMatchObject({ code: 'INVALID_ARGUMENT', data: { cancelled: true, action: 'decline' } });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('write  f.txt');
      expect(await readFile(join(local.workspace, 'f.txt'), 'utf8')).toBe('after\n');

      answer = 'accept';
      const done = await m.ok('restore', { tag: '1', token: preview.token });
      expect(done.restored).toEqual(['f.txt']);
      expect(asked).toHaveLength(2);
      expect(await readFile(join(local.workspace, 'f.txt'), 'utf8')).toBe('before\n');

      // A stale token is refused before the user is bothered.
      expect((await m.fails('restore', { tag: '1', token: preview.token })).code).toBe('TOKEN_STALE');
      expect(asked).toHaveLength(2);
    } finally {
      await m.close();
      await local.cleanup();
    }
  });
});

describe('ckpt mcp: what a person approves (an MCP probe)', () => {
  it('a rewind that changes no file but hides conversation entries, or forks, still asks; a malformed answer is a refusal, not a bug', async () => {
    const local = await makeTempDirs('ckpt-mcp-person-');
    const asked: string[] = [];
    let answer: Record<string, unknown> = { action: 'decline' };
    const m = await startMcp({
      store: local.store,
      workspace: local.workspace,
      args: ['--require-person'],
      elicit: (params) => {
        asked.push(params.message);
        return answer as never;
      },
    });
    try {
      await writeFile(join(local.workspace, 'f.txt'), 'v0\n');
      // A session Cursor's hooks record (its id derived from Cursor's own), driven as the hooks do.
      const cli = async (args: string[]) => expect((await runCli(['--store', local.store, '--session', 'cursor-conv-1', ...args], { cwd: local.workspace, env: { CKPT_NO_DAEMON: '1' } })).code).toBe(0);
      await m.ok('session_new', { id: 'cursor-conv-1', info: { agent: 'cursor', externalId: 'conv-1' } });
      await cli(['turn', '--text', 'first', '--message-count', '1']);
      await cli(['conversation', 'append', '{"type":"message","id":"m1","text":"hi"}', '{"type":"message","id":"m2","text":"answer"}']);
      await cli(['turn', '--text', 'second', '--message-count', '3']);
      await cli(['conversation', 'append', '{"type":"message","id":"m3","text":"more"}']);
      const events = async () => (await m.ok('session_show', { session: 'cursor-conv-1' })).session.eventCount as number;
      const before = await events();
      const preview = await m.ok('restore_preview', { operation: 'rewind', tag: '1' });
      expect(preview.plan).toEqual([]);
      const declined = await m.fails('rewind', { tag: '1', token: preview.token });
      expect(declined).toMatchObject({ code: 'INVALID_ARGUMENT', data: { cancelled: true, action: 'decline' } });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('change no file');
      expect(asked[0]).toMatch(/hide \d+ conversation entries/);
      expect(await events()).toBe(before); // nothing recorded

      answer = { action: 'accept', content: { confirm: 'true' } };
      const malformed = await m.fails('rewind', { tag: '1', token: preview.token });
      expect(malformed).toMatchObject({ code: 'INVALID_ARGUMENT', data: { cancelled: true } });

      // A fork is asked for too, and the answer says where the agent's next prompt goes.
      answer = { action: 'accept', content: { confirm: true } };
      const forkPreview = await m.ok('restore_preview', { operation: 'rewind', tag: '2', fork: true });
      const forked = await m.call('rewind', { tag: '2', token: forkPreview.token, fork: true });
      expect(asked.at(-1)).toContain('make a new fork of the session');
      const fork = (forked.structuredContent as { session: string }).session;
      expect(textOf(forked)).toContain(`continuing in fork ${fork}: it is the default session until cursor's next prompt`);
    } finally {
      await m.close();
      await local.cleanup();
    }
  });
});

describe('ckpt mcp: clients that type arguments from a command line (issue 29)', () => {
  it('accepts a turn given as a number; refuses a fractional one with the reason', async () => {
    const local = await makeTempDirs('ckpt-mcp-numtag-');
    const m = await startMcp({ store: local.store, workspace: local.workspace });
    try {
      await writeFile(join(local.workspace, 'n.txt'), 'one\n');
      await m.ok('session_new', {});
      await m.ok('turn', {});
      await m.ok('checkpoint', { paths: ['n.txt'] });
      await writeFile(join(local.workspace, 'n.txt'), 'two\n');
      await m.ok('settle', { paths: ['n.txt'] });
      expect((await m.ok('diff', { from: 1 })).changes).toEqual([{ path: 'n.txt', status: 'M', added: 1, removed: 1 }]);
      expect(await m.ok('show', { tag: 1 })).toMatchObject({ tag: '1' });
      const preview = await m.ok('restore_preview', { tag: 1 });
      expect(preview).toMatchObject({ to: '1', plan: [{ path: 'n.txt', action: 'write' }] });
      // The token was issued for tag '1': the number 1 and the string '1' are the same request.
      await m.ok('restore', { tag: 1, token: preview.token });
      expect(await readFile(join(local.workspace, 'n.txt'), 'utf8')).toBe('one\n');
      const fractional = await m.call('show', { tag: 1.1 });
      expect(fractional.isError).toBe(true);
      expect(textOf(fractional)).toContain("pass 'N.K' tags as strings");
    } finally {
      await m.close();
      await local.cleanup();
    }
  });

  it('publishes no nullable field as a `type` array (portable to single-type schema dialects)', async () => {
    const { tools } = await mcp.client.listTools();
    const arrays: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}[${i}]`));
      if (!node || typeof node !== 'object') return;
      for (const [k, v] of Object.entries(node)) {
        if (k === 'type' && Array.isArray(v)) arrays.push(`${path}.type`);
        walk(v, `${path}.${k}`);
      }
    };
    for (const t of tools) {
      walk(t.inputSchema, `${t.name}.inputSchema`);
      walk(t.outputSchema, `${t.name}.outputSchema`);
    }
    expect(arrays).toEqual([]);
  });

  it("confirms in a new server process with the preview's token (the key is the store's, mode 0600)", async () => {
    const local = await makeTempDirs('ckpt-mcp-key-');
    const other = await makeTempDirs('ckpt-mcp-key-other-');
    const first = await startMcp({ store: local.store, workspace: local.workspace });
    let preview: { token: string; session: string };
    try {
      await writeFile(join(local.workspace, 'k.txt'), 'kept\n');
      await first.ok('session_new', {});
      await first.ok('turn', {});
      await first.ok('checkpoint', { paths: ['k.txt'] });
      await writeFile(join(local.workspace, 'k.txt'), 'changed\n');
      await first.ok('settle', { paths: ['k.txt'] });
      preview = await first.ok('restore_preview', { tag: '1' });
    } finally {
      await first.close();
    }
    const { stat } = await import('node:fs/promises');
    expect((await stat(join(local.store, 'mcp', 'confirm-key'))).mode & 0o777).toBe(0o600);
    // A server of another store (same workspace folder) does not accept it.
    const foreign = await startMcp({ store: other.store, workspace: local.workspace });
    try {
      await foreign.ok('session_new', { id: preview.session });
      expect((await foreign.fails('restore', { tag: '1', token: preview.token })).code).toBe('TOKEN_INVALID');
    } finally {
      await foreign.close();
    }
    const second = await startMcp({ store: local.store, workspace: local.workspace });
    try {
      expect(await second.ok('restore', { tag: '1', token: preview.token })).toMatchObject({ restored: ['k.txt'] });
      expect(await readFile(join(local.workspace, 'k.txt'), 'utf8')).toBe('kept\n');
      // Spent: the restore moved the session.
      expect((await second.fails('restore', { tag: '1', token: preview.token })).code).toBe('TOKEN_STALE');
    } finally {
      await second.close();
      await local.cleanup();
      await other.cleanup();
    }
  });
});

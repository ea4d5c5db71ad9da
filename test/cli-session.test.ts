// End-to-end: the `ckpt session` commands through the real CLI binary (DESIGN §9 shapes, §7 exit codes).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[], env?: NodeJS.ProcessEnv) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace, env });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-');
});
afterEach(() => dirs.cleanup());

describe('ckpt session', () => {
  it('new / list / show / fork / rm with the JSON shapes of DESIGN §9', async () => {
    const created = await ckpt(['session', 'new', '--title', 'first', '--json']);
    expect(created.code).toBe(0);
    const s = created.json().session;
    expect(s).toMatchObject({ title: 'first', kind: 'root', eventCount: 1 });
    expect(typeof s.id).toBe('string');
    expect(typeof s.createdAt).toBe('string');

    const other = (await ckpt(['session', 'new', '--id', 'second', '--json'])).json().session;
    expect(other.id).toBe('second');

    const list = (await ckpt(['session', 'list', '--json'])).json();
    expect(list.sessions.map((x: { id: string }) => x.id)).toEqual(['second', s.id]);

    const shown = (await ckpt(['session', 'show', s.id, '--json'])).json();
    expect(shown).toMatchObject({ session: { id: s.id }, turns: 0, captures: 0 });
    // Without an id, show uses the most recently updated session.
    expect((await ckpt(['session', 'show', '--json'])).json().session.id).toBe('second');
    expect((await ckpt(['--session', s.id, 'session', 'show', '--json'])).json().session.id).toBe(s.id);

    const fork = (await ckpt(['session', 'fork', s.id, '--at', '@1', '--title', 'branch', '--json'])).json();
    expect(fork.session).toMatchObject({ parent: s.id, kind: 'fork', title: 'branch', forkedFrom: { session: s.id, seq: 1 } });

    // The other sessions see every session's records, a removed one's too: removing it warns of nothing.
    await writeFile(join(dirs.workspace, 'a.txt'), 'a\n');
    expect((await ckpt(['--session', 'second', 'capture', 'a.txt'])).code).toBe(0);
    const removed = await ckpt(['session', 'rm', 'second', '--json']);
    expect(removed.json()).toEqual({ removed: 'second' });
    expect((await ckpt(['session', 'list', '--json'])).json().sessions).toHaveLength(2);
  });

  it('exits 2 for an invalid id and 3 for an unknown session, with a JSON error on stderr', async () => {
    const bad = await ckpt(['session', 'new', '--id', 'bad/id', '--json']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(JSON.parse(bad.stderr).error).toMatchObject({ code: 'INVALID_ARGUMENT', data: { id: 'bad/id' } });

    const missing = await ckpt(['session', 'show', 'no-such', '--json']);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stderr).error.code).toBe('SESSION_NOT_FOUND');

    const human = await ckpt(['session', 'rm', 'no-such']);
    expect(human.code).toBe(3);
    expect(human.stderr).toContain('no-such');

    const badTag = await ckpt(['session', 'fork', '--at', 'x.y', '--json']);
    expect(badTag.code).toBe(2); // no session yet: the tag's syntax is checked first
    expect(JSON.parse(badTag.stderr).error.code).toBe('INVALID_ARGUMENT');
    await ckpt(['session', 'new']);
    const badTag2 = await ckpt(['session', 'fork', '--at', 'x.y', '--json']);
    expect(badTag2.code).toBe(2);
    expect(JSON.parse(badTag2.stderr).error.code).toBe('INVALID_ARGUMENT');

    const unknownFlag = await ckpt(['session', 'list', '--bogus']);
    expect(unknownFlag.code).toBe(2);
  });

  it('prints human summaries and help', async () => {
    const created = await ckpt(['session', 'new', '--title', 'hello']);
    expect(created.stdout).toMatch(/created session .* "hello"/);
    const help = await ckpt(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('session');
    const sub = await ckpt(['session', 'fork', '--help']);
    expect(sub.stdout).toContain('--at <tag>');
  });

  it('uses $CKPT_HOME as the default store', async () => {
    const r = await runCli(['session', 'new', '--json'], { cwd: dirs.workspace, env: { CKPT_HOME: dirs.store } });
    expect(r.code).toBe(0);
    const list = await runCli(['session', 'list', '--json'], { cwd: dirs.workspace, env: { CKPT_HOME: dirs.store } });
    expect(list.json().sessions).toHaveLength(1);
  });

  it('16 `ckpt session new` processes started at once create 16 distinct listed sessions', async () => {
    const runs = await Promise.all(Array.from({ length: 16 }, (_, i) => ckpt(['session', 'new', '--title', `p${i}`, '--json'])));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const ids = new Set(runs.map((r) => r.json().session.id));
    expect(ids.size).toBe(16);
    const listed = (await ckpt(['session', 'list', '--json'])).json().sessions.map((s: { id: string }) => s.id);
    expect(new Set(listed)).toEqual(ids);
  });

  it('session info flags, list filters, children, tree and title', async () => {
    const root = (await ckpt(['session', 'new', '--id', 'root1', '--agent', 'claude', '--external-id', 'c-1', '--model', 'opus', '--json'])).json().session;
    expect(root).toMatchObject({ agent: 'claude', externalId: 'c-1', model: 'opus', depth: 0 });
    const child = await ckpt(['session', 'new', '--id', 'kid', '--parent', 'root1', '--agent', 'claude', '--spawned-from', 'toolu_9', '--json']);
    expect(child.json().session).toMatchObject({ kind: 'child', parent: 'root1', depth: 1, spawnedFrom: 'toolu_9' });
    await ckpt(['session', 'new', '--id', 'other', '--agent', 'gemini', '--json']);

    const ids = async (args: string[]) => (await ckpt(['session', 'list', ...args, '--json'])).json().sessions.map((m: { id: string }) => m.id).sort();
    expect(await ids(['--agent', 'claude'])).toEqual(['kid', 'root1']);
    expect(await ids(['--external-id', 'c-1'])).toEqual(['root1']);
    expect(await ids(['--kind', 'child'])).toEqual(['kid']);
    expect((await ckpt(['session', 'list', '--kind', 'bogus', '--json'])).code).toBe(2);
    expect((await ckpt(['session', 'children', 'root1', '--json'])).json().sessions.map((m: { id: string }) => m.id)).toEqual(['kid']);

    const tree = (await ckpt(['session', 'tree', '--json'])).json().tree;
    const rootNode = tree.find((n: { session: { id: string } }) => n.session.id === 'root1');
    expect(rootNode.children.map((n: { session: { id: string } }) => n.session.id)).toEqual(['kid']);
    expect((await ckpt(['session', 'tree'])).stdout).toMatch(/root1[^\n]*\n\s+kid/);

    expect((await ckpt(['session', 'title', 'root1', 'renamed', '--json'])).json().session.title).toBe('renamed');
    expect((await ckpt(['session', 'title', 'root1', ' ', '--json'])).code).toBe(2);
  });
});

// End-to-end: `ckpt conflicts`, `ckpt owner`, `ckpt workspace list|rm` through the real CLI binary.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[], cwd = dirs.workspace) => runCli(['--store', dirs.store, ...args], { cwd });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-inspect-');
});
afterEach(() => dirs.cleanup());

describe('conflicts and owners', () => {
  it('a capture names the conflict it found; conflicts and owner report it', async () => {
    const file = join(dirs.workspace, 'shared.txt');
    await writeFile(file, 'v0');
    await ckpt(['session', 'new', '--id', 'alice']);
    await ckpt(['session', 'new', '--id', 'bob']);
    // alice edits and settles, then bob edits behind alice's back
    await ckpt(['--session', 'alice', 'capture', 'shared.txt']);
    await writeFile(file, 'alice');
    await ckpt(['--session', 'alice', 'settle', 'shared.txt']);
    await ckpt(['--session', 'bob', 'capture', 'shared.txt']);
    await writeFile(file, 'bob');
    await ckpt(['--session', 'bob', 'settle', 'shared.txt']);

    const owner = await ckpt(['owner', 'shared.txt', '--json']);
    expect(owner.json()).toMatchObject({ path: 'shared.txt', owner: { session: 'bob' } });
    expect((await ckpt(['owner', 'nothing.txt', '--json'])).json()).toEqual({ path: 'nothing.txt', owner: null });
    expect((await ckpt(['owner', '../outside', '--json'])).code).toBe(2);

    const cap = await ckpt(['--session', 'alice', 'capture', 'shared.txt', '--json']);
    expect(cap.json().conflicts).toEqual([{ path: 'shared.txt', otherSession: 'bob' }]);

    const all = (await ckpt(['conflicts', '--json'])).json().conflicts;
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ session: 'alice', path: 'shared.txt', otherSession: 'bob' });
    expect((await ckpt(['--session', 'bob', 'conflicts', '--json'])).json().conflicts).toEqual([]);
    expect((await ckpt(['conflicts'])).stdout).toContain('session alice found a write by bob');
  });
});

describe('ckpt workspace', () => {
  it('lists workspaces and removes one only with --yes, by folder or id, even after its folder is gone', async () => {
    const other = join(dirs.base, 'other');
    await mkdir(other);
    await ckpt(['session', 'new', '--json']);
    await ckpt(['session', 'new', '--json'], other);
    const list = (await ckpt(['workspace', 'list', '--json'])).json().workspaces;
    expect(list).toHaveLength(2);

    const refused = await ckpt(['workspace', 'rm', '--json']);
    expect(refused.code).toBe(2);
    expect((await ckpt(['session', 'list', '--json'])).json().sessions).toHaveLength(1);

    const removed = await ckpt(['workspace', 'rm', '--yes', '--json']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json().removed).toMatchObject({ sessions: 1 });
    expect((await ckpt(['workspace', 'list', '--json'])).json().workspaces).toHaveLength(1);

    const otherId = list.find((w: { root: string }) => w.root.endsWith('/other')).id;
    const byId = await ckpt(['workspace', 'rm', otherId, '--yes', '--json']);
    expect(byId.json().removed.id).toBe(otherId);
    expect(await readdir(join(dirs.store, 'workspaces'))).toEqual([]);
    expect((await ckpt(['workspace', 'rm', otherId, '--yes', '--json'])).code).toBe(3);
  });
});

describe('ckpt show, cat and log --all', () => {
  it('show names a tag, cat prints a file at a tag (scoped, exit 3 when absent), log --all merges sessions', async () => {
    const file = join(dirs.workspace, 'a.txt');
    await writeFile(file, 'v0\n');
    await ckpt(['session', 'new', '--id', 'one']);
    await ckpt(['--session', 'one', 'turn', '--text', 'change a']);
    await ckpt(['--session', 'one', 'capture', 'a.txt']);
    await writeFile(file, 'v1\n');
    await ckpt(['--session', 'one', 'settle', 'a.txt']);
    await ckpt(['session', 'new', '--id', 'two']);
    await ckpt(['--session', 'two', 'capture', 'b.txt']);

    const shown = (await ckpt(['--session', 'one', 'show', '1', '--json'])).json();
    expect(shown).toMatchObject({ tag: '1', turn: { turn: 1, text: 'change a' }, next: { tag: '1.1', files: [{ path: 'a.txt', state: 'file' }] }, pathsAfter: 1 });
    expect((await ckpt(['--session', 'one', 'show', '9', '--json'])).code).toBe(3);

    const cat = await ckpt(['--session', 'one', 'cat', '1', 'a.txt']);
    expect(cat.code, cat.stderr).toBe(0);
    expect(cat.stdout).toBe('v0\n');
    expect((await ckpt(['--session', 'one', 'cat', '1.1', 'a.txt', '--json'])).json()).toMatchObject({ path: 'a.txt', state: 'file', encoding: 'base64', content: Buffer.from('v0\n').toString('base64') });
    const absent = await ckpt(['--session', 'two', 'cat', '0', 'b.txt']);
    expect(absent.code).toBe(3); // absent at the tag
    expect(absent.stderr).toContain('b.txt did not exist at 0'); // in words, not "b.txt at 0: absent"
    expect((await ckpt(['--session', 'one', 'cat', '1', '../outside'])).code).toBe(2);

    const all = (await ckpt(['log', '--all', '--json'])).json().checkpoints;
    expect(all.map((c: { session: string; tag: string }) => `${c.session}:${c.tag}`)).toEqual(['one:1.1', 'two:0.1']);
  });
});

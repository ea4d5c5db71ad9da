import { appendFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TempDirs } from '../../test/helpers/temp.js';
import { useAgentWorld } from '../../test/helpers/lib-session.js';
import { openStore, type Store } from '../store.js';
import type { Session } from '../api/session.js';

let dirs: TempDirs;
let store: Store;
let session: Session;
const { w, agentWrite, versions } = useAgentWorld('ckpt-file-at-', (world) => ({ dirs, session, store } = world));

describe('session.readFile', () => {
  it('returns the before-image of the earliest capture after the tag', async () => {
    await versions('a.txt', 'v1\n', 'v2\n', 'v3\n');
    const at1 = await session.readFile('1', 'a.txt');
    expect(at1).toMatchObject({ path: 'a.txt', state: 'file', source: 'capture', from: '1.1', bytes: 3 });
    expect(at1.content?.toString()).toBe('v1\n');
    expect((await session.readFile('2', 'a.txt')).content?.toString()).toBe('v2\n');
    // Nothing captured it after the last point: the present file.
    const now = await session.readFile(`@${(await session.events()).at(-1)!.seq}`, 'a.txt');
    expect(now).toMatchObject({ source: 'workspace', state: 'file' });
    expect(now.content?.toString()).toBe('v3\n');
  });

  it('reports absent and symlink images without content', async () => {
    await session.turn();
    await agentWrite('new.txt', 'hello');
    expect(await session.readFile('1', 'new.txt')).toMatchObject({ state: 'absent', source: 'capture' });
    await symlink('new.txt', w('link'));
    // Made after prompt 1 and not scanned yet: absent at 1, as `restore 1` (which looks) deletes it.
    expect(await session.readFile('1', 'link')).toMatchObject({ state: 'absent', source: 'recorded', drift: true });
    await session.turn(); // 2: its scan records the link
    const link = await session.readFile('2', 'link');
    expect(link).toMatchObject({ state: 'symlink', target: 'new.txt', source: 'workspace' });
    expect(link.content).toBeUndefined();
  });

  it('prefers ckpt\'s last record over a present file that drifted from it', async () => {
    await session.turn();
    await agentWrite('a.txt', 'agent wrote\n');
    await session.turn();
    await writeFile(w('a.txt'), 'someone else\n');
    const at2 = await session.readFile('2', 'a.txt');
    expect(at2).toMatchObject({ source: 'recorded', drift: true });
    expect(at2.content?.toString()).toBe('agent wrote\n');
  });

  it('refuses paths outside the workspace, and accepts absolute paths inside it', async () => {
    await session.turn();
    await agentWrite('a.txt', 'x');
    await expect(session.readFile('1', '../outside.txt')).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    await expect(session.readFile('1', '/etc/passwd')).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    await mkdir(join(dirs.base, 'elsewhere'));
    await writeFile(join(dirs.base, 'elsewhere', 'secret'), 'secret');
    await symlink(join(dirs.base, 'elsewhere'), w('escape'));
    await expect(session.readFile('1', 'escape/secret')).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    expect((await session.readFile('1', w('a.txt'))).path).toBe('a.txt');
  });

  it('never reads a blob another workspace recorded, even for the same relative path', async () => {
    const other = join(dirs.base, 'other');
    await mkdir(other);
    await writeFile(join(other, 'a.txt'), 'other workspace secret\n');
    const otherSession = await (await store.openWorkspace(other)).create();
    await otherSession.turn();
    await otherSession.capture(['a.txt']);
    await session.turn();
    const mine = await session.readFile('1', 'a.txt');
    expect(mine).toMatchObject({ state: 'absent', source: 'workspace' });
    expect(mine.content).toBeUndefined();
  });

  it('fails closed on a log whose blob id is not an id', async () => {
    await writeFile(w('a.txt'), 'x');
    await session.turn();
    // Written behind the library's back (appends validate events): a log is untrusted input.
    const seq = (await session.events()).at(-1)!.seq + 1;
    const bad = { v: 1, seq, type: 'capture', at: new Date().toISOString(), tag: '1.1', turn: 1, k: 1, tool: 'Write', files: [{ path: 'a.txt', state: 'file', blob: '../../etc/passwd', mode: 0o644 }] };
    await appendFile(join(store.dir, session.key, 'events.jsonl'), `${JSON.stringify(bad)}\n`);
    const read = async () => (await (await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace)).get(session.id)).readFile('1', 'a.txt');
    await expect(read()).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
  });
});

// `verify` on real stores: healthy, a tampered blob (loose and packed), a missing blob, a corrupt
// log, metadata that disagrees with its log, an interrupted restore — and a restore from a corrupt
// blob failing closed end to end (BLOB_CORRUPT, exit 5, nothing changed).
import { appendFile, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type Workspace } from '../src/store.js';
import { exitCodeOf } from '../src/errors.js';
import { restore } from '../src/restore/index.js';
import { createEventLog } from '../src/storage/event-log.js';
import { verify } from '../src/gc/verify.js';
import type { Session } from '../src/api/session.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { edit, runCliInProcess } from './fixtures/gc-helpers.js';

let dirs: TempDirs;
let store: Store;
let ws: Workspace;
let s: Session;
const sha = (x: string) => createHash('sha256').update(x).digest('hex');
const loosePath = (id: string) => join(dirs.store, 'blobs', id.slice(0, 2), id.slice(2));
const sessionDir = (id: string) => join(dirs.store, 'workspaces', ws.id, 'sessions', id);

async function flipLastByte(path: string): Promise<void> {
  const buf = await readFile(path);
  buf[buf.length - 1] = buf[buf.length - 1]! ^ 0xff;
  await writeFile(path, buf);
}

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-verify-');
  store = await openStore({ dir: dirs.store, retention: false });
  ws = await store.openWorkspace(dirs.workspace);
  s = await ws.create({ id: 's' });
  // No look at the turn: the Edit's capture of the file made since is its first record (with a look it
  // would be the user's new file first, DESIGN "Hand edits during a turn").
  await s.turn({ scan: false });
  await edit(s, dirs.workspace, 'a.txt', 'version zero', 'version one');
});
afterEach(() => dirs.cleanup());

describe('verify', () => {
  it('reports ok on a healthy store', async () => {
    const r = await verify(store.ctx);
    expect(r).toMatchObject({ ok: true, problems: [] });
    expect(r.checked).toMatchObject({ blobs: 2, workspaces: 1, sessions: 1 });
    expect(r.checked.events).toBe((await s.events()).length);
    const cli = await runCliInProcess(['--store', dirs.store, 'verify', '--json'], { cwd: dirs.workspace });
    expect(cli.code).toBe(0);
    expect(cli.json()).toMatchObject({ ok: true, problems: [] });
  });

  it('finds a tampered loose blob and a tampered packed blob (exit 5)', async () => {
    await flipLastByte(loosePath(sha('version zero')));
    const writer = store.ctx.blobs.createPackWriter({ threads: 0 });
    await writer.add(Buffer.from('packed content that will be damaged'));
    const { pack } = await writer.commit();
    await flipLastByte(join(dirs.store, 'packs', `${pack}.pack`));
    const r = await verify(store.ctx);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'blob_corrupt', blob: sha('version zero'), where: 'loose' }),
        expect.objectContaining({ kind: 'blob_corrupt', blob: sha('packed content that will be damaged'), where: 'pack', pack }),
      ]),
    );
    const cli = await runCliInProcess(['--store', dirs.store, 'verify', '--json'], { cwd: dirs.workspace });
    expect(cli.code).toBe(5);
    expect(cli.json().ok).toBe(false);
    expect(JSON.parse(cli.stderr).error.code).toBe('BLOB_CORRUPT');
  });

  it('finds a missing referenced blob, naming the session and event', async () => {
    const { rm } = await import('node:fs/promises');
    await rm(loosePath(sha('version zero')));
    const capture = (await s.events()).find((e) => e.type === 'capture')!;
    // The capture carries that content inline (format/inline-blobs.ts): its copy stands in for the blob…
    expect(capture.inline).toHaveProperty(sha('version zero'));
    expect(await verify(store.ctx)).toMatchObject({ ok: true, problems: [] });
    // …and without it (a log written before inline content), the blob is missing.
    const log = join(sessionDir('s'), 'events.jsonl');
    const lines = (await readFile(log, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    for (const e of lines) delete e.inline;
    await writeFile(log, `${lines.map((e) => JSON.stringify(e)).join('\n')}\n`);
    const r = await verify(store.ctx);
    expect(r.problems).toEqual([{ kind: 'blob_missing', blob: sha('version zero'), workspace: ws.id, session: 's', seq: capture.seq, source: 'events.jsonl' }]);
  });

  it('finds a corrupt log and carries on with the rest of the store', async () => {
    const other = await ws.create({ id: 'other' });
    await edit(other, dirs.workspace, 'b.txt', 'b0', 'b1');
    await appendFile(join(sessionDir('s'), 'events.jsonl'), '{"this is": "not an event"}\n');
    const r = await verify(store.ctx);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([expect.objectContaining({ kind: 'log_corrupt', session: 's', message: expect.stringMatching(/line \d+/) })]);
    expect(r.checked.sessions).toBe(1);
  });

  it('finds metadata that disagrees with its log, and interrupted restores', async () => {
    const meta = JSON.parse(await readFile(join(sessionDir('s'), 'metadata.json'), 'utf8'));
    await writeFile(join(sessionDir('s'), 'metadata.json'), JSON.stringify({ ...meta, title: 'not what the log says', eventCount: 2 }));
    const log = createEventLog({ backend: store.ctx.backend, key: `workspaces/${ws.id}/sessions/s/events.jsonl` });
    const [started] = await log.append([{ type: 'restore_started', id: 'r1', to: '1', recovery: '1.2', plan: [] }]);
    const r = await verify(store.ctx);
    const kinds = r.problems.map((p) => p.kind).sort();
    expect(kinds).toEqual(['metadata_mismatch', 'restore_interrupted']);
    expect(r.problems.find((p) => p.kind === 'metadata_mismatch')).toMatchObject({ fields: expect.arrayContaining(['title', 'eventCount']) });
    expect(r.problems.find((p) => p.kind === 'restore_interrupted')).toMatchObject({ session: 's', id: 'r1', to: '1', seq: started!.seq });
  });

  it('a restore from a corrupt blob fails closed end to end: BLOB_CORRUPT, exit 5, nothing changed', async () => {
    await flipLastByte(loosePath(sha('version zero')));
    const logBefore = await readFile(join(sessionDir('s'), 'events.jsonl'));
    const err = await restore(s, '1').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BLOB_CORRUPT' });
    expect(exitCodeOf(err)).toBe(5);
    const cli = await runCliInProcess(['--store', dirs.store, 'restore', '1', '--yes', '--json'], { cwd: dirs.workspace });
    expect(cli.code).toBe(5);
    expect(JSON.parse(cli.stderr).error.code).toBe('BLOB_CORRUPT');
    expect(await readFile(join(dirs.workspace, 'a.txt'), 'utf8')).toBe('version one');
    expect((await readdir(dirs.workspace)).sort()).toEqual(['a.txt']); // no staging file left behind
    const events = (await readFile(join(sessionDir('s'), 'events.jsonl'), 'utf8')).split('\n');
    expect(events.some((l) => l.includes('"restore_started"'))).toBe(false);
    expect((await readFile(join(sessionDir('s'), 'events.jsonl'))).length).toBeGreaterThanOrEqual(logBefore.length);
  });
});

// h7-long probe: `ckpt verify` run while an agent works (other processes gc'ing and scanning too)
// reported blob_missing for owners.json, exit 5, on a healthy store. A settle's after-image is in its
// event (inline) and then in the owner index; its blob-store copy follows the answer — or never comes
// when the process dies first (DESIGN "Inline before-images"): the event's copy stands in for it.
it('counts a settle\'s inline content as the copy of what the owner index names', async () => {
  const soon: (() => Promise<void>)[] = [];
  const daemonish = await openStore({ dir: dirs.store, retention: false, defer: (work) => void soon.push(work) });
  const d = await (await daemonish.openWorkspace(dirs.workspace)).get('s');
  await d.capture(['new.txt'], { tool: 'Write' });
  await writeFile(join(dirs.workspace, 'new.txt'), 'content no blob holds yet\n');
  await d.settle(['new.txt']);
  for (const work of soon.splice(0)) await work();
  await daemonish.close();
  const id = sha('content no blob holds yet\n');
  expect(await readFile(join(dirs.store, 'workspaces', ws.id, 'owners.json'), 'utf8')).toContain(id);
  // The store copy lost (the process killed right after the owner record): only the event holds it.
  await rm(loosePath(id));
  const r = await verify(store.ctx);
  expect(r.problems).toEqual([]);
  expect(r.ok).toBe(true);
});

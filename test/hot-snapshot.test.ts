// The persisted replay snapshot (issue 11, a cheap hook path): a new process decodes only the log's
// tail after it; a snapshot that is corrupt, foreign or stale (the log was replaced) is never trusted —
// the whole log is read and the result is the same as without any snapshot.
import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, Session, type Workspace } from '../src/index.js';
import { SNAPSHOT_AFTER_BYTES, SNAPSHOT_AFTER_EVENTS, snapshotKey } from '../src/session/hot-snapshot.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let ws: Workspace;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-snap-');
  ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
  await writeFile(join(dirs.workspace, 'f.txt'), 'f\n');
});
afterEach(() => dirs.cleanup());

/** A session with `turns` turns of 9 captures each (settled), written the fast way. */
async function longSession(id: string, turns: number): Promise<Session> {
  const session = await ws.create({ id, baseline: false });
  for (let t = 1; t <= turns; t++) {
    const batch: { type: string; [k: string]: unknown }[] = [{ type: 'turn', turn: t }];
    for (let k = 1; k <= 9; k++) batch.push({ type: 'capture', tag: `${t}.${k}`, turn: t, k, tool: 'Edit', callId: `c${t}.${k}`, files: [{ path: `p${k}.txt`, state: 'absent' }] });
    await session.append(batch);
  }
  return session;
}

/** A fresh handle (as a new hook process would have) counting whole-log reads. */
function freshHandle(id: string): { session: Session; fullReads: () => number } {
  const session = new Session(ws.ctx, id);
  let n = 0;
  const read = session.log.read.bind(session.log);
  (session.log as { read: typeof read }).read = (o) => (n++, read(o));
  return { session, fullReads: () => n };
}

const snapFile = (s: Session) => join(dirs.store, snapshotKey(s));

describe('replay snapshot', () => {
  it('written after a long read; a new handle then decodes only the tail', async () => {
    const long = await longSession('s1', 30); // 301 events
    await long.capture(['f.txt'], { tool: 'Edit', callId: 'x1' }); // reads the whole log once, writes the snapshot
    const snap = JSON.parse(await readFile(snapFile(long), 'utf8'));
    expect(snap.pos.seq).toBe(301);
    const { session, fullReads } = freshHandle('s1');
    const r = await session.capture(['f.txt'], { tool: 'Edit', callId: 'x2' });
    expect(r.tag).toBe('30.11');
    expect((await session.settle(['f.txt'], { callId: 'x1' })).tag).toBe('30.10');
    expect(fullReads()).toBe(0);
    // An old call id (not among the recent captures) is still found, through the whole log.
    expect((await session.settle(['f.txt'], { callId: 'c1.1' })).tag).toBe('1.1');
  });

  it('written after a read of few events but many bytes (captures with inline content); the next one after as many bytes again', async () => {
    const session = await ws.create({ id: 'big', baseline: false });
    const logFile = join(dirs.store, session.key, 'events.jsonl');
    // Incompressible new content of 48 KiB rides inline in each capture: ~64 KiB of log per event.
    const captureNew = async (s: Session, n: number): Promise<void> => {
      await writeFile(join(dirs.workspace, `big${n}.bin`), randomBytes(48 * 1024));
      await s.capture([`big${n}.bin`], { tool: 'Edit' });
    };
    for (let n = 0; n < 3; n++) await captureNew(session, n);
    const logBytes = (await stat(logFile)).size;
    expect(logBytes).toBeGreaterThan(SNAPSHOT_AFTER_BYTES);
    await expect(readFile(snapFile(session))).rejects.toThrow(); // this handle never read a long log
    const first = freshHandle('big');
    await captureNew(first.session, 3);
    expect(first.fullReads()).toBe(1);
    const snap = JSON.parse(await readFile(snapFile(session), 'utf8'));
    expect(snap.pos.seq).toBeLessThan(SNAPSHOT_AFTER_EVENTS);
    expect(snap.pos.bytes).toBe(logBytes); // where the read ended: right before this capture's own append
    for (let n = 4; n < 7; n++) await captureNew(session, n);
    const second = freshHandle('big');
    await captureNew(second.session, 7);
    expect(second.fullReads()).toBe(0); // the tail after the snapshot only
    const next = JSON.parse(await readFile(snapFile(session), 'utf8'));
    expect(next.pos.bytes - snap.pos.bytes).toBeGreaterThanOrEqual(SNAPSHOT_AFTER_BYTES);
    expect(next.pos.seq).toBe(snap.pos.seq + 4);
  });

  it('a corrupt, foreign or stale snapshot is ignored: same results, whole log read', async () => {
    const a = await longSession('a', 25);
    await a.capture(['f.txt'], { tool: 'Edit' });
    const b = await longSession('b', 27);
    await b.capture(['f.txt'], { tool: 'Edit' });
    const good = await readFile(snapFile(a), 'utf8');
    // A position keeps only the end of its last line, so a forged one may be as short as "\n": moved
    // back one line with its seq kept, it still names a line end, but the events after it do not
    // continue its seq.
    const moved = JSON.parse(good) as { pos: { bytes: number; lastLine: string } };
    const log = await readFile(join(dirs.store, a.key, 'events.jsonl'));
    moved.pos.bytes = log.lastIndexOf('\n', moved.pos.bytes - 2) + 1;
    moved.pos.lastLine = '\n';
    const cases: [string, string][] = [
      ['not json', '{"v":1,'],
      ['wrong version', good.replace('"v":3', '"v":9')],
      ['the version before the retention index', good.replace('"v":3', '"v":2')],
      ['foreign (another log)', await readFile(snapFile(b), 'utf8')],
      ['a state of the wrong shape', good.replace('"known":[', '"known":[7,')],
      ['a position moved back one line (a one-byte line end)', JSON.stringify(moved)],
      // The folders' last events (the capture's look): every key is a stored path, every value a string.
      ...[['"../x"', '"2026-01-01T00:00:00.000Z"'], ['"/etc"', '"x"'], ['"a/../../b"', '"x"'], ['"d"', '7'], ['7', '"x"']].map(
        ([k, v]): [string, string] => [`foldersAt [${k}, ${v}]`, good.replace('"foldersAt":[', `"foldersAt":[[${k},${v}],`)],
      ),
      ['a turn past the highest started', good.replace(/"turn":\d+/, '"turn":70')],
      ['foldersAt not a list', good.replace(/"foldersAt":\[[^\]]*\]\]/, '"foldersAt":{"":"x"}')],
    ];
    expect(good).toContain('"foldersAt":[["",');
    for (const [label, text] of cases) {
      await writeFile(snapFile(a), text);
      const { session, fullReads } = freshHandle('a');
      const r = await session.capture(['f.txt'], { tool: 'Edit' });
      expect(fullReads(), label).toBe(1);
      expect(r.tag, label).toMatch(/^25\.\d+$/);
    }
    // Stale: the session is removed and created again under the same id; the old snapshot is gone
    // with its folder, and one planted from the old log does not match the new log.
    const old = await readFile(snapFile(a), 'utf8');
    await ws.remove('a');
    const again = await longSession('a', 2);
    await writeFile(snapFile(again), old);
    const { session, fullReads } = freshHandle('a');
    expect((await session.capture(['f.txt'], { tool: 'Edit' })).tag).toBe('2.10');
    expect(fullReads()).toBe(1);
  });
});

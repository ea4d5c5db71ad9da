import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { TempDirs } from '../../test/helpers/temp.js';
import { useLibWorld } from '../../test/helpers/lib-session.js';
import type { Workspace } from '../store.js';
import type { Session } from '../api/session.js';
import type { PlanSnapshot } from './restore.js';

let dirs: TempDirs;
let ws: Workspace;
let session: Session;
const w = (rel: string) => join(dirs.workspace, rel);

useLibWorld('ckpt-check-plan-', (world) => ({ dirs, ws, session } = world));
beforeEach(async () => {
  await writeFile(w('a.txt'), 'v1\n');
  await session.turn();
  await session.capture(['a.txt']);
  await writeFile(w('a.txt'), 'v2\n');
  await session.settle(['a.txt']);
});

const refuse = () => {
  throw new Error('refused by the check');
};

describe('restore checkPlan', () => {
  it('sees the plan, the present images and the last seq, under the lock, before anything happens', async () => {
    const seen: PlanSnapshot[] = [];
    const lastSeq = (await session.events()).at(-1)!.seq;
    await session.restore('1', { dryRun: true, checkPlan: (s) => void seen.push(s) });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.lastSeq).toBe(lastSeq);
    expect(seen[0]!.plan.entries.map((e) => e.path)).toEqual(['a.txt']);
    expect(seen[0]!.present.get('a.txt')?.state).toBe('file');
  });

  it('a throwing check refuses restore, undo and rewind with nothing recorded or changed', async () => {
    const before = (await session.events()).length;
    await expect(session.restore('1', { checkPlan: refuse })).rejects.toThrow('refused by the check');
    await expect(session.undo('1', 'a.txt', { checkPlan: refuse })).rejects.toThrow('refused by the check');
    await expect(session.rewind('1', { checkPlan: refuse })).rejects.toThrow('refused by the check');
    await expect(session.rewind('1', { fork: true, checkPlan: refuse })).rejects.toThrow('refused by the check');
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v2\n');
    expect((await session.events()).length).toBe(before);
    expect((await ws.list()).map((m) => m.id)).toEqual([session.id]); // no stray fork
  });

  it('a rewind into a fork checks against the parent\'s last seq both times', async () => {
    const seqs: number[] = [];
    const lastSeq = (await session.events()).at(-1)!.seq;
    const r = await session.rewind('1', { fork: true, checkPlan: (s) => void seqs.push(s.lastSeq) });
    expect(r.forked).toBe(true);
    expect(seqs).toEqual([lastSeq, lastSeq]);
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v1\n');
  });
});

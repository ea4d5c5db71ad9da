// Issue 27 item 13: a capture in another process while GC rewrites a pack. A put of content that
// lives in a pack freshens the pack (touch, then stat to confirm it is there) and then trusts it. The
// rewrite used to check the pack's mtime and then remove it: a put between the two trusted blobs GC
// then deleted (all 35 lost). Now the old pack is quarantined first and its mtime checked after
// (pack-rewrite.ts). Here the put comes at the rewrite's commit steps; the long tier
// (gc-repack-race.full.test.ts) puts it before every packs/ call GC makes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gcWithPutAt, makeRepackStore } from './fixtures/gc-repack-race.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-gc-repack-race-');
  await makeRepackStore(dirs);
});
afterEach(() => dirs.cleanup());

describe('a capture while GC rewrites a pack', () => {
  it('loses no blob a put trusted when the put comes at the rewrite’s commit (the two packs/ calls after the new index is written)', async () => {
    const clean = await gcWithPutAt(dirs.store, 0);
    expect(clean.packsRewritten).toBe(1);
    const committed = clean.calls.findIndex((c) => c.method === 'write' && c.key.endsWith('.idx')) + 1;
    expect(committed, JSON.stringify(clean.calls)).toBeGreaterThan(0);
    for (const at of [committed + 1, committed + 2]) {
      await dirs.cleanup();
      dirs = await makeTempDirs('ckpt-gc-repack-race-');
      await makeRepackStore(dirs);
      const r = await gcWithPutAt(dirs.store, at);
      expect(r.trusted, `step ${at}`).toBe(35);
      expect(r.problems, `put before ${r.calls[at - 1]?.method} ${r.calls[at - 1]?.key}`).toEqual([]);
    }
  });
});

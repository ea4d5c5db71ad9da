// Issue 27 item 13 (long tier): a put of GC's dead contents by another store instance before *every*
// backend call on packs/ that gc (grace one minute) makes while it plans and rewrites a pack (13 calls:
// index reads, stats, the copy, the new pack and index, the quarantine of the old pack, its index's
// removal, the quarantined pack's removal). Every blob the put trusted must read back and verify
// must pass. The fast sample (the commit steps) is gc-repack-race.test.ts.
import { describe, expect, it } from 'vitest';
import { gcWithPutAt, makeRepackStore } from './fixtures/gc-repack-race.js';
import { makeTempDirs } from './helpers/temp.js';

async function run(at: number): Promise<Awaited<ReturnType<typeof gcWithPutAt>>> {
  const dirs = await makeTempDirs('ckpt-gc-repack-race-full-');
  try {
    await makeRepackStore(dirs);
    return await gcWithPutAt(dirs.store, at);
  } finally {
    await dirs.cleanup();
  }
}

describe('a capture before every packs/ call of a pack-rewriting GC', () => {
  it('never loses a blob the put trusted', async () => {
    const clean = await run(0);
    expect(clean.packsRewritten).toBe(1);
    expect(clean.calls.length).toBeGreaterThan(8);
    const failures: string[] = [];
    for (let at = 1; at <= clean.calls.length; at++) {
      const r = await run(at);
      if (r.trusted !== 35) failures.push(`step ${at}: the put ran ${r.trusted} times`);
      const call = r.calls[at - 1] ?? clean.calls[at - 1]!;
      if (r.problems.length) failures.push(`step ${at}, put before ${call.method} ${call.key}: ${r.problems.length} problems, first: ${r.problems[0]}`);
    }
    expect(failures).toEqual([]);
  }, 300_000);
});

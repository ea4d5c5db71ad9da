// The hub's buffer for Last-Event-ID is capped by events and by bytes: a probe's 2,000 prompts of
// 64 Ki chars (a hook credential is enough to append them) grew the daemon by 330 MB while the count
// cap alone allowed ~1.5 GB. A real store and real appends; the caps are small here.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDirs, type TempDirs } from '../../test/helpers/temp.js';
import { openStore, type Store } from '../store.js';
import { createEventHub, type EventHub, type HubEvent } from './event-hub.js';

let dirs: TempDirs;
let store: Store;
let hub: EventHub | undefined;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-event-hub-');
  store = await openStore({ dir: dirs.store });
});

afterEach(async () => {
  hub?.close();
  hub = undefined;
  await dirs.cleanup();
});

/** Appends `count` turns with prompts of `chars` chars and returns every event the hub delivered. */
async function appendTurns(h: EventHub, count: number, chars: number): Promise<HubEvent[]> {
  const seen: HubEvent[] = [];
  h.subscribe((events) => seen.push(...events));
  const s = await (await store.openWorkspace(dirs.workspace)).create({ id: 's1' });
  for (let i = 0; i < count; i++) await s.turn({ text: `${i} ${'中'.repeat(chars)}` });
  await h.sync();
  return seen;
}

describe('event hub buffer', () => {
  it('keeps only the newest events within the byte cap; resuming from a dropped one is a reset', async () => {
    const cap = 100_000;
    hub = await createEventHub(store, undefined, { events: 10_000, bytes: cap });
    // 40 prompts of 8 Ki CJK chars: ~24 KiB each in UTF-8, ~1 MiB in all.
    const seen = await appendTurns(hub, 40, 8 * 1024);
    const turns = seen.filter((e) => e.event.type === 'turn');
    expect(turns).toHaveLength(40);
    for (const e of seen) expect(e.bytes).toBe(Buffer.byteLength(JSON.stringify({ workspace: e.workspace, root: e.root, session: e.session, event: e.event })));

    // What is still buffered: the newest events whose bytes fit the cap, the ones before dropped.
    const kept = hub.since(`${hub.boot}-0`);
    expect(kept.reset).toMatch(/no longer buffered/);
    let inCap = 0;
    let bytes = 0;
    for (const e of [...seen].reverse()) {
      if (bytes + e.bytes > cap) break;
      bytes += e.bytes;
      inCap++;
    }
    const oldestKept = seen[seen.length - inCap]!;
    const resumed = hub.since(`${hub.boot}-${oldestKept.n - 1}`);
    expect(resumed.reset).toBeUndefined();
    expect(resumed.events.map((e) => e.n)).toEqual(seen.slice(-inCap).map((e) => e.n));
    expect(resumed.events.reduce((sum, e) => sum + e.bytes, 0)).toBeLessThanOrEqual(cap);
    expect(inCap).toBeLessThan(seen.length);
    // One event earlier was dropped: it cannot be resumed from.
    expect(hub.since(`${hub.boot}-${oldestKept.n - 2}`).reset).toMatch(/no longer buffered/);
  });

  it('still caps by count', async () => {
    hub = await createEventHub(store, undefined, { events: 3, bytes: 1 << 30 });
    const seen = await appendTurns(hub, 5, 10);
    const last = seen.at(-1)!;
    expect(hub.since(`${hub.boot}-${last.n - 3}`).events.map((e) => e.n)).toEqual([last.n - 2, last.n - 1, last.n]);
    expect(hub.since(`${hub.boot}-${last.n - 4}`).reset).toMatch(/no longer buffered/);
  });
});

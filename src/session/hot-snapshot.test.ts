// The hot state a process remembers per session handle (model-based): two handles on one session
// stand for two processes appending in turn (captures — inline or not —, settles, turns, titles).
// After every step each handle's hot state must equal the fold of the whole log, and a handle that
// has just captured or settled must remember the state at the log's very end (its next call then
// reads nothing: the daemon's cached session). The memory is folded in place, so two reads at
// once on one handle must not fold the same events twice. A third, new handle at every step stands
// for a new hook process: it starts from the persisted snapshot (written after 200 events or 128 KiB
// of log; large incompressible captures cross the latter) and must reach the same state.
import { createHash } from 'node:crypto';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeTempDirs } from '../../test/helpers/temp.js';
import { Session } from '../api/session.js';
import { openStore } from '../store.js';
import { loadHotState, rememberedHotState, SNAPSHOT_AFTER_BYTES } from './hot-snapshot.js';
import { emptyHotState, foldHot } from './hot-state.js';

type Op =
  | { kind: 'capture'; who: 0 | 1; file: string; content: number; big: boolean; call: number }
  | { kind: 'settle'; who: 0 | 1; file: string; call: number }
  | { kind: 'turn' | 'title'; who: 0 | 1 };

const who = fc.constantFrom<0 | 1>(0, 1);
const file = fc.constantFrom('a.txt', 'b.txt', 'ü.txt');
const op: fc.Arbitrary<Op> = fc.oneof(
  // Captures weigh more, so that runs often carry enough large new content to leave a snapshot.
  { arbitrary: fc.record({ kind: fc.constant('capture' as const), who, file, content: fc.nat(3), big: fc.boolean(), call: fc.nat(4) }), weight: 3 },
  fc.record({ kind: fc.constant('settle' as const), who, file, call: fc.nat(4) }),
  fc.record({ kind: fc.constantFrom('turn' as const, 'title' as const), who }),
);

/** Incompressible content for a name (the same name gives the same bytes): two new ones inline cross the snapshot's byte rule. */
function bigContent(name: string): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; parts.length * 32 < (SNAPSHOT_AFTER_BYTES * 3) / 8; i++) parts.push(createHash('sha256').update(`${name}/${i}`).digest());
  return Buffer.concat(parts);
}

describe('hot state memory', () => {
  it('equals the fold of the whole log after appends by this handle or another, and sits at the end after a capture or settle', async () => {
    const dirs = await makeTempDirs();
    const ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
    const logBytes = async (s: Session): Promise<number> => (await stat(join(dirs.store, `${s.key}/events.jsonl`))).size;
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 16 }), async (ops) => {
          const id = `s${++run}`;
          await ws.create({ id });
          const handles = [await ws.get(id), await ws.get(id)] as const;
          for (const o of ops) {
            const h = handles[o.who];
            if (o.kind === 'capture') {
              // New content each time is carried inline; content seen before is referenced. (Large
              // content is named by the run: the store, shared by the runs, would hold it already.)
              await writeFile(join(dirs.workspace, o.file), o.big ? bigContent(`${id}/${o.content}`) : `content ${o.content}\n`.repeat(50));
              await h.capture([o.file], { tool: 'Edit', callId: `c${o.call}` });
            } else if (o.kind === 'settle') {
              await h.settle([o.file], { callId: `c${o.call}` }).catch((e: { code?: string }) => {
                if (e.code !== 'TAG_NOT_FOUND') throw e;
              });
            } else if (o.kind === 'turn') await h.turn();
            else await h.setTitle(`t${o.who}`);
            const full = foldHot(emptyHotState(), await handles[0].events());
            if (o.kind === 'capture' || o.kind === 'settle') expect(rememberedHotState(h, await logBytes(h))).toEqual(full);
            // Two reads at once on one handle see the same new tail: it is folded into the memory once.
            for (const each of handles) expect(await Promise.all([loadHotState(each), loadHotState(each)])).toEqual([full, full]);
            // A new process: the snapshot (if any) and the tail after it.
            expect(await loadHotState(new Session(ws.ctx, id))).toEqual(full);
          }
        }),
        { numRuns: 25 },
      );
    } finally {
      await dirs.cleanup();
    }
  }, 120_000);
});

// The hot state a process remembers per session handle (model-based): two handles on one session
// stand for two processes appending in turn (captures — inline or not —, settles, turns, titles).
// After every step each handle's hot state must equal the fold of the whole log, and a handle that
// has just captured or settled must remember the state at the log's very end (its next call then
// reads nothing: the daemon's cached session). The memory is folded in place, so two reads at
// once on one handle must not fold the same events twice.
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeTempDirs } from '../../test/helpers/temp.js';
import type { Session } from '../api/session.js';
import { openStore } from '../store.js';
import { loadHotState, rememberedHotState } from './hot-snapshot.js';
import { emptyHotState, foldHot } from './hot-state.js';

type Op =
  | { kind: 'capture'; who: 0 | 1; file: string; content: number; call: number }
  | { kind: 'settle'; who: 0 | 1; file: string; call: number }
  | { kind: 'turn' | 'title'; who: 0 | 1 };

const who = fc.constantFrom<0 | 1>(0, 1);
const file = fc.constantFrom('a.txt', 'b.txt', 'ü.txt');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('capture' as const), who, file, content: fc.nat(3), call: fc.nat(4) }),
  fc.record({ kind: fc.constant('settle' as const), who, file, call: fc.nat(4) }),
  fc.record({ kind: fc.constantFrom('turn' as const, 'title' as const), who }),
);


describe('hot state memory', () => {
  it('equals the fold of the whole log after appends by this handle or another, and sits at the end after a capture or settle', async () => {
    const dirs = await makeTempDirs();
    const ws = await (await openStore({ dir: dirs.store })).openWorkspace(dirs.workspace);
    const logBytes = async (s: Session): Promise<number> => (await stat(join(dirs.store, `${s.key}/events.jsonl`))).size;
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 14 }), async (ops) => {
          const id = `s${++run}`;
          await ws.create({ id });
          const handles = [await ws.get(id), await ws.get(id)] as const;
          for (const o of ops) {
            const h = handles[o.who];
            if (o.kind === 'capture') {
              // New content each time is carried inline; content seen before is referenced.
              await writeFile(join(dirs.workspace, o.file), `content ${o.content}\n`.repeat(50));
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
          }
        }),
        { numRuns: 25 },
      );
    } finally {
      await dirs.cleanup();
    }
  }, 120_000);
});

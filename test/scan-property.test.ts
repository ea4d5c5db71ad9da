// Property test (issue 4 item 7): random sequences of shell-like file operations, turns and scans,
// then a restore to a random earlier scan tag must leave the workspace exactly as the model says it
// was at that tag; ignored files are never touched, and a scan right after the restore records nothing.
import { chmod, rename, utimes } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startTurn } from '../src/capture/turn.js';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import { makeScanWorld, treeOf, type TreeEntry } from './fixtures/scan-world.js';

const PATHS = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt', 'g/h.txt', 'g/i/j.txt'];
const DIRS = ['d', 'd/e', 'g'];
const IGNORED = ['x.log', 'd/y.log', 'node_modules/m.js'];

type Op =
  | { op: 'write'; path: string; content: string; mode: number }
  | { op: 'delete'; path: string }
  | { op: 'chmod'; path: string; mode: number }
  | { op: 'link'; path: string; target: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'rmdir'; dir: string }
  | { op: 'ignored'; path: string; content: string }
  | { op: 'age' }
  | { op: 'turn' }
  | { op: 'scan'; always: boolean; cut: boolean };

const path = fc.constantFrom(...PATHS);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('write' as const), path, content: fc.constantFrom('', 'x', 'y', 'xy', 'hello', 'hellp'), mode: fc.constantFrom(0o644, 0o755, 0o600) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), path }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('chmod' as const), path, mode: fc.constantFrom(0o644, 0o755) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('link' as const), path, target: fc.constantFrom('a.txt', '../b.txt', 'missing') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), from: path, to: path }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rmdir' as const), dir: fc.constantFrom(...DIRS) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('ignored' as const), path: fc.constantFrom(...IGNORED), content: fc.string({ maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'age' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'turn' as const }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('scan' as const), always: fc.boolean(), cut: fc.nat(4).map((n) => n === 0) }) },
);

type Model = Record<string, TreeEntry>;

describe('scan + restore property', () => {
  it('restoring to any earlier scan tag reproduces the tree at that tag', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 3, maxLength: 18 }), fc.nat(), async (ops, pick) => {
        const w = await makeScanWorld();
        try {
          await w.write('.gitignore', '*.log\n');
          await startTurn(w.session);
          const model = (): Promise<Model> => treeOf(w.root).then((t) => Object.fromEntries(Object.entries(t).filter(([p]) => !p.endsWith('.log'))));
          await scan(w.session);
          let lastScanned = await model();
          const atTag = new Map<string, Model>();
          const ignored = new Map<string, string>();
          const doScan = async (always: boolean, cut = false): Promise<void> => {
            const r = await scan(w.session, { rewriteIndex: always ? 'always' : 'auto', ...(cut ? { budgetMs: 0 } : {}) });
            if (r.truncated) {
              // Cut short before anything was walked: nothing recorded, everything carried over.
              expect(r.tag).toBeNull();
              return;
            }
            const now = await model();
            if (r.tag !== null) atTag.set(r.tag, lastScanned);
            else expect(now).toEqual(lastScanned);
            lastScanned = now;
          };
          for (const o of ops) {
            switch (o.op) {
              case 'write':
                await w.remove(o.path);
                await w.write(o.path, o.content, o.mode);
                break;
              case 'delete':
                await w.remove(o.path);
                break;
              case 'chmod':
                await chmod(w.at(o.path), o.mode).catch(() => {});
                break;
              case 'link':
                await w.link(o.path, o.target);
                break;
              case 'rename':
                if (o.from !== o.to) {
                  await w.remove(o.to);
                  await w.write(o.to, '');
                  await w.remove(o.to);
                  await rename(w.at(o.from), w.at(o.to)).catch(() => {});
                }
                break;
              case 'rmdir':
                await w.remove(o.dir);
                for (const p of [...ignored.keys()]) if (p.startsWith(`${o.dir}/`)) ignored.delete(p);
                break;
              case 'ignored':
                await w.write(o.path, o.content);
                ignored.set(o.path, o.content);
                break;
              case 'age':
                for (const p of PATHS) await utimes(w.at(p), new Date(2020, 0, 1), new Date(2020, 0, 1)).catch(() => {});
                break;
              case 'turn':
                await startTurn(w.session);
                break;
              case 'scan':
                await doScan(o.always, o.cut);
                break;
            }
          }
          await doScan(false);
          const tags = [...atTag.keys()];
          if (tags.length === 0) return;
          const tag = tags[pick % tags.length] as string;
          const r = await restore(w.session, tag, {});
          expect(r.drift).toEqual([]);
          expect(await model()).toEqual(atTag.get(tag));
          for (const [p, content] of ignored) expect(await w.read(p)).toBe(content);
          // The restore told ckpt what the workspace holds: nothing new for a scan.
          expect((await scan(w.session)).files).toEqual([]);
        } finally {
          await w.dirs.cleanup();
        }
      }),
      { numRuns: Number(process.env.SCAN_PROPERTY_RUNS ?? 25) },
    );
  });
});

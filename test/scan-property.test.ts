// Property test (issue 4 item 7): random sequences of shell-like file operations, turns and scans,
// then a restore to a random earlier scan tag must leave the workspace exactly as the model says it
// was at that tag; ignored files are never touched, and a scan right after the restore records nothing.
// The ignore rules change too (.gitignore rewritten, as a tool or a checkout does): then the model's
// claim is on the paths visible under every rule set from the tag's scan to the last one (exactly as
// at the tag), and the paths ignored under all of them are untouched. Paths become FIFOs too: ckpt
// cannot store or make one, so a path that is a FIFO at the tag or now is left as it is, and every
// other path is exact (a file that replaced a FIFO included).
import { execFileSync } from 'node:child_process';
import { chmod, rename, utimes } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startTurn } from '../src/capture/turn.js';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import ignore from 'ignore';
import { makeScanWorld, treeOf, type TreeEntry } from './fixtures/scan-world.js';

const PATHS = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt', 'g/h.txt', 'g/i/j.txt'];
const DIRS = ['d', 'd/e', 'g'];
const IGNORED = ['x.log', 'd/y.log', 'node_modules/m.js'];
/** .gitignore texts: the default, folders ignored, a file ignored, nothing ignored. */
const RULES = ['*.log\n', '*.log\nd/\n', '*.log\ng/i/\n', '*.log\nb.txt\n', ''];

type Op =
  | { op: 'write'; path: string; content: string; mode: number }
  | { op: 'delete'; path: string }
  | { op: 'fifo'; path: string }
  | { op: 'chmod'; path: string; mode: number }
  | { op: 'link'; path: string; target: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'rmdir'; dir: string }
  | { op: 'ignored'; path: string; content: string }
  | { op: 'age' }
  | { op: 'turn' }
  | { op: 'scan'; always: boolean; cut: boolean }
  | { op: 'rules'; text: string };

const path = fc.constantFrom(...PATHS);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('write' as const), path, content: fc.constantFrom('', 'x', 'y', 'xy', 'hello', 'hellp'), mode: fc.constantFrom(0o644, 0o755, 0o600) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), path }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('fifo' as const), path }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('chmod' as const), path, mode: fc.constantFrom(0o644, 0o755) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('link' as const), path, target: fc.constantFrom('a.txt', '../b.txt', 'missing') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), from: path, to: path }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rmdir' as const), dir: fc.constantFrom(...DIRS) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('ignored' as const), path: fc.constantFrom(...IGNORED), content: fc.string({ maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'age' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'turn' as const }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('scan' as const), always: fc.boolean(), cut: fc.nat(4).map((n) => n === 0) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rules' as const), text: fc.constantFrom(...RULES) }) },
);

/** Whether `path` is ignored by the .gitignore text `rules` (node_modules always is). */
function ignoredBy(rules: string, path: string): boolean {
  return path.startsWith('node_modules/') || ignore().add(rules).ignores(path);
}

type Model = Record<string, TreeEntry>;

/** The entries of `tree` that the rules `text` do not ignore. */
function visible(tree: Model, text: string): Model {
  return Object.fromEntries(Object.entries(tree).filter(([p]) => !ignoredBy(text, p)));
}

describe('scan + restore property', () => {
  it('restoring to any earlier scan tag reproduces the tree at that tag', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 3, maxLength: 18 }), fc.nat(), async (ops, pick) => {
        const w = await makeScanWorld();
        try {
          await w.write('.gitignore', '*.log\n');
          await startTurn(w.session);
          const model = (): Promise<Model> => treeOf(w.root);
          await scan(w.session);
          let lastScanned = await model();
          // The rules each scan saw, in order; a tag's state is the tree at the scan before it.
          const rulesAt: string[] = ['*.log\n'];
          let rulesChanged = false;
          const atTag = new Map<string, { tree: Model; since: number }>();
          const ignored = new Map<string, string>();
          const doScan = async (always: boolean, cut = false): Promise<void> => {
            const r = await scan(w.session, { rewriteIndex: always ? 'always' : 'auto', ...(cut ? { budgetMs: 0 } : {}) });
            if (r.truncated) {
              // Cut short before anything was walked: nothing recorded, everything carried over.
              expect(r.tag).toBeNull();
              return;
            }
            const now = await model();
            const rules = (await w.read('.gitignore').catch(() => '')) ?? '';
            if (r.tag !== null) atTag.set(r.tag, { tree: lastScanned, since: rulesAt.length - 1 });
            else if (!rulesChanged) expect(visible(now, rules)).toEqual(visible(lastScanned, rules));
            rulesAt.push(rules);
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
              case 'fifo':
                await w.remove(o.path);
                await w.write(o.path, ''); // its folders
                await w.remove(o.path);
                execFileSync('mkfifo', [w.at(o.path)]);
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
              case 'rules':
                await w.write('.gitignore', o.text);
                rulesChanged = true;
                break;
            }
          }
          await doScan(false);
          const tags = [...atTag.keys()];
          if (tags.length === 0) return;
          const tag = tags[pick % tags.length] as string;
          const { tree: then, since } = atTag.get(tag)!;
          const rules = rulesAt.slice(since);
          const before = await model();
          // Visible under every rule set since the tag's scan: exactly as at the tag.
          const stable = (p: string) => rules.every((text) => !ignoredBy(text, p));
          // Drift only where a later rule hid a change from the scans (ckpt could not record it: the
          // restore refuses to overwrite it unasked; found by a random seed): then forced. A drifted
          // path may be a folder (`d`, made again for an ignored file under `d/`): hidden as one.
          const unhidden = (p: string) => stable(p) && rules.every((text) => !ignoredBy(text, `${p}/`));
          const r = await restore(w.session, tag, {}).catch(async (err: unknown) => {
            const drift = (err as { code?: string; data?: { drift?: string[] } }).data?.drift ?? [];
            if ((err as { code?: string }).code !== 'DRIFT' || drift.some(unhidden)) throw err;
            return restore(w.session, tag, { force: true });
          });
          expect(r.drift.filter(unhidden)).toEqual([]);
          const after = await model();
          const pick2 = (t: Model, keep: (p: string) => boolean) => Object.fromEntries(Object.entries(t).filter(([p]) => keep(p)));
          // A FIFO at the tag or before the restore: left as it was.
          const fifo = (p: string) => then[p]?.type === 'fifo' || before[p]?.type === 'fifo';
          expect(pick2(after, (p) => stable(p) && !fifo(p))).toEqual(pick2(then, (p) => stable(p) && !fifo(p)));
          expect(pick2(after, fifo)).toEqual(pick2(before, fifo));
          // Ignored under all of them: untouched by the restore.
          const hidden = (p: string) => rules.every((text) => ignoredBy(text, p));
          expect(pick2(after, hidden)).toEqual(pick2(before, hidden));
          for (const [p, content] of ignored) if (hidden(p)) expect(await w.read(p)).toBe(content);
          // The restore told ckpt what the workspace holds: nothing new for a scan (while the rules stayed).
          if (!rulesChanged) expect((await scan(w.session)).files).toEqual([]);
        } finally {
          await w.dirs.cleanup();
        }
      }),
      { numRuns: Number(process.env.SCAN_PROPERTY_RUNS ?? 25) },
    );
  });
});

// Model-based property test of the large restore (DESIGN §10 "A large restore flushes its file system
// once"): random trees — files with bytes and modes, symlinks, nested and empty folders, folder modes —
// changed over several turns (recorded in-process: scan, then the turn), with restores to random
// earlier tags and their undo run by the real CLI at random between them. Every turn rewrites 80
// files under bulk/ (some become symlinks), so every restore and undo writes at least 64 files and
// takes the flush at once. The tree after each must equal the model's tree at the tag exactly.
//
// The restores run with the flush seam (test/reliability/flush-seam.ts): /proc/meminfo reports
// nothing else waiting for write-back, so the choice does not depend on the machine's other work, and
// its report (in the fault seam's trace order) shows the path taken — `sync -f` exited 0 and no written
// file was fsynced on its own; in the fallback variant `sync -f` fails and every written file is
// fsynced by its path instead. Both commit only after the flush.
//
// CKPT_PROPERTY_RUNS raises the number of runs (each variant, and their length) for a long local run.
import { chmod, mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Session, type Store } from '../src/index.js';
import { canSyncFileSystem } from '../src/restore/sync-fs.js';
import { runWithFlushSeam } from './reliability/flush-seam-run.js';
import type { FlushSeamConfig, FlushSeamReport } from './reliability/flush-seam.js';
import { MAIN } from './reliability/scenarios.js';
import { clear, lstatOf } from './helpers/tree-ops.js';
import { strictTreeOf, type StrictTree } from './helpers/strict-tree.js';

const PATHS = ['a', 'b', 'a/x', 'a/y', 'a/x/deep', 'b/z', 'c', 'c/d/e', 'e'];
const CONTENTS = ['', 'one', 'two\n', 'x'.repeat(300)];
const MODES = [0o644, 0o755, 0o600, 0o444];
const DIR_MODES = [0o755, 0o700, 0o750];
const TARGETS = ['a', '../b', 'missing', 'a/x', 'bulk/k1'];
/** Files every turn rewrites: more than the 64 from which a restore flushes at once. */
const BULK = 80;

type Op =
  | { op: 'write'; path: string; content: string; mode: number }
  | { op: 'delete'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'chmod'; path: string; mode: number }
  | { op: 'link'; path: string; target: string }
  | { op: 'mkdir'; path: string; mode: number };

type Step = { kind: 'turn'; ops: Op[]; bulk: number } | { kind: 'restore'; pick: number; undo: boolean };

const path = fc.constantFrom(...PATHS);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('write' as const), path, content: fc.constantFrom(...CONTENTS), mode: fc.constantFrom(...MODES) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), path }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), from: path, to: path }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('chmod' as const), path, mode: fc.constantFrom(...MODES, ...DIR_MODES) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('link' as const), path, target: fc.constantFrom(...TARGETS) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('mkdir' as const), path, mode: fc.constantFrom(...DIR_MODES) }) },
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('turn' as const), ops: fc.array(opArb, { maxLength: 6 }), bulk: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('restore' as const), pick: fc.nat(), undo: fc.boolean() }) },
);

type Tree = StrictTree;

/** Every entry under `dir`, nothing followed (strict-tree.ts). */
const treeOf = (dir: string): Promise<Tree> => strictTreeOf(dir);

/** Files of `to` that differ from `from`: a restore from `from` to `to` writes each. */
function filesWritten(from: Tree, to: Tree): string[] {
  return Object.entries(to)
    .filter(([p, e]) => e.type === 'file' && JSON.stringify(from[p]) !== JSON.stringify(e))
    .map(([p]) => p);
}

/** The user's and agent's shell: plain file operations, recorded by the next scan. */
async function apply(root: string, o: Op): Promise<void> {
  const at = (rel: string): string => join(root, rel);
  switch (o.op) {
    case 'write':
      await clear(root, o.path);
      await writeFile(at(o.path), o.content);
      await chmod(at(o.path), o.mode);
      return;
    case 'delete':
      await rm(at(o.path), { recursive: true, force: true }).catch(() => {});
      return;
    case 'rename': {
      if (o.from === o.to || o.to.startsWith(`${o.from}/`) || o.from.startsWith(`${o.to}/`)) return;
      if (!(await lstatOf(at(o.from)))) return;
      await clear(root, o.to);
      await rename(at(o.from), at(o.to));
      return;
    }
    case 'chmod': {
      const info = await lstatOf(at(o.path));
      // Files get file modes, folders folder modes (never one that locks their owner out).
      if (info?.isFile() && MODES.includes(o.mode)) await chmod(at(o.path), o.mode);
      if (info?.isDirectory() && DIR_MODES.includes(o.mode)) await chmod(at(o.path), o.mode);
      return;
    }
    case 'link':
      await clear(root, o.path);
      await symlink(o.target, at(o.path));
      return;
    case 'mkdir':
      await clear(root, o.path);
      await mkdir(at(o.path));
      await chmod(at(o.path), o.mode);
      return;
  }
}

/** Turn `n` rewrites every bulk file (nested folders, some made symlinks, modes varied by `seed`). */
async function rewriteBulk(root: string, n: number, seed: number): Promise<void> {
  for (let k = 0; k < BULK; k++) {
    const rel = `bulk/p${k % 3}/q${k % 2}/k${k}`;
    await clear(root, rel);
    if ((k + seed) % 23 === 0) await symlink(`k${(k + 2) % BULK}`, join(root, rel));
    else {
      await writeFile(join(root, rel), `turn ${n} seed ${seed} file ${k}\n`);
      await chmod(join(root, rel), MODES[(k + seed) % MODES.length]!);
    }
  }
}

interface Variant {
  name: string;
  seam: Omit<FlushSeamConfig, 'fault'>;
  /** Whether the run's report shows the path this variant must take, given the files it wrote. */
  took(report: FlushSeamReport, written: readonly string[]): boolean;
}

/** The written files fsynced on their own (by descriptor or by path), from the fault seam's trace. */
const fsyncedFiles = (r: FlushSeamReport, written: readonly string[]): string[] => {
  const fsynced = new Set(r.trace.filter((t) => t.side === 'workspace' && /sync/.test(t.op)).map((t) => t.path));
  return written.filter((p) => fsynced.has(p));
};
const commitAfterFlush = (r: FlushSeamReport): boolean => {
  const kinds = r.events.map((e) => e.kind);
  return kinds.includes('committed') && kinds.lastIndexOf('sync-exit') < kinds.indexOf('committed') && kinds.indexOf('sync-start') >= 0;
};

const VARIANTS: Variant[] = [
  {
    name: 'flush at once (sync -f)',
    seam: { pending: 0 },
    took: (r, written) => commitAfterFlush(r) && r.events.some((e) => e.kind === 'sync-exit' && e.ok === true) && fsyncedFiles(r, written).length === 0,
  },
  {
    name: 'sync -f failed: an fsync per written file',
    seam: { pending: 0, sync: 'fail' },
    took: (r, written) => commitAfterFlush(r) && r.events.some((e) => e.kind === 'sync-exit' && e.ok === false) && fsyncedFiles(r, written).length === written.length,
  },
];

const base = await mkdtemp(join(tmpdir(), 'ckpt-flush-model-'));
afterAll(() => rm(base, { recursive: true, force: true }));
let runNo = 0;

async function runSteps(variant: Variant, steps: readonly Step[]): Promise<{ restores: number }> {
  const dir = join(base, `run-${++runNo}`);
  const dirs = { store: join(dir, 'store'), workspace: join(dir, 'ws') };
  const root = dirs.workspace;
  await mkdir(root, { recursive: true });
  await writeFile(join(root, 'a'), 'start');
  await mkdir(join(root, 'b'));
  await writeFile(join(root, 'b/z'), 'zed');
  await chmod(join(root, 'b/z'), 0o755);
  await symlink('a', join(root, 'c'));
  await mkdir(join(root, 'empty'));
  await rewriteBulk(root, 0, 0);

  let store: Store | undefined = await openStore({ dir: dirs.store });
  let session: Session = await (await store.openWorkspace(root)).create({ id: MAIN, baseline: true });
  const open = async (): Promise<Session> => {
    if (!store) {
      store = await openStore({ dir: dirs.store });
      session = await (await store.openWorkspace(root)).get(MAIN);
    }
    return session;
  };
  const close = async (): Promise<void> => {
    await store?.close();
    store = undefined;
  };
  /** The tree at each tag, and the tree now (as ckpt last recorded it). */
  const atTag = new Map<string, Tree>();
  let now = await treeOf(root);
  atTag.set((await session.turn({ text: 'start' })).tag, now);
  let turns = 1;
  let restores = 0;

  /** `ckpt restore TAG` through the seam: the tree must be `want` after it, the flush the variant's. */
  const cliRestore = async (tag: string, want: Tree): Promise<string | null> => {
    const written = filesWritten(now, want);
    const run = await runWithFlushSeam(dirs, ['restore', tag, '--yes'], variant.seam);
    expect({ tag, code: run.code, stderr: run.stderr }).toEqual({ tag, code: 0, stderr: '' });
    const result = JSON.parse(run.stdout) as { undo: string | null; skipped: unknown[] };
    expect({ tag, skipped: result.skipped }).toEqual({ tag, skipped: [] });
    expect(await treeOf(root)).toEqual(want);
    expect({ tag, written: written.length, took: variant.took(run.report!, written) }).toEqual({ tag, written: written.length, took: true });
    restores++;
    return result.undo;
  };

  try {
    for (const step of steps) {
      if (step.kind === 'turn') {
        const s = await open();
        for (const o of step.ops) await apply(root, o);
        await rewriteBulk(root, turns, step.bulk);
        await s.scan();
        now = await treeOf(root);
        atTag.set((await s.turn({ text: `turn ${turns++}` })).tag, now);
        continue;
      }
      // A restore to an earlier tag whose tree differs from now in at least 64 files (every earlier
      // turn's does, bar the tag of the tree there is now).
      const candidates = [...atTag].filter(([, t]) => filesWritten(now, t).length >= 64);
      if (candidates.length === 0) continue;
      const [tag, want] = candidates[step.pick % candidates.length]!;
      await close();
      const before = now;
      const undo = await cliRestore(tag, want);
      now = want;
      if (undo !== null) atTag.set(undo, before);
      if (step.undo && undo !== null) {
        const again = await cliRestore(undo, before);
        now = before;
        if (again !== null) atTag.set(again, want);
      }
      // A restore tells ckpt what the workspace holds: a scan finds nothing new.
      expect((await (await open()).scan()).files).toEqual([]);
    }
  } finally {
    await close();
    await rm(dir, { recursive: true, force: true });
  }
  return { restores };
}

const RUNS = Number(process.env.CKPT_PROPERTY_RUNS ?? 1);
/** Random steps per run: fewer in `npm test` (each restore is a CLI process, ~0.5 s here under load). */
const STEPS = process.env.CKPT_PROPERTY_RUNS ? { minLength: 3, maxLength: 6 } : { minLength: 2, maxLength: 4 };

describe.skipIf(!canSyncFileSystem())('large restore model (flush at once)', () => {
  for (const variant of VARIANTS) {
    it(`every restore and undo of 64+ files gives the tag's tree exactly: ${variant.name}`, { timeout: 600_000 }, async () => {
      let restores = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, STEPS), async (steps) => {
          // At least one restore per run, after at least one turn.
          restores += (await runSteps(variant, [{ kind: 'turn', ops: [], bulk: 1 }, ...steps, { kind: 'restore', pick: 0, undo: true }])).restores;
        }),
        { numRuns: RUNS },
      );
      expect(restores).toBeGreaterThanOrEqual(2 * RUNS);
    });
  }
});

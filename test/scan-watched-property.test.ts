// Watched scans (issue 13 item 5): the paths a folder watcher saw touched must give exactly the changes
// a full stat scan finds. Two identical workspaces in one store get the same random shell-like
// operations (writes, deletes, modes, links, file and folder renames, folder removals, a file replaced
// by a folder and back, ignored files, rule-file edits, capture + settle); after each round one is
// scanned through its touch tracker and the other with the full scan: the recorded changes must match.
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTouchTracker } from '../src/daemon/touch-tracker.js';
import { openStore } from '../src/store.js';
import type { ScanResult } from '../src/scan/index.js';
import { makeTempDirs } from './helpers/temp.js';

const FILES = ['a.txt', 'b.txt', 'd/c.txt', 'd/e/f.txt', 'g/h.txt', 'g/i/j.txt', 'x.log', 'd/y.log'];
const DIRS = ['d', 'd/e', 'g', 'g/i', 'k'];

type Op =
  | { op: 'write'; path: string; content: string; mode: number }
  | { op: 'delete'; path: string }
  | { op: 'chmod'; path: string; mode: number }
  | { op: 'link'; path: string; target: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'moveDir'; from: string; to: string }
  | { op: 'rmdir'; dir: string }
  | { op: 'fileToDir'; path: string }
  | { op: 'rules'; text: string; dir?: string }
  | { op: 'captureSettle'; path: string; content: string };

const file = fc.constantFrom(...FILES);
const dir = fc.constantFrom(...DIRS);
const content = fc.constantFrom('', 'x', 'y', 'hello', 'hellp', 'a longer line of text\n');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('write' as const), path: file, content, mode: fc.constantFrom(0o644, 0o755) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), path: file }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('chmod' as const), path: file, mode: fc.constantFrom(0o644, 0o700) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('link' as const), path: file, target: fc.constantFrom('a.txt', '../b.txt', 'missing') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), from: file, to: file }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('moveDir' as const), from: dir, to: fc.constantFrom('k', 'g/m', 'n') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rmdir' as const), dir }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('fileToDir' as const), path: file }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rules' as const), text: fc.constantFrom('*.log\n', '*.log\nb.txt\n', '', '.gitignore\n*.log\nb.txt\n') }) },
  // A folder's rule file. One that ignores everything there (itself too: git still reads it) is in the
  // fixed examples and watched-scan-probe.test.ts (seed -805131338 found its new-folder case, fixed;
  // DESIGN "Watched scans at inotify's limits…").
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rules' as const), text: fc.constantFrom('c.txt\n', '*.txt\n!c.txt\n', 'e/\n'), dir: fc.constantFrom('d', 'g') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('captureSettle' as const), path: file, content }) },
);

/** Applies a shell-like operation to a tree; failures (a missing source…) are part of the game. */
function apply(root: string, o: Op): void {
  const at = (p: string): string => join(root, p);
  const parent = (p: string): void => void mkdirSync(dirname(at(p)), { recursive: true });
  try {
    switch (o.op) {
      case 'write':
        parent(o.path);
        rmSync(at(o.path), { recursive: true, force: true });
        writeFileSync(at(o.path), o.content);
        chmodSync(at(o.path), o.mode);
        break;
      case 'delete':
        rmSync(at(o.path), { force: true });
        break;
      case 'chmod':
        chmodSync(at(o.path), o.mode);
        break;
      case 'link':
        parent(o.path);
        rmSync(at(o.path), { recursive: true, force: true });
        symlinkSync(o.target, at(o.path));
        break;
      case 'rename':
        parent(o.to);
        renameSync(at(o.from), at(o.to));
        break;
      case 'moveDir':
        if (o.to.startsWith(`${o.from}/`)) return;
        rmSync(at(o.to), { recursive: true, force: true });
        parent(o.to);
        renameSync(at(o.from), at(o.to));
        break;
      case 'rmdir':
        rmSync(at(o.dir), { recursive: true, force: true });
        break;
      case 'fileToDir':
        rmSync(at(o.path), { recursive: true, force: true });
        mkdirSync(at(o.path), { recursive: true });
        writeFileSync(join(at(o.path), 'inner.txt'), 'inner');
        break;
      case 'rules':
        if (o.dir) parent(`${o.dir}/.gitignore`);
        writeFileSync(at(o.dir ? `${o.dir}/.gitignore` : '.gitignore'), o.text);
        break;
      case 'captureSettle':
        break; // done through the sessions (below)
    }
  } catch {}
}

const RUNS = Number(process.env.WATCHED_RUNS ?? 15);

const shape = (r: ScanResult): unknown => ({
  recorded: r.tag !== null,
  files: r.files.map((f) => ({ path: f.path, change: f.change, state: f.state, blob: f.blob, mode: f.mode, target: f.target, bytes: f.bytes })),
});

describe('watched scan', () => {
  it('records exactly what a full scan records', async () => {
    let watchedRounds = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(opArb, { minLength: 1, maxLength: 5 }), { minLength: 2, maxLength: 5 }), async (rounds) => {
        const dirs = await makeTempDirs('ckpt-watched-');
        const store = await openStore({ dir: dirs.store });
        const rootA = join(dirs.base, 'a');
        const rootB = join(dirs.base, 'b');
        await mkdir(rootA);
        await mkdir(rootB);
        const roots = [rootA, rootB];
        for (const r of roots) {
          apply(r, { op: 'rules', text: '*.log\n' });
          apply(r, { op: 'write', path: 'a.txt', content: 'start', mode: 0o644 });
          apply(r, { op: 'write', path: 'd/c.txt', content: 'start', mode: 0o644 });
        }
        const wsA = await store.openWorkspace(rootA);
        const wsB = await store.openWorkspace(rootB);
        const [sA, sB] = [await wsA.create(), await wsB.create()];
        const tracker = createTouchTracker({ root: wsA.root, storeDir: store.dir });
        try {
          for (const ops of [[], ...rounds]) {
            for (const o of ops) {
              if (o.op === 'captureSettle') {
                for (const [s, r] of [[sA, rootA], [sB, rootB]] as const) {
                  const ok = await s.capture([o.path]).then(() => true, () => false);
                  apply(r, { op: 'write', path: o.path, content: o.content, mode: 0o644 });
                  if (ok) await s.settle([o.path]).catch(() => {});
                }
              } else for (const r of roots) apply(r, o);
            }
            const a = await sA.scan({ changedPaths: () => tracker.take() });
            const b = await sB.scan();
            if (a.watched !== undefined) watchedRounds++;
            expect(shape(a), JSON.stringify(ops)).toEqual(shape(b));
          }
        } finally {
          tracker.close();
          // Closed first: its after-call queue (a capture's blob copy) may still be writing in blobs/,
          // and the removal failed ENOTEMPTY under load.
          await store.close();
          await rm(dirs.base, { recursive: true, force: true });
        }
      }),
      {
        numRuns: RUNS,
        examples: [
          // An ignored file a tool captured by name (so ckpt knows it), then deleted: the full scan
          // records the deletion, so the watched scan must too.
          [[[{ op: 'captureSettle', path: 'x.log', content: '' }], [{ op: 'delete', path: 'x.log' }]]],
          // A folder removed and made again (often with the same inode number): its new content is watched.
          [[[{ op: 'rmdir', dir: 'd' }, { op: 'rename', from: 'a.txt', to: 'd/e/f.txt' }], [{ op: 'write', path: 'd/c.txt', content: '', mode: 0o644 }]]],
          // A folder moved away and one made under its name: the moved folder's old paths are deleted.
          [[[{ op: 'moveDir', from: 'd', to: 'k' }, { op: 'write', path: 'd/c.txt', content: '', mode: 0o644 }], [{ op: 'write', path: 'd/e/f.txt', content: '', mode: 0o644 }]]],
          // A rule file its own rules ignore, edited: it still applies (as git reads it), so the edit is seen.
          [[[{ op: 'rules', text: '*\n', dir: 'd' }], [{ op: 'rules', text: '*\n!c.txt\n', dir: 'd' }]]],
        ],
      },
    );
    expect(watchedRounds).toBeGreaterThan(5);
  }, Math.max(120_000, RUNS * 200));
});

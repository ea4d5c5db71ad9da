// Watched scans on real history (issue 13 item 5, with the fixture of ../shared/fixtures): two work
// trees of the fixture bundle (real Git-project trees: renames, symlinks, mode flips, folders that
// come and go) are moved commit by commit with `git checkout`; after each move one is scanned through
// its touch tracker, the other with the full scan. The recorded changes must be the same, and the
// watched side must really have used the watcher on the commits that touch no folder.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createTouchTracker } from '../src/daemon/touch-tracker.js';
import type { ScanResult } from '../src/scan/index.js';
import { openStore } from '../src/store.js';
import { makeTempDirs } from './helpers/temp.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUNDLE = [join(REPO_ROOT, '..', 'shared', 'fixtures', 'history.bundle'), '/work/shared/fixtures/history.bundle'].find((p) => existsSync(p));
const ALL = process.env.CKPT_HISTORY_ALL === '1';
const COMMITS = ALL ? Array.from({ length: 28 }, (_, i) => i + 1) : [1, 2, 3, 4, 5, 6];
const tagOf = (n: number): string => `c${String(n).padStart(2, '0')}`;
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (cwd: string, args: string[]): void => void execFileSync('git', args, { cwd, env: GIT_ENV, stdio: 'ignore' });

const shape = (r: ScanResult): unknown => ({
  recorded: r.tag !== null,
  files: r.files.map((f) => ({ path: f.path, change: f.change, state: f.state, blob: f.blob, mode: f.mode, target: f.target, bytes: f.bytes })),
});

describe.skipIf(!BUNDLE)('watched scan on real history', () => {
  it('records what a full scan records at every commit of the fixture', async () => {
    const dirs = await makeTempDirs('ckpt-watched-history-');
    try {
      const roots = [join(dirs.base, 'watched'), join(dirs.base, 'full')];
      for (const r of roots) {
        execFileSync('git', ['clone', '-q', '--no-checkout', BUNDLE!, r], { env: GIT_ENV, stdio: 'ignore' });
        git(r, ['checkout', '-q', tagOf(COMMITS[0]!)]);
      }
      const store = await openStore({ dir: dirs.store, retention: false });
      const [wsA, wsB] = [await store.openWorkspace(roots[0]!), await store.openWorkspace(roots[1]!)];
      const [sA, sB] = [await wsA.create(), await wsB.create()];
      await sA.scan();
      await sB.scan();
      const tracker = createTouchTracker({ root: wsA.root, storeDir: store.dir });
      let watched = 0;
      try {
        for (const n of COMMITS.slice(1)) {
          for (const r of roots) git(r, ['checkout', '-q', tagOf(n)]);
          const a = await sA.scan({ changedPaths: () => tracker.take() });
          const b = await sB.scan();
          if (a.watched !== undefined) watched++;
          expect(shape(a), `commit ${tagOf(n)}`).toEqual(shape(b));
        }
      } finally {
        tracker.close();
      }
      expect(watched).toBeGreaterThan(0);
    } finally {
      await dirs.cleanup();
    }
  }, 120_000);
});

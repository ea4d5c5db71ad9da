// The operations the reliability suites fail step by step (issue 16): for each, a setup that builds
// the state just before it through the library (fast, in this process) and the CLI command that runs
// it in a child process (so a kill is a real kill). The workspace holds files, a folder, an
// executable and a symlink, so restores create, delete, rewrite, chmod and relink.
import { chmodSync, mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, prune, type Session } from '../../src/index.js';

export interface ScenarioDirs {
  store: string;
  workspace: string;
}

export interface Scenario {
  name: string;
  setup(dirs: ScenarioDirs): Promise<void>;
  /** CLI arguments (after the global --store/--workspace/--json). */
  args: string[];
  /** A store invariant of this operation, checked after the next command: a failure, or undefined. */
  check?(dirs: ScenarioDirs): Promise<string | undefined>;
}

export const MAIN = 'main-session';
export const OTHER = 'other-session';

function seedWorkspace(ws: string): void {
  writeFileSync(join(ws, 'a.txt'), 'alpha\n');
  mkdirSync(join(ws, 'b/d'), { recursive: true });
  writeFileSync(join(ws, 'b/c.txt'), 'charlie\n');
  writeFileSync(join(ws, 'b/d/e.txt'), 'echo\n');
  writeFileSync(join(ws, 'run.sh'), '#!/bin/sh\necho run\n');
  chmodSync(join(ws, 'run.sh'), 0o755);
  symlinkSync('a.txt', join(ws, 'link'));
}

async function withSession<T>(dirs: ScenarioDirs, fn: (s: Session, open: (id: string, baseline?: boolean) => Promise<Session>) => Promise<T>, baseline = true): Promise<T> {
  const store = await openStore({ dir: dirs.store });
  try {
    const ws = await store.openWorkspace(dirs.workspace);
    const s = await ws.create({ id: MAIN, title: 'reliability', baseline });
    return await fn(s, (id, b = true) => ws.create({ id, baseline: b }));
  } finally {
    await store.close();
  }
}

/** Every session but MAIN is a fork whose log holds the capture recording the workspace at its fork point. */
async function forksHoldTheirRecord(dirs: ScenarioDirs): Promise<string | undefined> {
  const store = await openStore({ dir: dirs.store });
  try {
    const ws = await store.openWorkspace(dirs.workspace);
    for (const meta of await ws.list()) {
      if (meta.id === MAIN) continue;
      const events = await (await ws.get(meta.id)).events();
      if (!events.some((e) => e.type === 'capture' && e.tool === 'fork')) return `fork ${meta.id} exists without its fork-point record (${events.length} events)`;
    }
    return undefined;
  } finally {
    await store.close();
  }
}

/** Turn 1 changes every kind of thing, captured and settled: restoring to 1 undoes all of it. */
async function historyOfChanges(s: Session, ws: string): Promise<void> {
  await s.turn({ text: 'change things' });
  const paths = ['a.txt', 'b/c.txt', 'n.txt', 'run.sh', 'link', 'z/w.txt'];
  await s.capture(paths, { tool: 'Edit' });
  writeFileSync(join(ws, 'a.txt'), 'alpha two\n');
  unlinkSync(join(ws, 'b/c.txt'));
  writeFileSync(join(ws, 'n.txt'), 'new\n');
  chmodSync(join(ws, 'run.sh'), 0o644);
  unlinkSync(join(ws, 'link'));
  symlinkSync('b/c.txt', join(ws, 'link'));
  mkdirSync(join(ws, 'z'));
  writeFileSync(join(ws, 'z/w.txt'), 'w\n');
  await s.settle(paths);
  await s.turn({ text: 'more' });
  await s.capture(['b/d/e.txt'], { tool: 'Write' });
  writeFileSync(join(ws, 'b/d/e.txt'), 'echo two\n');
  await s.settle(['b/d/e.txt']);
}

const restoreSetup = async (dirs: ScenarioDirs): Promise<void> => {
  seedWorkspace(dirs.workspace);
  await withSession(dirs, (s) => historyOfChanges(s, dirs.workspace));
};

export const SCENARIOS: Scenario[] = [
  {
    name: 'capture',
    setup: async (dirs) => {
      seedWorkspace(dirs.workspace);
      await withSession(dirs, async (s) => {
        await s.turn({ text: 'go' });
      });
      // Well after the turn's event on the file clock (a coarse one: a few ms), so that the same paths
      // are looked at in every run (the absent new/x.txt too: its nearest folder changed since).
      await new Promise((r) => setTimeout(r, 30));
      // Changed since the turn began, a path only the baseline knew: looked at first, recorded as
      // the user's by a scan of that path (DESIGN "Hand edits during a turn").
      writeFileSync(join(dirs.workspace, 'a.txt'), 'alpha, edited outside ckpt\n');
      // New to ckpt: content the store does not hold, so the capture carries it inline and copies
      // it to the blob store after its commit (DESIGN §10 "Inline before-images").
      writeFileSync(join(dirs.workspace, 'made-outside.txt'), 'made outside ckpt\n');
    },
    args: ['capture', '--tool', 'Edit', 'a.txt', 'made-outside.txt', 'b/c.txt', 'new/x.txt', 'link'],
  },
  {
    name: 'settle',
    setup: async (dirs) => {
      seedWorkspace(dirs.workspace);
      await withSession(dirs, async (s) => {
        await s.turn({ text: 'go' });
        await s.capture(['a.txt', 'b/new.txt'], { tool: 'Edit' });
      });
      writeFileSync(join(dirs.workspace, 'a.txt'), 'alpha edited\n');
      writeFileSync(join(dirs.workspace, 'b/new.txt'), 'brand new\n');
    },
    args: ['settle', 'a.txt', 'b/new.txt'],
  },
  {
    name: 'scan-baseline',
    setup: async (dirs) => {
      seedWorkspace(dirs.workspace);
      await withSession(dirs, async () => {}, false);
    },
    args: ['scan'],
  },
  {
    name: 'scan-incremental',
    setup: async (dirs) => {
      seedWorkspace(dirs.workspace);
      await withSession(dirs, async (s) => {
        await s.turn({ text: 'shell' });
      });
      const ws = dirs.workspace;
      writeFileSync(join(ws, 'a.txt'), 'alpha by shell\n');
      unlinkSync(join(ws, 'b/c.txt'));
      writeFileSync(join(ws, 'made.txt'), 'made\n');
      chmodSync(join(ws, 'run.sh'), 0o700);
      mkdirSync(join(ws, 'x'));
      writeFileSync(join(ws, 'x/y.txt'), 'y\n');
      unlinkSync(join(ws, 'link'));
      symlinkSync('run.sh', join(ws, 'link'));
      rmSync(join(ws, 'b/d'), { recursive: true });
    },
    args: ['scan', '--tool', 'Bash'],
  },
  { name: 'restore', setup: restoreSetup, args: ['restore', '1', '--yes'] },
  {
    // Hand edits after the last record, no prompt since: the restore's look records them (the user's
    // capture before the recovery capture, owner records of what it leaves) and puts them back.
    name: 'restore-look',
    setup: async (dirs) => {
      await restoreSetup(dirs);
      writeFileSync(join(dirs.workspace, 'a.txt'), 'alpha, by hand\n');
      writeFileSync(join(dirs.workspace, 'hand.txt'), 'new by hand\n');
    },
    args: ['restore', '1', '--yes', '--force'],
  },
  {
    // 70 paths: the recovery capture goes into a pack and the plan into a blob (DESIGN §10 Restore speed, journal).
    name: 'restore-large',
    setup: async (dirs) => {
      seedWorkspace(dirs.workspace);
      mkdirSync(join(dirs.workspace, 'big'));
      const paths = Array.from({ length: 70 }, (_, i) => `big/f${i}.txt`);
      for (const p of paths) writeFileSync(join(dirs.workspace, p), `${p} one\n`);
      await withSession(dirs, async (s) => {
        await s.turn({ text: 'rewrite all' });
        await s.capture(paths, { tool: 'Bash' });
        for (const p of paths) writeFileSync(join(dirs.workspace, p), `${p} two\n`);
        await s.settle(paths);
      });
    },
    args: ['restore', '1', '--yes'],
  },
  { name: 'undo', setup: restoreSetup, args: ['undo', '1', 'a.txt'] },
  { name: 'rewind', setup: restoreSetup, args: ['rewind', '2', '--yes'] },
  // A fork is made with its fork-point record or not at all (a fork without it believes the workspace is at its fork point).
  { name: 'fork', setup: restoreSetup, args: ['session', 'fork', MAIN, '--at', '2', '--title', 'forked'], check: forksHoldTheirRecord },
  { name: 'prune', setup: restoreSetup, args: ['prune', '--keep-turns', '1'] },
  {
    name: 'gc',
    setup: async (dirs) => {
      seedWorkspace(dirs.workspace);
      const ws = dirs.workspace;
      await withSession(dirs, async (s, open) => {
        await historyOfChanges(s, ws);
        // g.txt goes through v1..v3 in turns 3 and 4: once those retire, v1 and v2 are garbage.
        writeFileSync(join(ws, 'g.txt'), 'g v1\n');
        for (const v of ['v2', 'v3']) {
          await s.turn({ text: v });
          await s.capture(['g.txt'], { tool: 'Edit' });
          writeFileSync(join(ws, 'g.txt'), `g ${v}\n`);
          await s.settle(['g.txt']);
        }
        await s.turn({ text: 'last' });
        await prune(s, { keepTurns: 1 });
        const other = await open(OTHER, false);
        writeFileSync(join(ws, 'o.txt'), 'only the other session saw this\n');
        await other.capture(['o.txt'], { tool: 'Edit' });
        writeFileSync(join(ws, 'o.txt'), 'changed\n');
      });
      // Garbage: what only the pruned turn referenced; plus the other session's capture once removed.
      const store = await openStore({ dir: dirs.store });
      try {
        await (await store.openWorkspace(dirs.workspace)).remove(OTHER);
      } finally {
        await store.close();
      }
    },
    args: ['gc', '--grace', '0s'],
  },
  {
    // A pack with live and dead blobs: GC rewrites it (pack-rewrite.ts) instead of sweeping loose blobs.
    name: 'gc-repack',
    setup: async (dirs) => {
      const ws = dirs.workspace;
      mkdirSync(join(ws, 'p'));
      const paths = Array.from({ length: 70 }, (_, i) => `p/f${i}.txt`);
      for (const p of paths) writeFileSync(join(ws, p), `${p} one\n`);
      await withSession(dirs, async (s) => {
        await s.turn({ text: 'rewrite half' });
        for (const p of paths.slice(0, 35)) writeFileSync(join(ws, p), `${p} two\n`);
        await s.scan({ tool: 'Bash' });
        await s.turn({ text: 'last' });
        await prune(s, { keepTurns: 1 });
      });
    },
    args: ['gc', '--grace', '0s'],
  },
  {
    name: 'session-rm',
    setup: async (dirs) => {
      seedWorkspace(dirs.workspace);
      await withSession(dirs, async (s, open) => {
        await historyOfChanges(s, dirs.workspace);
        const other = await open(OTHER, false);
        await other.turn({ text: 'other' });
        await other.capture(['a.txt', 'run.sh'], { tool: 'Edit' });
      });
    },
    args: ['session', 'rm', OTHER],
  },
];

/** The scenarios to run: all, or those CKPT_RELIABILITY_ONLY names (comma-separated), or all but CKPT_RELIABILITY_SKIP's. */
export function selectedScenarios(env: NodeJS.ProcessEnv = process.env): Scenario[] {
  const only = env.CKPT_RELIABILITY_ONLY?.split(',');
  const skip = env.CKPT_RELIABILITY_SKIP?.split(',') ?? [];
  return SCENARIOS.filter((s) => (!only || only.includes(s.name)) && !skip.includes(s.name));
}

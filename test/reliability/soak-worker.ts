// One soak process (issue 16, item 4): until its deadline it picks operations at random — capture and
// settle around an edit, scan after shell-like edits, turn, restore, undo, rewind (in place or as a
// fork), fork, prune, gc, session removal — on one store and one of two workspaces, editing files
// between operations, sometimes as a fresh process state (a new store handle, as a hook process).
// Every outcome is counted by operation and error code; an error outside the legitimate ones is kept
// with its message. Prints one JSON summary line at the end. Run: node --import tsx soak-worker.ts JSON.
import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isCkptError, openStore, prune, runGc, type Session, type Store, type Workspace } from '../../src/index.js';

export interface WorkerArgs {
  store: string;
  workspaces: string[];
  seconds: number;
  seed: number;
  worker: number;
  /** GC grace: nothing younger is collected (the real default is 15 min; shorter to make GC act). */
  gcGraceMs: number;
}

export interface WorkerSummary {
  worker: number;
  seed: number;
  ops: Record<string, number>;
  errors: Record<string, number>;
  /** What the operations did: blobs GC deleted, paths restored, sessions removed. */
  effects: Record<string, number>;
  unexpected: string[];
}

/**
 * Codes that concurrency makes legitimate (DESIGN §5, §7): a lock not acquired in time, a restore
 * refused over drift or another session's write, a tag pruned or a session removed by another
 * process meanwhile, a tag that a concurrent rewind or prune made unrestorable.
 */
export const LEGITIMATE = new Set(['LOCKED', 'DRIFT', 'CONFLICT', 'TAG_PRUNED', 'TAG_NOT_FOUND', 'SESSION_NOT_FOUND', 'NOT_FOUND']);

const FILES = [...Array.from({ length: 12 }, (_, i) => `f${i}.txt`), ...Array.from({ length: 12 }, (_, i) => `d${i % 3}/g${i}.txt`), 'deep/a/b/c.txt'];

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function main(args: WorkerArgs): Promise<WorkerSummary> {
  const random = rng(args.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const summary: WorkerSummary = { worker: args.worker, seed: args.seed, ops: {}, errors: {}, effects: {}, unexpected: [] };
  const effect = (k: string, n: number): void => void (summary.effects[k] = (summary.effects[k] ?? 0) + n);
  const deadline = Date.now() + args.seconds * 1000;
  let store: Store | undefined;

  async function edit(root: string, path: string): Promise<void> {
    const abs = join(root, path);
    const r = random();
    try {
      if (r < 0.15) await rm(abs, { force: true });
      else if (r < 0.3) await appendFile(abs, `more ${args.worker} ${Date.now()}\n`);
      else {
        await mkdir(join(abs, '..'), { recursive: true });
        await writeFile(abs, `written by ${args.worker} at ${Date.now()} ${random()}\n`.repeat(1 + Math.floor(random() * 20)));
      }
    } catch {
      // Another process removed a folder on the way or restored over it: a shell would fail as well.
    }
  }

  async function session(ws: Workspace): Promise<Session> {
    const list = await ws.list();
    if (list.length === 0 || random() < 0.05) return ws.create({ title: `soak ${args.worker}` });
    return ws.get(pick(list).id);
  }

  const OPS: [string, number, (ws: Workspace) => Promise<unknown>][] = [
    ['capture', 30, async (ws) => {
      const s = await session(ws);
      const paths = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(FILES));
      await s.capture(paths, { tool: 'Edit' });
      for (const p of paths) await edit(ws.root, p);
      await s.settle(paths);
    }],
    ['scan', 15, async (ws) => {
      const s = await session(ws);
      for (let i = Math.floor(random() * 4); i >= 0; i--) await edit(ws.root, pick(FILES));
      await s.scan({ tool: 'Bash' });
    }],
    ['turn', 8, async (ws) => (await session(ws)).turn({ text: `turn by ${args.worker}` })],
    ['restore', 10, async (ws) => {
      const s = await session(ws);
      const cps = await s.checkpoints();
      if (cps.length === 0) return;
      const r = await s.restore(pick(cps).tag, { force: random() < 0.5 });
      effect('paths-restored', r.restored.length + r.deleted.length);
    }],
    ['undo', 6, async (ws) => {
      const s = await session(ws);
      const cps = (await s.checkpoints()).filter((c) => c.files.length > 0);
      if (cps.length === 0) return;
      const cp = pick(cps);
      await s.undo(cp.tag, pick(cp.files).path, { force: random() < 0.5 });
    }],
    ['rewind', 4, async (ws) => {
      const s = await session(ws);
      const turns = [...new Set((await s.checkpoints()).map((c) => c.turn))];
      if (turns.length === 0) return;
      await s.rewind(String(pick(turns)), { fork: random() < 0.5, force: random() < 0.5 });
    }],
    ['fork', 4, async (ws) => {
      const s = await session(ws);
      // At a tool's capture (a position inside a restore is refused by design: INVALID_ARGUMENT).
      const cps = (await s.checkpoints()).filter((c) => c.restoreTo === undefined && c.tool !== 'restore');
      await ws.fork(s.id, cps.length > 0 ? { atSeq: pick(cps).seq } : {});
    }],
    ['prune', 4, async (ws) => {
      if ((await prune(await session(ws), { keepTurns: 1 + Math.floor(random() * 3) })).pruned) effect('sessions-pruned', 1);
    }],
    ['gc', 2, async () => {
      const { result } = await runGc(store!.ctx, { graceMs: args.gcGraceMs });
      effect('gc-blobs-deleted', result.deleted);
      effect('gc-packs-rewritten', result.packsRewritten);
    }],
    ['remove', 2, async (ws) => {
      const list = await ws.list();
      if (list.length > 2) {
        await ws.remove(pick(list).id);
        effect('sessions-removed', 1);
      }
    }],
  ];
  const total = OPS.reduce((n, [, w]) => n + w, 0);

  while (Date.now() < deadline) {
    let r = random() * total;
    const [name, , run] = OPS.find(([, w]) => (r -= w) < 0) ?? OPS[0]!;
    summary.ops[name] = (summary.ops[name] ?? 0) + 1;
    try {
      if (!store || random() < 0.3) store = await openStore({ dir: args.store, retention: false });
      const ws = await store.openWorkspace(pick(args.workspaces));
      await run(ws);
    } catch (err) {
      const code = isCkptError(err) ? err.code : `not-a-CkptError(${(err as Error)?.name})`;
      summary.errors[`${name}.${code}`] = (summary.errors[`${name}.${code}`] ?? 0) + 1;
      if (!isCkptError(err) || !LEGITIMATE.has(err.code)) {
        summary.unexpected.push(`${name}: ${code}: ${(err as Error)?.stack ?? String(err)}`.slice(0, 2000));
      }
    }
  }
  return summary;
}

const args = JSON.parse(process.argv[2]!) as WorkerArgs;
main(args).then(
  (summary) => process.stdout.write(`${JSON.stringify(summary)}\n`),
  (err: unknown) => {
    process.stderr.write(`soak worker ${args.worker} crashed: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);

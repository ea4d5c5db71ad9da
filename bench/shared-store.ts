// `npm run bench:shared -- --store URL` (issue 17): the same operations on a local folder store and on
// a shared store (PostgreSQL + S3, e.g. the loopback servers of scripts/start-*.sh), and the
// overhead of the shared driver: capture-one (a durable capture of one new 16 KiB file), restore-N
// (N changed files back to a tag; --files, default 1000), open-session (a fresh store object opens
// the workspace and a session of --events events and reads it). Medians of --runs runs.
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openStore, type Store } from '../src/index.js';

function arg(name: string, fallback: string | undefined): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const url = arg('store', process.env.CKPT_BENCH_STORE);
if (!url) {
  process.stderr.write('usage: npm run bench:shared -- --store postgres://…?blobs=s3://…&endpoint=… [--files N] [--runs N] [--events N]\n');
  process.exit(2);
}
const files = Number(arg('files', '1000'));
const runs = Number(arg('runs', '9'));
const events = Number(arg('events', '2000'));
const log = (m: string): void => void process.stderr.write(`[bench:shared] ${m}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const text = (seed: number, size: number): string => {
  let s = '';
  for (let i = 0; s.length < size; i++) s += `// line ${seed}:${i} ${'x'.repeat(i % 50)}\n`;
  return s.slice(0, size);
};

interface Figures {
  captureOne: number;
  restoreN: number;
  openSession: number;
}

async function measure(kind: string, location: string, root: string): Promise<Figures> {
  process.env.CKPT_RETENTION = 'off';
  const store: Store = await openStore({ dir: location });
  try {
    const ws = await store.openWorkspace(root);
    const session = await ws.create({ title: `bench ${kind}` });
    await session.turn({});
    // capture-one (one warm-up run first)
    const cap: number[] = [];
    for (let i = 0; i <= runs; i++) {
      await fsp.writeFile(path.join(root, 'one.ts'), text(1_000 + i, 16 * 1024));
      const t0 = performance.now();
      await session.capture(['one.ts'], { tool: 'Edit' });
      if (i > 0) cap.push(performance.now() - t0);
      await fsp.writeFile(path.join(root, 'one.ts'), text(2_000 + i, 16 * 1024));
      await session.settle(['one.ts']);
    }
    // restore-N: each run changes every file under a capture, then restores them to the tag before
    const names = Array.from({ length: files }, (_, i) => `r/f${i}.ts`);
    await fsp.mkdir(path.join(root, 'r'), { recursive: true });
    await Promise.all(names.map((n, i) => fsp.writeFile(path.join(root, n), text(i, 2048))));
    await session.scan();
    const rest: number[] = [];
    const restoreRuns = Math.max(3, Math.ceil(runs / 3));
    for (let k = 0; k <= restoreRuns; k++) {
      const { tag } = await session.turn({});
      await session.capture(names, { tool: 'Bulk' });
      await Promise.all(names.map((n, i) => fsp.writeFile(path.join(root, n), text(100_000 * (k + 1) + i, 2048))));
      await session.settle(names);
      const t0 = performance.now();
      const r = await session.restore(tag, { force: true });
      if (k > 0) rest.push(performance.now() - t0);
      if (r.restored.length !== files) throw new Error(`restore brought back ${r.restored.length} of ${files} files`);
    }
    // open-session: a session of `events` agent events, opened and read by a fresh store object
    const long = await ws.create({ title: 'long' });
    const batch = 200;
    for (let i = 0; i < events; i += batch) {
      await long.append(Array.from({ length: Math.min(batch, events - i) }, (_, j) => ({ type: 'message', text: `event ${i + j}` })));
    }
    const open: number[] = [];
    for (let i = 0; i <= runs; i++) {
      const t0 = performance.now();
      const fresh = await openStore({ dir: location });
      const s = await (await fresh.openWorkspace(root)).get(long.id);
      const n = (await s.events()).length;
      if (i > 0) open.push(performance.now() - t0);
      await fresh.close();
      if (n !== events + 1) throw new Error(`read ${n} events, expected ${events + 1}`);
    }
    return { captureOne: median(cap), restoreN: median(rest), openSession: median(open) };
  } finally {
    await store.close();
  }
}

const base = await fsp.mkdtemp(path.join(tmpdir(), 'ckpt-bench-shared-'));
try {
  const roots = { local: path.join(base, 'ws-local'), shared: path.join(base, 'ws-shared') };
  await fsp.mkdir(roots.local);
  await fsp.mkdir(roots.shared);
  log(`local store ${path.join(base, 'store')}`);
  const local = await measure('local', path.join(base, 'store'), roots.local);
  log('shared store');
  const shared = await measure('shared', url, roots.shared);
  const row = (name: string, l: number, s: number) => ({ figure: name, local_ms: +l.toFixed(2), shared_ms: +s.toFixed(2), ratio: +(s / l).toFixed(2) });
  const rows = [
    row('capture-one', local.captureOne, shared.captureOne),
    row(`restore-${files}`, local.restoreN, shared.restoreN),
    row(`open-session (${events} events)`, local.openSession, shared.openSession),
  ];
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ runs, files, events, rows }, null, 2)}\n`);
  else {
    process.stdout.write('| figure | local (ms) | shared (ms) | shared / local |\n|---|---|---|---|\n');
    for (const r of rows) process.stdout.write(`| ${r.figure} | ${r.local_ms} | ${r.shared_ms} | ${r.ratio}x |\n`);
  }
} finally {
  await fsp.rm(base, { recursive: true, force: true });
}

// A retention + GC scenario on the benchmark tree (`npm run bench:gc`): a first scan, then N turns of
// agent edits (capture → write → settle) and shell effects (rewrites, creations, deletions → scan),
// then GC before and after pruning to the last K turns, and after removing the session. Prints the
// store's bytes on disk at each step (allocated blocks), so the effect of retention and GC is visible.
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { diskUsage } from './baselines/disk-usage.js';
import { createPrng } from './gen/prng.js';
import { ensureTree } from './gen/tree.js';
import { openStore, prune, runGc } from '../src/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const files = arg('files', 20_000);
const turns = arg('turns', 50);
const keepTurns = arg('keep-turns', 10);
const log = (m: string) => process.stderr.write(`[gc] ${m}\n`);

const { tree } = await ensureTree({ files, seed: 1 }, tmpdir(), log);
const run = await fsp.mkdtemp(path.join(tmpdir(), 'ckpt-gc-scenario-'));
const root = path.join(run, 'ws');
try {
  log(`copying the tree to ${root}`);
  await fsp.cp(tree.root, root, { recursive: true });
  const storeDir = path.join(run, 'store');
  const store = await openStore({ dir: storeDir, retention: false });
  const ws = await store.openWorkspace(root);
  const session = await ws.create({ title: 'gc scenario' });
  const rows: { step: string; bytes: number; detail?: string }[] = [];
  const measure = async (step: string, detail?: string) => {
    const bytes = (await diskUsage(storeDir)).allocated;
    rows.push({ step, bytes, detail });
    log(`${step}: ${(bytes / 1e6).toFixed(1)} MB${detail ? ` (${detail})` : ''}`);
  };

  await session.scan({ tool: 'baseline' });
  await measure('after first scan');
  const rng = createPrng(7);
  const pick = () => tree.relPath(Math.floor(rng.next() * files));
  for (let t = 1; t <= turns; t++) {
    await session.turn({ messageCount: t * 2 });
    for (let k = 0; k < 20; k++) {
      const rel = pick();
      await session.capture([rel], { tool: 'Edit' });
      const text = await fsp.readFile(path.join(root, rel), 'utf8');
      await fsp.writeFile(path.join(root, rel), `${text.slice(0, text.length >> 1)}// edit ${t}.${k}\n${text.slice(text.length >> 1)}`);
      await session.settle([rel]);
    }
    for (let k = 0; k < 50; k++) {
      const rel = pick();
      await fsp.appendFile(path.join(root, rel), `// formatter pass ${t}\n`);
    }
    await fsp.writeFile(path.join(root, `generated-${t}.ts`), `export const build = ${t};\n`.repeat(200));
    if (t > 1) await fsp.rm(path.join(root, `generated-${t - 1}.ts`));
    await session.scan({ tool: 'Bash' });
  }
  await measure(`after ${turns} turns`, `${(await session.checkpoints()).length} checkpoints`);
  const gc1 = (await runGc(store.ctx, { graceMs: 0 })).result;
  await measure('gc with everything live', `${gc1.deleted} blobs deleted`);
  const pruned = await prune(session, { keepTurns });
  const gc2 = (await runGc(store.ctx, { graceMs: 0 })).result;
  await measure(`prune --keep-turns ${keepTurns}, then gc`, `${gc2.deleted} blobs deleted, ${(gc2.bytesFreed / 1e6).toFixed(1)} MB freed; prune ${JSON.stringify(pruned)}`);
  await ws.remove(session.id);
  const gc3 = (await runGc(store.ctx, { graceMs: 0 })).result;
  await measure('session removed, then gc', `${gc3.deleted} blobs deleted (the workspace scan baseline stays live)`);
  const shadow = (await diskUsage(root)).apparent;
  process.stdout.write(`${JSON.stringify({ files, turns, keepTurns, workspace_bytes: shadow, steps: rows }, null, 2)}\n`);
} finally {
  await fsp.rm(run, { recursive: true, force: true });
}

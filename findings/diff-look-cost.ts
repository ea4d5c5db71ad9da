// One measurement of what the read-only look costs `diff 1` on a 20,000-file tree (DESIGN §10 "diff
// looks too"): the whole diff, the look alone and a restore's dry run (its own look), after a one-file tool change and one hand edit.
// Run: npx tsx findings/diff-look-cost.ts   (machine shared: one run, medians of 5).
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/index.js';
import { diffLook } from '../src/history/diff-look.js';
import { workspaceTimeline } from '../src/session/workspace-timeline.js';
import { capture } from '../src/capture/capture.js';
import { settle } from '../src/capture/settle.js';
import type { SessionHandle } from '../src/session/session-handle.js';

const base = await mkdtemp(join(tmpdir(), 'ckpt-diff-cost-'));
const ws = join(base, 'ws');
for (let d = 0; d < 200; d++) {
  await mkdir(join(ws, `d${d}`), { recursive: true });
  for (let f = 0; f < 100; f++) await writeFile(join(ws, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`.repeat(20));
}
const store = await openStore({ dir: join(base, 'store') });
const w = await store.openWorkspace(ws);
const s = await w.create({ title: 'cost' });
await new Promise((r) => setTimeout(r, 2_500)); // past the racy window of the baseline
await s.turn();
const h = s as unknown as SessionHandle;
await capture(h, ['d0/f0.txt'], { tool: 'Write' });
await writeFile(join(ws, 'd0/f0.txt'), 'by the agent\n');
await settle(h, ['d0/f0.txt'], {});
await writeFile(join(ws, 'd1/f1.txt'), 'by hand\n');
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const diffMs: number[] = [];
const lookMs: number[] = [];
const dryMs: number[] = [];
let shown = 0;
for (let i = 0; i < 5; i++) {
  let t = performance.now();
  shown = (await s.diff('1')).changes.length;
  diffMs.push(performance.now() - t);
  const events = await s.events();
  const timeline = await workspaceTimeline(h, events);
  t = performance.now();
  await diffLook(h, events, timeline, '1');
  lookMs.push(performance.now() - t);
  t = performance.now();
  await s.restore('1', { dryRun: true }); // the restore's own look, for comparison
  dryMs.push(performance.now() - t);
}
console.log(JSON.stringify({ files: 20_000, changesShown: shown, diffMedianMs: Math.round(median(diffMs)), lookMedianMs: Math.round(median(lookMs)), diffMs: diffMs.map(Math.round), lookMs: lookMs.map(Math.round), dryRunMedianMs: Math.round(median(dryMs)) }));
await store.close();
await rm(base, { recursive: true, force: true });

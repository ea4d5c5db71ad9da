// Web timeline figure (issue 14): page weight (HTML+JS+CSS bytes served) and load time in Debian's
// Chromium of a 10,000-event session — from opening the login address to the newest turn rendered.
// Run: npx tsx bench/web-timeline.ts [events]   (needs /usr/bin/chromium)
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startDaemon } from '../src/http/daemon.js';
import { openStore } from '../src/store.js';

const events = Number(process.argv[2] ?? 10_000);
const base = await mkdtemp(join(tmpdir(), 'ckpt-web-bench-'));
const ws = join(base, 'ws');
await mkdir(ws);
const store = await openStore({ dir: join(base, 'store'), retention: false });
const s = await (await store.openWorkspace(ws)).create({ id: 'big', title: `${events} events` });
// Each round: a turn, a capture, a settle — three events.
for (let i = 0; (i + 1) * 3 <= events - 1; i++) {
  await s.turn({ text: `prompt ${i}` });
  await writeFile(join(ws, `f${i % 50}.txt`), `v${i}\n`);
  await s.capture([`f${i % 50}.txt`], { tool: 'Edit' });
  await writeFile(join(ws, `f${i % 50}.txt`), `v${i + 1}\n`);
  await s.settle([`f${i % 50}.txt`]);
}
const daemon = await startDaemon({ store, version: 'bench' });
const code = await (await fetch(`${daemon.url}/web/code`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}` } })).json() as { code: string };
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage();
let bytes = 0; // the page's own files: `/` and `/web/*`
page.on('response', async (r) => {
  if (/\/(web\/.*|)$/.test(new URL(r.url()).pathname) && r.status() === 200) bytes += (await r.body()).length;
});
const total = (await s.events()).length;
const t0 = performance.now();
await page.goto(`${daemon.url}/login?code=${code.code}`);
await page.locator('.prompt', { hasText: /prompt \d+$/ }).last().waitFor();
const ms = performance.now() - t0;
const rendered = await page.locator('#timeline .ev').count();
console.log(JSON.stringify({ events: total, pageBytes: bytes, loadMs: Math.round(ms), renderedRows: rendered }));
await browser.close();
await daemon.close();
await rm(base, { recursive: true, force: true });

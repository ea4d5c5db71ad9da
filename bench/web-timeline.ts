// Web timeline figure (issue 14): what the page costs on a big session, in Debian's Chromium — bytes
// transferred (gzip as served) for the first render, split into the page's own files and API JSON;
// time from opening the login address to the newest turn rendered; the same for the oldest page and
// for a first diff (which loads the highlighter). Run after `npm run build` (the highlighter is
// bundled there): npx tsx bench/web-timeline.ts [events]   (needs /usr/bin/chromium)
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { startDaemon } from '../src/http/daemon.js';
import { openStore } from '../src/store.js';

const events = Number(process.argv[2] ?? 10_000);
// CKPT_WEB_BENCH_DIR=<dir> keeps the made session there and reuses it on the next run (making
// 10,000 events with real captures takes minutes).
const keep = process.env.CKPT_WEB_BENCH_DIR;
const base = keep ?? (await mkdtemp(join(tmpdir(), 'ckpt-web-bench-')));
const ws = join(base, 'ws');
const reuse = keep !== undefined && existsSync(ws);
await mkdir(ws, { recursive: true });
const store = await openStore({ dir: join(base, 'store'), retention: false });
const workspace = await store.openWorkspace(ws);
const s = reuse ? await workspace.get('big') : await workspace.create({ id: 'big', title: `${events} events` });
// Each round: a turn, a capture, a settle — three events.
const tBuild = performance.now();
for (let i = 0; !reuse && (i + 1) * 3 <= events - 1; i++) {
  await s.turn({ text: `prompt ${i}` });
  await writeFile(join(ws, `f${i % 50}.ts`), `export const v = ${i};\n`);
  await s.capture([`f${i % 50}.ts`], { tool: 'Edit' });
  await writeFile(join(ws, `f${i % 50}.ts`), `export const v = ${i + 1};\n`);
  await s.settle([`f${i % 50}.ts`]);
}
const buildMs = performance.now() - tBuild;
const daemon = await startDaemon({ store, version: 'bench' });
const code = await (await fetch(`${daemon.url}/web/code`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}` } })).json() as { code: string };
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const transferred = { page: 0, api: 0 };
const pending: Promise<void>[] = [];
page.on('requestfinished', (req) => {
  pending.push(req.sizes().then((z) => {
    const path = new URL(req.url()).pathname;
    if (path === '/events') return; // the live stream stays open
    transferred[path === '/' || path.startsWith('/web/') && !path.startsWith('/web/sessions') ? 'page' : 'api'] += z.responseBodySize + z.responseHeadersSize;
  }));
});
const total = (await s.events()).length;
const t0 = performance.now();
await page.goto(`${daemon.url}/login?code=${code.code}`);
await page.locator('.prompt', { hasText: /prompt \d+$/ }).last().waitFor();
const loadMs = performance.now() - t0;
await Promise.all(pending);
const firstRender = { ...transferred };
// The same newest page fetched again from the page, warm: the server's and the network's share.
const apiMs = await page.evaluate(async (ws) => {
  const t = performance.now();
  await (await fetch(`/sessions/big/events?${new URLSearchParams({ workspace: ws, tail: '1', limit: '500' })}`)).json();
  return performance.now() - t;
}, ws);
const rendered = await page.locator('#timeline .ev').count();
const domNodes = await page.evaluate(() => document.getElementsByTagName('*').length);

// The oldest page, then a first diff (the highlighter loads on it).
const t1 = performance.now();
for (let i = 0; i < 40 && await page.getByRole('button', { name: '← older' }).first().isEnabled(); i++) {
  const before = await page.locator('.pager .mute').first().textContent();
  await page.getByRole('button', { name: '← older' }).first().click();
  await page.locator('.pager .mute', { hasNotText: before! }).first().waitFor();
}
const olderMs = performance.now() - t1;
const pages = Number((await page.locator('.pager .mute').first().textContent())!.match(/of (\d+)/)![1]) / 500;
const t2 = performance.now();
await page.locator('#timeline .ev.capture button[aria-label^="diff "]').first().click();
await page.locator('#detail table.diff').first().waitFor();
const diffMs = performance.now() - t2;
await Promise.all(pending);

const dist = new URL('../dist/web/', import.meta.url);
const gz = (name: string) => (existsSync(new URL(name, dist)) ? gzipSync(readFileSync(new URL(name, dist)), { level: 9 }).length : null);
console.log(JSON.stringify({
  events: total,
  buildSessionMs: Math.round(buildMs),
  newestPageApiMs: Math.round(apiMs),
  firstRender: { loadMs: Math.round(loadMs), pageBytes: firstRender.page, apiBytes: firstRender.api, renderedRows: rendered, domNodes },
  olderPageMs: Math.round(olderMs / Math.max(1, Math.ceil(pages) - 1)),
  firstDiffMs: Math.round(diffMs),
  gzipBytes: { 'index.html': gz('index.html'), 'app.js': gz('app.js'), 'app.css': gz('app.css'), 'highlight.js (on first diff)': gz('highlight.js') },
}, null, 1));
await browser.close();
await daemon.close();
if (!keep) await rm(base, { recursive: true, force: true });

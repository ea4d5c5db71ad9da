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
const base = await mkdtemp(join(tmpdir(), 'ckpt-web-bench-'));
const ws = join(base, 'ws');
await mkdir(ws);
const store = await openStore({ dir: join(base, 'store'), retention: false });
const s = await (await store.openWorkspace(ws)).create({ id: 'big', title: `${events} events` });
// Each round: a turn, a capture, a settle — three events.
const tBuild = performance.now();
for (let i = 0; (i + 1) * 3 <= events - 1; i++) {
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
  firstRender: { loadMs: Math.round(loadMs), pageBytes: firstRender.page, apiBytes: firstRender.api, renderedRows: rendered, domNodes },
  pageToOldestMs: Math.round(olderMs),
  firstDiffMs: Math.round(diffMs),
  gzipBytes: { 'index.html': gz('index.html'), 'app.js': gz('app.js'), 'app.css': gz('app.css'), 'highlight.js (on first diff)': gz('highlight.js') },
}, null, 1));
await browser.close();
await daemon.close();
await rm(base, { recursive: true, force: true });

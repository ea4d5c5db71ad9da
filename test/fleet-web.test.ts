// The fleet view's web timeline in real Chromium (issue 33): a `ckpt serve` child over a shared store
// lists the workspaces of two machines by machine, filters by machine and agent, shows another
// machine's session live and says it is read-only here (no restore buttons), with zero console errors.
// `CKPT_UPDATE_SCREENSHOTS=1` saves docs/images/fleet-view.png (shown in the README).
// Runs under `npm run test:shared` (needs Debian chromium and the shared servers).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../src/index.js';
import { CKPT_BIN } from './helpers/cli.js';
import { dropSharedStore, freshSharedUrl, openAsMachine, SHARED_BASE } from './helpers/shared-store.js';

const describeShared = SHARED_BASE ? describe : describe.skip;
const DOC_IMAGES = fileURLToPath(new URL('../docs/images/', import.meta.url));


describeShared('fleet view in Chromium', () => {
  let url: string;
  let base: string;
  let serve: ChildProcess | undefined;
  let browser: Browser | undefined;
  const stores: Store[] = [];
  beforeEach(async () => {
    url = freshSharedUrl();
    base = await mkdtemp(join(tmpdir(), 'ckpt-fleet-web-'));
  });
  afterEach(async () => {
    await browser?.close();
    if (serve && serve.exitCode === null) {
      const exited = new Promise((r) => serve!.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await dropSharedStore(url);
    await rm(base, { recursive: true, force: true });
  });

  it('shows every machine’s sessions, filtered, live, and another machine’s as read-only', async () => {
    const here = await openAsMachine(url, 'laptop');
    const far = await openAsMachine(url, 'build-box');
    stores.push(here, far);
    const mine = join(base, 'app');
    const theirs = join(base, 'service');
    await mkdir(mine);
    await mkdir(theirs);
    await writeFile(join(mine, 'notes.md'), '# notes\n');
    await writeFile(join(theirs, 'main.go'), 'package main\n');
    const ms = await (await here.openWorkspace(mine)).create({ id: 'laptop-run', title: 'tidy the notes', info: { agent: 'claude' } });
    await ms.turn({ text: 'tidy the notes' });
    const farWs = await far.openWorkspace(theirs);
    const fs1 = await farWs.create({ id: 'box-run', title: 'add a health check', info: { agent: 'codex', externalId: 'codex-1' } });
    await fs1.turn({ text: 'add a /health endpoint' });
    await fs1.capture(['main.go']);
    await writeFile(join(theirs, 'main.go'), 'package main\n\n// health\n');
    await fs1.settle(['main.go']);

    serve = spawn(process.execPath, [CKPT_BIN, '--store', url, 'serve', '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CKPT_MACHINE_ID: 'laptop', XDG_STATE_HOME: join(base, 'state') },
    });
    let err = '';
    serve.stderr!.on('data', (d) => (err += d));
    const started = await new Promise<{ url: string; open: string }>((resolve, reject) => {
      let out = '';
      serve!.stdout!.on('data', (d) => {
        out += d;
        try {
          resolve(JSON.parse(out));
        } catch {}
      });
      serve!.once('exit', (code) => reject(new Error(`ckpt serve exited ${code}: ${err}`)));
    });

    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    const page = await (await browser.newContext({ viewport: { width: 1400, height: 760 } })).newPage();
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    page.on('pageerror', (e) => void errors.push(`uncaught: ${e.message}`));
    await page.goto(started.open);

    // Both machines are offered; the workspaces carry their machine's name.
    const machine = page.locator('#machine');
    await machine.waitFor({ state: 'visible' });
    expect(await machine.locator('option').allTextContents()).toEqual(['all machines', 'build-box', 'laptop (this machine)']);
    expect(await page.locator('#workspace option').allTextContents()).toEqual(expect.arrayContaining([`laptop: ${mine}`, `build-box: ${theirs}`]));

    // The other machine's workspace: its session and timeline are shown, read-only, with the way to get it here.
    await machine.selectOption('build-box');
    await page.locator('#where', { hasText: 'on machine build-box' }).waitFor();
    expect(await page.locator('#where').textContent()).toContain('ckpt export SESSION TAG DIR');
    await page.locator('#sessions .session', { hasText: 'add a health check' }).click();
    await page.locator('#timeline', { hasText: 'add a /health endpoint' }).waitFor();
    expect(await page.locator('#timeline button[aria-label^="restore"]').count()).toBeGreaterThan(0);
    expect(await page.locator('#timeline button[aria-label^="restore"]').first().isVisible()).toBe(false);

    // Live: a turn recorded on the other machine arrives without a reload.
    await fs1.turn({ text: 'now add a readiness probe' });
    await page.locator('#timeline', { hasText: 'now add a readiness probe' }).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: process.env.CKPT_UPDATE_SCREENSHOTS === '1' ? join(DOC_IMAGES, 'fleet-view.png') : join(base, 'fleet-view.png') });

    // Back on this machine's workspace: no note, restore offered.
    await machine.selectOption('laptop');
    await page.locator('#where').waitFor({ state: 'hidden' });
    expect(await page.locator('body.foreign').count()).toBe(0);
    expect(errors).toEqual([]);
  });
});

// The web timeline in Chromium when answers arrive out of order: the page opens on one workspace and
// the user picks another before the first workspace's session list has come back. The late answer
// must not replace the list of the workspace now selected (found by the fleet view's browser test,
// which timed out once under load: the build-box list was replaced by the laptop's). Runs in
// `npm run test:long` (needs Debian chromium: .ci/run installs it).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Route } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { spawnDaemon } from './helpers/http.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let daemon: Awaited<ReturnType<typeof spawnDaemon>> | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  dirs = await makeTempDirs('ckpt-web-stale-');
  for (const name of ['alpha', 'beta']) {
    await mkdir(join(dirs.workspace, name));
    const made = await runCli(['--store', dirs.store, 'session', 'new', '--title', `session in ${name}`], { cwd: join(dirs.workspace, name) });
    expect(made.code).toBe(0);
  }
}, 60_000);

afterAll(async () => {
  await browser?.close();
  daemon?.child.kill('SIGTERM');
  await daemon?.exited;
  await dirs?.cleanup();
});

it('a late session list of the workspace left behind does not replace the one picked', async () => {
  daemon = await spawnDaemon(dirs.store, { cwd: dirs.workspace });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const page = await (await browser.newContext()).newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => void errors.push(e.message));
  // The first session list the page asks for (the workspace it opens on) is held back.
  let held: Route | undefined;
  let heldUrl = '';
  const isHeld = new Promise<void>((resolve) => {
    void page.route('**/web/sessions?*', async (route) => {
      if (held) return route.continue();
      held = route;
      heldUrl = route.request().url();
      resolve();
    });
  });
  await page.goto(daemon.open);
  await isHeld;
  const select = page.locator('#workspace');
  await expect.poll(() => select.locator('option').count()).toBe(2);
  const first = await select.inputValue();
  const options = await select.locator('option').evaluateAll((os) => os.map((o) => ({ value: (o as HTMLOptionElement).value, text: o.textContent ?? '' })));
  const other = options.find((o) => o.value !== first)!;
  const picked = other.text.endsWith('alpha') ? 'alpha' : 'beta';
  const left = picked === 'alpha' ? 'beta' : 'alpha';
  await select.selectOption(other.value);
  await page.locator('#sessions .session', { hasText: `session in ${picked}` }).waitFor();
  // Now the answer for the workspace left behind arrives.
  const late = page.waitForResponse(heldUrl);
  await held!.continue();
  await late;
  await page.waitForTimeout(300);
  const shown = await page.locator('#sessions .session').allTextContents();
  expect(shown.join('\n')).toContain(`session in ${picked}`);
  expect(shown.join('\n')).not.toContain(`session in ${left}`);
  expect(await page.locator('#sessions .session[aria-current="true"]').textContent()).toContain(`session in ${picked}`);
  expect(errors).toEqual([]);
});

// The web timeline in real Chromium (issue 14): Debian's /usr/bin/chromium driven by playwright-core
// (never a downloaded browser), a real `ckpt serve` child process on a scratch store, an agent-like
// session made through the CLI. Checks the login (one-time code -> HttpOnly SameSite=Strict cookie,
// code gone from the address bar, nothing shown without it), the timeline, a diff, a restore through
// preview + confirm (files checked on disk), and a capture by another CLI process arriving live.
// Saves screenshots of the main views to docs/images/.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CKPT_BIN, runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

const CHROMIUM = '/usr/bin/chromium';
const IMAGES = fileURLToPath(new URL('../docs/images/', import.meta.url));

let dirs: TempDirs;
let serve: ChildProcess;
let started: { url: string; open: string };
let browser: Browser;
const ckpt = (...args: string[]) => runCli(['--store', dirs.store, '--session', 's1', ...args], { cwd: dirs.workspace });

beforeAll(async () => {
  dirs = await makeTempDirs('ckpt-web-');
  // The agent-like session: two turns, tool calls with captures and settles.
  expect((await runCli(['--store', dirs.store, 'session', 'new', '--id', 's1', '--title', 'refactor greeting'], { cwd: dirs.workspace })).code).toBe(0);
  await writeFile(join(dirs.workspace, 'a.txt'), 'hello\nworld\n');
  await ckpt('turn', '--text', 'make the greeting friendlier');
  await ckpt('capture', '--tool', 'Edit', 'a.txt');
  await writeFile(join(dirs.workspace, 'a.txt'), 'hello there\nworld\nand more\n');
  await ckpt('settle', 'a.txt');
  await ckpt('turn', '--text', 'add a notes file');
  await ckpt('capture', '--tool', 'Write', 'notes.md');
  await writeFile(join(dirs.workspace, 'notes.md'), '# notes\n');
  await ckpt('settle', 'notes.md');

  serve = spawn(process.execPath, [CKPT_BIN, '--store', dirs.store, 'serve', '--json'], { cwd: dirs.workspace, stdio: ['ignore', 'pipe', 'pipe'] });
  started = await new Promise((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (d) => {
      out += d;
      try {
        resolve(JSON.parse(out)); // the --json result, possibly over several chunks
      } catch {}
    });
    serve.once('exit', (code) => reject(new Error(`ckpt serve exited ${code}`)));
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (serve && serve.exitCode === null) {
    const exited = new Promise((r) => serve.once('exit', r));
    serve.kill('SIGTERM');
    await exited;
  }
  await dirs?.cleanup();
});

describe('web timeline in Chromium (needs Debian chromium: .ci/run installs it)', () => {
  it('shows nothing without the code or cookie; a used code does not work twice', async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const res = await page.goto(`${started.url}/`);
    expect(res!.status()).toBe(401);
    await expect(page.locator('#not-signed-in').isVisible()).resolves.toBe(true);
    expect(await page.locator('#sessions').count()).toBe(0);
    const api = await page.evaluate(async () => (await fetch('/workspaces')).status);
    expect(api).toBe(401);
    expect((await page.goto(`${started.url}/login?code=not-a-code`))!.status()).toBe(401);
    await ctx.close();
  });

  it('signs in with the code, shows the timeline, a diff, restores through preview + confirm, and goes live', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 800 } });
    const requests: string[] = [];
    ctx.on('request', (r) => requests.push(r.url()));
    const page = await ctx.newPage();
    await page.goto(started.open);
    expect(page.url()).toBe(`${started.url}/`);
    const cookies = await ctx.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'ckpt_session', httpOnly: true, sameSite: 'Strict' });
    const csp = (await page.request.get(`${started.url}/`)).headers()['content-security-policy'];
    expect(csp).toContain("default-src 'self'");

    // The code worked once only.
    const other = await browser.newContext();
    expect((await (await other.newPage()).goto(started.open))!.status()).toBe(401);
    await other.close();

    // Sessions and timeline.
    await page.locator('button.session', { hasText: 'refactor greeting' }).waitFor();
    await expect(page.locator('button.session').first().textContent()).resolves.toContain('2 turns');
    await page.locator('.prompt', { hasText: 'make the greeting friendlier' }).waitFor();
    await page.locator('.ev', { hasText: 'Edit' }).waitFor();
    await page.locator('#live', { hasText: 'live' }).waitFor();
    await page.screenshot({ path: join(IMAGES, 'web-timeline.png') });

    // Diff from the Edit's checkpoint to now.
    const edit = page.locator('.ev', { hasText: 'Edit' });
    const tag = (await edit.locator('strong').textContent())!.split(' ')[0]!;
    await edit.getByRole('button', { name: `diff ${tag} to now` }).click();
    await page.locator('#detail h2', { hasText: `Diff ${tag} → now` }).waitFor();
    await expect(page.locator('#detail table.stat').textContent()).resolves.toMatch(/a\.txt\+2-1/);
    await expect(page.locator('#detail pre.diff').first().textContent()).resolves.toContain('+hello there');
    await page.getByRole('button', { name: 'Side by side' }).click();
    await page.locator('#detail table.sbs').first().waitFor();
    await page.screenshot({ path: join(IMAGES, 'web-diff.png') });

    // Restore to that checkpoint: preview, confirm, files on disk, then the undo action.
    await edit.getByRole('button', { name: `restore ${tag}` }).click();
    const dialog = page.locator('#confirm');
    await dialog.locator('text=Writes').waitFor();
    await expect(dialog.textContent()).resolves.toMatch(/Deletes \(1\)notes\.md/);
    await page.screenshot({ path: join(IMAGES, 'web-restore-preview.png') });
    expect(await readFile(join(dirs.workspace, 'a.txt'), 'utf8')).toBe('hello there\nworld\nand more\n');
    await page.locator('#confirm-go').click();
    await page.locator('#undo-restore').waitFor();
    expect(await readFile(join(dirs.workspace, 'a.txt'), 'utf8')).toBe('hello\nworld\n');
    expect(existsSync(join(dirs.workspace, 'notes.md'))).toBe(false);
    await page.locator('.ev.restore', { hasText: 'restored' }).first().waitFor();

    // A capture from a separate CLI process appears without reload.
    await ckpt('turn', '--text', 'a prompt typed while the page is open');
    await ckpt('capture', '--tool', 'Bash', 'late.txt');
    await page.locator('.prompt', { hasText: 'a prompt typed while the page is open' }).waitFor({ timeout: 15_000 });
    await page.locator('.ev', { hasText: 'Bash' }).waitFor({ timeout: 15_000 });

    // Everything came from the daemon.
    expect(requests.every((u) => u.startsWith(started.url))).toBe(true);
    await ctx.close();
  }, 90_000);
});

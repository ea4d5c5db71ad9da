// A rebuild (`npm run build`, which `npm test` runs) must not break a ckpt that runs from this clone:
// hooks written by `ckpt init` run bin/ckpt.js here, and a daemon runs for hours. Before each build got
// its own folder, a rebuild removed the chunks a running process had yet to load lazily (the
// shared-store driver: ERR_MODULE_NOT_FOUND on a hashed chunk name), and a process starting during
// the rebuild found the bundle half-written. Rebuilds the bundle for real (~6 s: test:full).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CKPT_BIN, runCli } from './helpers/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = `${root}dist/bundle/main.js`;
const currentBuild = () => /builds\/([^/]+)\//.exec(readFileSync(entry, 'utf8'))?.[1];
// A shared-store URL nothing listens on: opening it loads the driver's chunk lazily, then fails IO.
const unreachable = 'postgres://ckpt@127.0.0.1:1/x?blobs=s3://bucket&endpoint=http://127.0.0.1:1';

describe('a rebuild under a running ckpt', () => {
  it('keeps the running process loading its own build, and processes started meanwhile work', async () => {
    const before = currentBuild();
    expect(before).toBeTruthy();
    // A process that loaded the CLI before the rebuild and loads the shared-store chunk after it.
    const script = `const { main } = await import(${JSON.stringify(new URL(`file://${entry}`).href)});
      process.stdout.write('ready\\n');
      process.stdin.once('data', async () => { process.exitCode = await main(['--store', ${JSON.stringify(unreachable)}, 'session', 'list', '--json']); process.stdin.destroy(); });`;
    const running = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    running.stdout.on('data', (d) => (out += d));
    running.stderr.on('data', (d) => (err += d));
    await new Promise<void>((resolve) => running.stdout.on('data', () => out.includes('ready') && resolve()));

    const rebuild = spawn(process.execPath, [`${root}scripts/bundle.js`], { stdio: 'inherit' });
    const rebuilt = new Promise<number | null>((resolve) => rebuild.on('close', resolve));
    // Start ckpt again and again while the build runs: every start must find a whole bundle.
    let done = false;
    void rebuilt.then(() => (done = true));
    const starts: number[] = [];
    while (!done) starts.push((await runCli(['--version'], { cwd: root })).code);
    expect(await rebuilt).toBe(0);
    expect(starts.length).toBeGreaterThan(0);
    expect(starts.every((c) => c === 0)).toBe(true);

    const after = currentBuild();
    expect(after).not.toBe(before);
    expect(existsSync(`${root}dist/builds/${before}/bundle/main.js`)).toBe(true);
    // The old build is not shipped by `npm pack`.
    expect(readFileSync(`${root}dist/builds/.npmignore`, 'utf8')).toContain(`/${before}/`);

    running.stdin.write('go\n');
    const code = await new Promise<number | null>((resolve) => running.on('close', resolve));
    expect(err).not.toContain('ERR_MODULE_NOT_FOUND');
    expect(JSON.parse(err).error.code).toBe('IO');
    expect(code).toBe(6);

    // And the new build works from the stable entry.
    const v = spawnSync(process.execPath, [CKPT_BIN, '--version'], { encoding: 'utf8' });
    expect(v.status).toBe(0);
  });
});

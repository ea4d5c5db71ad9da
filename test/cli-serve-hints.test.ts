// `ckpt serve` as a newcomer meets it: the commands its text prints reach the store it serves (with
// --store given, `ckpt serve --print-token` alone would print another store's token), and a second
// `ckpt serve` — the daemon `ckpt init` started runs in the background — says what to do instead.
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CKPT_BIN, runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-serve-hints-');
});
afterEach(() => dirs.cleanup());

describe('ckpt serve text', () => {
  it('names --store in the token and open hints; a second serve says where the first listens and how to go on', async () => {
    const child = spawn(process.execPath, [CKPT_BIN, '--store', dirs.store, 'serve'], { cwd: dirs.workspace, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    try {
      let out = '';
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('web timeline')) resolve();
        });
        child.on('exit', () => reject(new Error(`serve exited: ${out}`)));
      });
      // How this ckpt was started (here `node …/bin/ckpt.js`), then the store.
      expect(out).toContain(` --store ${dirs.store} serve --print-token\n`);
      expect(out).toContain(` --store ${dirs.store} open makes a new one)`);

      const second = await runCli(['--store', dirs.store, 'serve'], { cwd: dirs.workspace });
      expect(second.code).toBe(7);
      expect(second.stderr).toContain(`already serves this store at http://127.0.0.1:`);
      expect(second.stderr).toContain(`(pid ${child.pid}): use that one (ckpt open, ckpt serve --print-token), or stop it first (kill ${child.pid})`);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

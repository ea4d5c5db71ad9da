// processAlive: a live process of ours is alive; a zombie (killed, never reaped) and a pid gone are
// not. A real zombie: a child killed under a parent that never waits.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { CAN_SEE_ZOMBIES, makeZombie, type Zombie } from '../test/helpers/zombie.js';
import { processAlive } from './process-alive.js';

let zombie: Zombie | undefined;
afterEach(() => {
  zombie?.release();
  zombie = undefined;
});

describe('processAlive', () => {
  it('is true for this process and false for a pid no process has', () => {
    expect(processAlive(process.pid)).toBe(true);
    expect(processAlive(2 ** 22 + 1)).toBe(false);
  });

  it.skipIf(!CAN_SEE_ZOMBIES)('is false for a zombie, which signal 0 still reaches', async () => {
    zombie = await makeZombie();
    expect(() => process.kill(zombie!.pid, 0)).not.toThrow();
    expect(processAlive(zombie.pid)).toBe(false);
  });

  // A process of another user (EPERM) is never ours. As root, the check runs as `nobody` against this
  // process (the module transpiled into a folder `nobody` can read: a clone under a 0700 temp folder
  // is not one, as a fresh-clone CI run showed); otherwise against pid 1 when it is someone else's.
  it.skipIf(process.platform === 'win32')('is false for a process this user may not signal', () => {
    if (process.getuid?.() === 0) {
      const dir = mkdtempSync(join(tmpdir(), 'ckpt-alive-'));
      try {
        chmodSync(dir, 0o755);
        const source = readFileSync(fileURLToPath(new URL('./process-alive.ts', import.meta.url)), 'utf8');
        const module = join(dir, 'process-alive.mjs');
        writeFileSync(module, transformSync(source, { loader: 'ts', format: 'esm' }).code, { mode: 0o644 });
        const script = `import(${JSON.stringify(module)}).then((m) => console.log(m.processAlive(Number(process.argv[1])), m.processAlive(process.pid)))`;
        const r = spawnSync(process.execPath, ['-e', script, String(process.pid)], { uid: 65534, gid: 65534, cwd: dir, encoding: 'utf8' });
        expect(r.stderr).toBe('');
        expect(r.stdout.trim()).toBe('false true');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return;
    }
    let eperm = false;
    try {
      process.kill(1, 0);
    } catch (err) {
      eperm = (err as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (eperm) expect(processAlive(1)).toBe(false);
  });
});

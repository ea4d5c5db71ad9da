// A test file's world where hooks may start the store's daemon (CKPT_NO_DAEMON, which the test run
// sets, is cleared for each test) with a scratch HOME: made before each test; the daemon stopped and
// everything removed after it.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { stopStoreDaemon } from '../agents/harness/stop-store-daemon.js';
import { makeTempDirs, type TempDirs } from './temp.js';

export function daemonWorld(prefix: string): { dirs: TempDirs; home: string } {
  const world = {} as { dirs: TempDirs; home: string };
  const saved = process.env.CKPT_NO_DAEMON;
  beforeEach(async () => {
    delete process.env.CKPT_NO_DAEMON;
    world.dirs = await makeTempDirs(prefix);
    world.home = join(world.dirs.base, 'home');
    await mkdir(world.home);
  });
  afterEach(async () => {
    await stopStoreDaemon(world.dirs.store);
    if (saved === undefined) delete process.env.CKPT_NO_DAEMON;
    else process.env.CKPT_NO_DAEMON = saved;
    await world.dirs.cleanup();
  });
  return world;
}

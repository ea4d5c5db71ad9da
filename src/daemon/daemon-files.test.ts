// The daemon's claim: a claim whose process is a zombie (killed, never reaped — a container whose
// PID 1 does not reap) is a dead claim. It used to count as live, so every `ckpt serve` and every
// hook-started daemon failed LOCKED until the zombie was reaped.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDirs, type TempDirs } from '../../test/helpers/temp.js';
import { CAN_SEE_ZOMBIES, makeZombie, type Zombie } from '../../test/helpers/zombie.js';
import { openStore, type Store } from '../store.js';
import { claimDaemon, DAEMON_CLAIM_KEY, daemonClaim } from './daemon-files.js';

let dirs: TempDirs;
let store: Store;
let zombie: Zombie | undefined;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-daemon-files-');
  store = await openStore({ dir: dirs.store });
});

afterEach(async () => {
  zombie?.release();
  zombie = undefined;
  await dirs.cleanup();
});

const writeClaim = (pid: number) =>
  store.daemonCtx.backend.write(DAEMON_CLAIM_KEY, Buffer.from(`${JSON.stringify({ pid, url: 'http://127.0.0.1:9', host: '127.0.0.1', port: 9, startedAt: '2026-12-05T00:00:00.000Z' })}\n`));

describe('daemon claim', () => {
  it('a live claim refuses a second daemon (LOCKED)', async () => {
    await writeClaim(process.ppid); // a live process of ours, not this one
    await expect(claimDaemon(store.daemonCtx, { url: 'http://127.0.0.1:10' })).rejects.toMatchObject({ code: 'LOCKED' });
  });

  it.skipIf(!CAN_SEE_ZOMBIES)('a claim held by a zombie is dead: it is reported so and taken over', async () => {
    zombie = await makeZombie();
    await writeClaim(zombie.pid);
    expect(await daemonClaim(store.daemonCtx)).toEqual({ deadSince: Date.parse('2026-12-05T00:00:00.000Z') });
    const mine = await claimDaemon(store.daemonCtx, { url: 'http://127.0.0.1:10' });
    expect(mine.info.pid).toBe(process.pid);
    expect((await daemonClaim(store.daemonCtx)).running?.url).toBe('http://127.0.0.1:10');
    await mine.release();
  });
});

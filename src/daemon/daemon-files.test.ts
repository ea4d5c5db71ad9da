// The daemon's claim: a claim whose process is a zombie (killed, never reaped — a container whose
// PID 1 does not reap) is a dead claim. It used to count as live, so every `ckpt serve` and every
// hook-started daemon failed LOCKED until the zombie was reaped.
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDirs, type TempDirs } from '../../test/helpers/temp.js';
import { CAN_SEE_ZOMBIES, makeZombie, type Zombie } from '../../test/helpers/zombie.js';
import { openStore, type Store } from '../store.js';
import { claimDaemon, DAEMON_CLAIM_KEY, daemonClaim, ownersOwed } from './daemon-files.js';

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

describe('what a daemon owes the owner index (ownersOwed): the claim is read as untrusted', () => {
  const write = (claim: Record<string, unknown>) => store.daemonCtx.backend.write(DAEMON_CLAIM_KEY, Buffer.from(`${JSON.stringify({ url: 'http://127.0.0.1:9', port: 9, ...claim })}\n`));
  const started = '2026-12-05T00:00:00.000Z';

  it('a running daemon owes only what it took over; a forged ownersOwedSince (negative, fractional, a string, huge) is none', async () => {
    await write({ pid: process.pid, startedAt: started });
    expect(await ownersOwed(store.daemonCtx)).toBeUndefined();
    await write({ pid: process.pid, startedAt: started, ownersOwedSince: 1000 });
    expect(await ownersOwed(store.daemonCtx)).toEqual({ since: 1000, by: `${process.pid}@${started} running` });
    for (const forged of [-1, 1.5, '1000', 2 ** 60]) {
      await write({ pid: process.pid, startedAt: started, ownersOwedSince: forged });
      expect(await ownersOwed(store.daemonCtx)).toBeUndefined();
    }
  });

  it('a dead daemon owes since its start, or the earlier start it carried; a start that does not parse is 0 (caught up every time)', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const pid = Number(dead.stdout);
    await write({ pid, startedAt: started });
    expect(await ownersOwed(store.daemonCtx)).toEqual({ since: Date.parse(started), by: `${pid}@${started} gone` });
    await write({ pid, startedAt: started, ownersOwedSince: 1000 });
    expect((await ownersOwed(store.daemonCtx))?.since).toBe(1000);
    await write({ pid, startedAt: 'not a time' });
    expect((await ownersOwed(store.daemonCtx))?.since).toBe(0);
    expect((await daemonClaim(store.daemonCtx)).deadSince).toBe(0);
  });
});

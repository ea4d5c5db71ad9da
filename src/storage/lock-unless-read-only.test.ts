import { describe, expect, it } from 'vitest';
import { CkptError } from '../errors.js';
import { lockUnlessReadOnly } from './lock-unless-read-only.js';

const erofs = () => new CkptError('IO', 'lock x: EROFS', { errno: 'EROFS' });

describe('lockUnlessReadOnly', () => {
  it('runs under the lock when it can be taken', async () => {
    expect(await lockUnlessReadOnly(async (enter) => (enter(), 'locked'), async () => 'unlocked')).toBe('locked');
  });

  it('runs without it, given the error, when the store cannot be written here', async () => {
    const err = erofs();
    let seen: unknown;
    expect(await lockUnlessReadOnly(() => Promise.reject(err), async (e) => ((seen = e), 'unlocked'))).toBe('unlocked');
    expect(seen).toBe(err);
  });

  it("keeps any other failure: another errno, or the work's own once the lock was held", async () => {
    const busy = new CkptError('LOCKED', 'held', {});
    await expect(lockUnlessReadOnly(() => Promise.reject(busy), async () => 'unlocked')).rejects.toBe(busy);
    const enospc = new CkptError('IO', 'full', { errno: 'ENOSPC' });
    await expect(lockUnlessReadOnly(() => Promise.reject(enospc), async () => 'unlocked')).rejects.toBe(enospc);
    const inside = erofs();
    await expect(
      lockUnlessReadOnly(async (enter) => {
        enter();
        throw inside;
      }, async () => 'unlocked'),
    ).rejects.toBe(inside);
  });
});

import { describe, expect, it } from 'vitest';
import { CkptError } from '../errors.js';
import { recoverInTx } from './recover.js';

describe('a lock-free transaction (a dry run on a store not writable here)', () => {
  it('does not finish an interrupted restore: it fails with the lock error, the workspace untouched', async () => {
    const err = new CkptError('IO', 'lock x: EROFS', { errno: 'EROFS' });
    // A restore killed after its recovery capture, before `restore_started`: recovery would remove its staged files.
    const events = [{ type: 'capture', seq: 1, at: '', tag: '1.1', turn: 1, k: 1, tool: 'restore', restoreId: 'r1', files: [] }];
    const tx = { read: async () => events, lastSeq: async () => 1, append: () => Promise.reject(err), lockFree: true as const };
    const session = new Proxy({}, { get: () => expect.unreachable('recovery touched the session') });
    await expect(recoverInTx(session as never, tx as never)).rejects.toBe(err);
  });
});

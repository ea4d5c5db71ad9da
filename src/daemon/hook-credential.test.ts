// The hook credential: one per workspace, checked in constant time, told apart from the daemon's token.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../index.js';
import { checkHookCredential, hookCredential, hookKey, isHookCredential } from './hook-credential.js';

describe('hook credential', () => {
  it('names exactly one workspace under one key; the key file is private and kept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-hookkey-'));
    try {
      const store = await openStore({ dir: join(dir, 'store') });
      const key = await hookKey(store.ctx);
      expect(await hookKey(store.ctx)).toBe(key);
      expect((await stat(join(dir, 'store', 'daemon', 'hook-key'))).mode & 0o777).toBe(0o600);
      const c = hookCredential(key, '/w/a');
      expect(c).toMatch(/^ckh1\.[\w-]{43}$/);
      expect(isHookCredential(c)).toBe(true);
      expect(isHookCredential('a'.repeat(64))).toBe(false);
      expect(checkHookCredential(key, '/w/a', c)).toBe(true);
      for (const [k, w, g] of [[key, '/w/a/', c], [key, '/w/b', c], [key, '/w', c], ['0'.repeat(64), '/w/a', c], [key, '/w/a', `${c}x`], [key, '/w/a', c.slice(0, -1)]] as const) {
        expect(checkHookCredential(k, w, g), `${w} ${g}`).toBe(false);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// The store's secrets (daemon token, hook key, MCP confirmation key): made once, the same for every
// concurrent caller, private, and a malformed file refused rather than replaced.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFsBackend } from './fs/fs-backend.js';
import { storeSecret } from './store-secret.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckpt-secret-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('storeSecret', () => {
  it('is made once (one value for concurrent callers), kept, and private', async () => {
    const backend = createFsBackend({ dir });
    const all = await Promise.all(Array.from({ length: 8 }, () => storeSecret(backend, 'daemon/s', 'bad')));
    expect(new Set(all).size).toBe(1);
    expect(all[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(await storeSecret(createFsBackend({ dir }), 'daemon/s', 'bad')).toBe(all[0]);
    expect(await readFile(join(dir, 'daemon/s'), 'utf8')).toBe(`${all[0]}\n`);
    expect((await stat(join(dir, 'daemon/s'))).mode & 0o777).toBe(0o600);
  });

  it('refuses a malformed file with LOG_CORRUPT and leaves it', async () => {
    const backend = createFsBackend({ dir });
    await storeSecret(backend, 'daemon/s', 'bad');
    await writeFile(join(dir, 'daemon/s'), 'not hex\n');
    await expect(storeSecret(backend, 'daemon/s', 'the secret is malformed')).rejects.toMatchObject({ code: 'LOG_CORRUPT', message: 'the secret is malformed' });
    expect(await readFile(join(dir, 'daemon/s'), 'utf8')).toBe('not hex\n');
  });
});

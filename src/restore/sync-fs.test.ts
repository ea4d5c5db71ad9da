import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canSyncFileSystem, reportsWritebackErrors, syncFileSystem } from './sync-fs.js';

describe('sync-fs', () => {
  it('trusts syncfs from Linux 5.8 on, when it reports write-back errors', () => {
    expect(reportsWritebackErrors('5.8.0')).toBe(true);
    expect(reportsWritebackErrors('6.18.44-fc-v1272')).toBe(true);
    expect(reportsWritebackErrors('5.10.0-28-amd64')).toBe(true);
    expect(reportsWritebackErrors('5.7.19')).toBe(false);
    expect(reportsWritebackErrors('4.19.0')).toBe(false);
    expect(reportsWritebackErrors('')).toBe(false);
    expect(reportsWritebackErrors('weird')).toBe(false);
  });

  it.skipIf(!canSyncFileSystem())('flushes the file system of a folder; a folder that is gone is false, never a throw', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ckpt-syncfs-'));
    try {
      writeFileSync(join(dir, 'f'), 'x');
      expect(await syncFileSystem(dir)).toBe(true);
      expect(await syncFileSystem(join(dir, 'missing'))).toBe(false);
      // An argument that looks like an option is a path, never an option of the program.
      expect(await syncFileSystem('--help')).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canSyncFileSystem, parsePendingWriteback, reportsWritebackErrors, syncFileSystem, worthSyncingFileSystem } from './sync-fs.js';

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

  it('reads what waits for write-back from /proc/meminfo (Dirty + Writeback)', () => {
    expect(parsePendingWriteback('MemTotal:       24683784 kB\nDirty:              1852 kB\nWriteback:            12 kB\nAnonPages: 1 kB\n')).toBe((1852 + 12) * 1024);
    expect(parsePendingWriteback('Dirty: 5 kB\n')).toBeUndefined();
    expect(parsePendingWriteback('Dirty: x kB\nWriteback: 0 kB\n')).toBeUndefined();
    expect(parsePendingWriteback('')).toBeUndefined();
  });

  it.skipIf(!canSyncFileSystem())('flushes at once for many files when little else waits for write-back', () => {
    const MiB = 1024 * 1024;
    expect(worthSyncingFileSystem(64, MiB, () => 0)).toBe(true);
    expect(worthSyncingFileSystem(63, MiB, () => 0)).toBe(false);
    expect(worthSyncingFileSystem(600, MiB, () => 8 * MiB)).toBe(true);
    expect(worthSyncingFileSystem(600, MiB, () => 9 * MiB)).toBe(false);
    // As much waiting elsewhere as the restore writes itself: at most twice the data of its own.
    expect(worthSyncingFileSystem(600, 30 * MiB, () => 30 * MiB)).toBe(true);
    expect(worthSyncingFileSystem(600, 30 * MiB, () => 31 * MiB)).toBe(false);
    expect(worthSyncingFileSystem(600, MiB, () => undefined)).toBe(false);
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

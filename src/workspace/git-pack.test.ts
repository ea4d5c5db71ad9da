// Hostile pack content (test/security/git-readers.fuzz.test.ts fuzzes the readers at large): what a
// delta may build, what one read may build along its chain, and a pack index whose offsets are bad
// for some entries.
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blobId, deltaVarint, makeSampleRepo, objectFiles, writePack, type PackEntry } from '../../test/security/git-files.js';
import { openGitObjects } from './git-objects.js';
import { applyDelta, GitPack, MAX_READ_BYTES } from './git-pack.js';

/** Runs `fn` in a new temp folder, removed afterwards. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ckpt-git-pack-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('applyDelta', () => {
  it('refuses a result over the cap before allocating it (1-byte ops copying 64 KiB each)', () => {
    const source = Buffer.alloc(65536, 'x');
    const size = 600 * 1024 * 1024; // over the 512 MiB cap: ~9,600 one-byte copy ops
    const delta = Buffer.concat([deltaVarint(source.length), deltaVarint(size), Buffer.alloc(size / 65536, 0x80)]);
    const rss = process.memoryUsage().rss;
    expect(() => applyDelta(delta, source)).toThrow(/delta result of 629145600 bytes/);
    expect(process.memoryUsage().rss - rss).toBeLessThan(64 * 1024 * 1024);
    expect(() => applyDelta(Buffer.concat([deltaVarint(65536), deltaVarint(2 * 65536), Buffer.from([0x80, 0x80])]), source, 65536)).toThrow(/delta result/);
    expect(applyDelta(Buffer.concat([deltaVarint(65536), deltaVarint(2 * 65536), Buffer.from([0x80, 0x80])]), source).length).toBe(2 * 65536);
  });
});

describe('a pack index with a bad large offset', () => {
  it('spoils that entry only: the other objects read, and seedBlob answers instead of throwing (every scan seeding failed INTERNAL)', async () => {
    await inTempDir(async (dir) => {
      const repo = makeSampleRepo(dir, { commits: 2 });
      const idx = objectFiles(dir).idx[0] as string;
      const data = Buffer.from(fs.readFileSync(idx));
      const n = data.readUInt32BE(8 + 255 * 4);
      data.writeUInt32BE(0x80000003, 8 + 1024 + n * 24); // entry 0: "large offset #3", and there is no table
      fs.chmodSync(idx, 0o644);
      fs.writeFileSync(idx, data);
      const objects = openGitObjects(join(dir, '.git'));
      const read = objects.readBlobs(repo.allBlobs);
      expect(read.filter((b) => b !== undefined).length).toBeGreaterThanOrEqual(repo.allBlobs.length - 1);
      read.forEach((b, k) => b && expect(blobId(b)).toBe(repo.allBlobs[k]));
      for (const [k, oid] of repo.allBlobs.entries()) expect(objects.seedBlob(oid, read[k] ?? Buffer.alloc(0))).toBeTypeOf('boolean');
    });
  });
});

describe('a delta chain', () => {
  it('stops when one read has inflated and rebuilt MAX_READ_BYTES, its whole chain counted (4,095 levels of 512 MiB took hours)', async () => {
    await inTempDir(async (dir) => {
      // 20 levels, each rebuilding 1 MiB from its base with 16 one-byte copy ops.
      const base = Buffer.alloc(65536, 'x');
      const mib = 1024 * 1024;
      const entries: PackEntry[] = [{ id: blobId(base), type: 'blob', data: base }];
      for (let k = 1; k <= 20; k++) entries.push({ id: k.toString(16).padStart(40, '0'), type: 'ofs', ofs: k - 1, data: Buffer.concat([deltaVarint(k === 1 ? base.length : mib), deltaVarint(mib), Buffer.alloc(16, 0x80)]) });
      writePack(join(dir, 'pack'), 'x', entries);
      const pack = GitPack.open(join(dir, 'pack', 'pack-x.idx'))!;
      const top = Buffer.from((20).toString(16).padStart(40, '0'), 'hex');
      expect(pack.read(top, () => undefined)?.data.length).toBe(mib);
      // The same read with all but 10 MiB of the budget spent: refused partway down the chain.
      const fresh = GitPack.open(join(dir, 'pack', 'pack-x.idx'))!;
      expect(() => fresh.read(top, () => undefined, { bytes: MAX_READ_BYTES - 10 * mib, objects: 0 })).toThrow(/read of more than|delta result of/);
      fresh.close();
      pack.close();
    });
  });
});

describe('a pack index whose fanout claims more than its file holds', () => {
  it('a sparse id table is refused after its first chunk (it allocated the whole claimed table, 1.3 GiB here); a flipped id byte spoils one entry', async () => {
    await inTempDir(async (dir) => {
      const repo = makeSampleRepo(dir, { commits: 2 });
      const idx = objectFiles(dir).idx[0] as string;
      const real = Buffer.from(fs.readFileSync(idx));
      fs.chmodSync(idx, 0o644);
      // A flipped first byte of one id: that entry is not found, the others are.
      const flipped = Buffer.from(real);
      flipped[8 + 1024] = (flipped[8 + 1024] as number) ^ 0xff;
      fs.writeFileSync(idx, flipped);
      const read = openGitObjects(join(dir, '.git')).readBlobs(repo.allBlobs);
      expect(read.filter((b) => b !== undefined).length).toBeGreaterThanOrEqual(repo.allBlobs.length - 1);
      // 64 M entries claimed (all in the last bucket), the file extended to their size with a hole.
      const count = 64 * 1024 * 1024;
      const head = Buffer.alloc(8 + 1024);
      real.copy(head, 0, 0, 8);
      head.writeUInt32BE(count, 8 + 255 * 4);
      fs.writeFileSync(idx, head);
      fs.truncateSync(idx, 8 + 1024 + count * 28 + 40);
      const sizes: number[] = [];
      const alloc = Buffer.allocUnsafe;
      Buffer.allocUnsafe = (n: number) => (sizes.push(n), alloc(n));
      let pack: GitPack | undefined;
      try {
        pack = GitPack.open(idx);
      } finally {
        Buffer.allocUnsafe = alloc;
      }
      expect(pack).toBeUndefined();
      expect(Math.max(...sizes)).toBeLessThanOrEqual(2 * 1024 * 1024);
    });
  });
});

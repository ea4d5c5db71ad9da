// Hostile pack content (test/security/git-readers.fuzz.test.ts fuzzes the readers at large): what a
// delta may build, and a pack index whose offsets are bad for some entries.
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { blobId, makeSampleRepo, objectFiles } from '../../test/security/git-files.js';
import { openGitObjects } from './git-objects.js';
import { applyDelta } from './git-pack.js';

const varint = (n: number): Buffer => {
  const out: number[] = [];
  do {
    let c = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) c |= 0x80;
    out.push(c);
  } while (n > 0);
  return Buffer.from(out);
};

describe('applyDelta', () => {
  it('refuses a result over the cap before allocating it (1-byte ops copying 64 KiB each)', () => {
    const source = Buffer.alloc(65536, 'x');
    const size = 600 * 1024 * 1024; // over the 512 MiB cap: ~9,600 one-byte copy ops
    const delta = Buffer.concat([varint(source.length), varint(size), Buffer.alloc(size / 65536, 0x80)]);
    const rss = process.memoryUsage().rss;
    expect(() => applyDelta(delta, source)).toThrow(/delta result of 629145600 bytes/);
    expect(process.memoryUsage().rss - rss).toBeLessThan(64 * 1024 * 1024);
    expect(() => applyDelta(Buffer.concat([varint(65536), varint(2 * 65536), Buffer.from([0x80, 0x80])]), source, 65536)).toThrow(/delta result/);
    expect(applyDelta(Buffer.concat([varint(65536), varint(2 * 65536), Buffer.from([0x80, 0x80])]), source).length).toBe(2 * 65536);
  });
});

describe('a pack index with a bad large offset', () => {
  it('spoils that entry only: the other objects read, and seedBlob answers instead of throwing (every scan seeding failed INTERNAL)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-git-pack-'));
    try {
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
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

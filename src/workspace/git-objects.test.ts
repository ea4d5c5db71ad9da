// An object git holds more than once (two packs, a pack and a loose copy, an alternate), one copy
// corrupt: read from the intact one, as git does (test/security/git-readers.fuzz.test.ts fuzzes the
// readers at large).
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { blobId, deltaVarint, git, makeSampleRepo, objectFiles, writePack } from '../../test/security/git-files.js';
import { openGitObjects } from './git-objects.js';

const made: string[] = [];
afterEach(async () => {
  for (const d of made.splice(0)) await rm(d, { recursive: true, force: true });
});

const content = Buffer.from('the content git holds twice\n'.repeat(10));
const oid = blobId(content);

function writeLoose(objects: string, data: Buffer): void {
  fs.mkdirSync(join(objects, oid.slice(0, 2)), { recursive: true });
  fs.writeFileSync(join(objects, oid.slice(0, 2), oid.slice(2)), deflateSync(Buffer.concat([Buffer.from(`blob ${data.length}\0`), data])));
}

describe('an object with a corrupt copy and an intact one', () => {
  it('a pack whose copy is malformed, and a loose copy: read from the loose one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-git-objects-'));
    made.push(dir);
    const objects = join(dir, 'objects');
    // The pack's copy is a delta on a base the pack does not have: unreadable.
    writePack(join(objects, 'pack'), 'a', [{ id: oid, type: 'ref', ref: 'ee'.repeat(20), data: Buffer.concat([deltaVarint(1), deltaVarint(1), Buffer.from([1, 65])]) }]);
    writeLoose(objects, content);
    expect(openGitObjects(dir).readBlobs([oid])[0]).toEqual(content);
  });

  it('a pack whose copy is other bytes (a hostile or torn index), and a second pack with the right ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-git-objects-'));
    made.push(dir);
    const objects = join(dir, 'objects');
    writePack(join(objects, 'pack'), 'a', [{ id: oid, type: 'blob', data: Buffer.from('other bytes') }]);
    writePack(join(objects, 'pack'), 'b', [{ id: oid, type: 'blob', data: content }]);
    expect(openGitObjects(dir).readBlobs([oid])[0]).toEqual(content);
  });

  it('a ref-delta cycle between objects with copies in many packs stays bounded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-git-objects-'));
    made.push(dir);
    const objects = join(dir, 'objects');
    const x = 'ab'.repeat(20);
    const y = 'cd'.repeat(20);
    const delta = Buffer.concat([deltaVarint(1), deltaVarint(1), Buffer.from([1, 65])]);
    for (let k = 0; k < 6; k++) writePack(join(objects, 'pack'), `p${k}`, [{ id: x, type: 'ref', ref: y, data: delta }, { id: y, type: 'ref', ref: x, data: delta }]);
    const t0 = performance.now();
    expect(openGitObjects(dir).readBlobs([x])).toEqual([undefined]);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});

describe('objectSizes', () => {
  it("gives every blob's size as git does, from loose objects and packs (offset and ref deltas), without reading it", async () => {
    for (const refDeltas of [false, true]) {
      const dir = await mkdtemp(join(tmpdir(), 'ckpt-git-objects-'));
      made.push(dir);
      const repo = makeSampleRepo(join(dir, 'repo'), { commits: 6, refDeltas, loose: true });
      const sizes = openGitObjects(join(repo.dir, '.git')).objectSizes(repo.allBlobs.map((id) => Buffer.from(id, 'hex')));
      const expected = repo.allBlobs.map((id) => Number(git(repo.dir, 'cat-file', '-s', id).trim()));
      expect(sizes).toEqual(expected);
      const kinds = git(repo.dir, 'verify-pack', '-v', ...objectFiles(repo.dir).idx);
      expect(kinds, 'some blobs are deltas').toMatch(/ blob +\d+ \d+ \d+ \d+ [0-9a-f]{40}/);
    }
  });

  it('is undefined for a missing or malformed object, never a guess', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-git-objects-'));
    made.push(dir);
    const objects = join(dir, 'objects');
    writePack(join(objects, 'pack'), 'a', [{ id: oid, type: 'ref', ref: 'ee'.repeat(20), data: Buffer.from([0x80]) }]);
    fs.mkdirSync(join(objects, 'ab'), { recursive: true });
    fs.writeFileSync(join(objects, 'ab', 'cd'.repeat(19)), Buffer.from('not zlib'));
    expect(openGitObjects(dir).objectSizes([Buffer.from(oid, 'hex'), Buffer.from('ab' + 'cd'.repeat(19), 'hex'), Buffer.alloc(20, 7)])).toEqual([undefined, undefined, undefined]);
  });
});

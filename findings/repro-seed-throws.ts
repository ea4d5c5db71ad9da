// Repro: a pack index whose offset table has one entry with the large-offset bit set but no large
// offset table (a torn or hostile .idx): readBlobs reads every blob as missing, as promised, but
// seedBlob — called by every scan that copies git blobs (git-copy.ts, look-read.ts) — throws.
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { openGitObjects } from '../src/workspace/git-objects.js';
import { git, makeSampleRepo, objectFiles } from '../test/security/git-files.js';
const dir = fs.mkdtempSync(join(os.tmpdir(), 'seed-'));
const repo = makeSampleRepo(dir, { commits: 2 });
const idx = objectFiles(dir).idx[0]!;
const data = Buffer.from(fs.readFileSync(idx));
const n = data.readUInt32BE(8 + 255 * 4);
data.writeUInt32BE(0x80000003, 8 + 1024 + n * 24); // first offset: "large offset #3"
fs.chmodSync(idx, 0o644);
fs.writeFileSync(idx, data);
const objects = openGitObjects(join(dir, '.git'));
const oid = repo.blobs.get('same.txt')!;
console.log('readBlobs', objects.readBlobs([oid]));
try {
  console.log('seedBlob', objects.seedBlob(oid, Buffer.from('same in every commit\n')));
} catch (e) {
  console.log('seedBlob THREW', (e as Error).message);
}
void git;

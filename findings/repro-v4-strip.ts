// Repro: a v4 index whose prefix-compression varint overflows 32 bits (negative strip).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { parseGitIndexTable } from '../src/workspace/git-index.js';
const dir = fs.mkdtempSync(join(os.tmpdir(), 'v4-'));
const git = (...a: string[]) => execFileSync('git', ['-C', dir, ...a], { stdio: 'pipe' });
git('init', '-q');
fs.writeFileSync(join(dir, 'a.txt'), 'a');
fs.writeFileSync(join(dir, 'b.txt'), 'b');
git('add', '.');
git('update-index', '--index-version', '4');
const data = fs.readFileSync(join(dir, '.git', 'index'));
// First entry at 12: 62 bytes fixed, then varint strip (1 byte: 0), then "a.txt\0".
// Second entry at 12 + 62 + 1 + 6 = 81: its strip varint at 81 + 62 = 143. Replace with 5 bytes
// 0xff 0xff 0xff 0xff 0x70 -> strip overflows to a negative number.
const e2 = 12 + 62 + 1 + 6;
const v = e2 + 62;
const bad = Buffer.concat([data.subarray(0, v), Buffer.from((process.argv[2] ?? "8e fe c0 ff 7f").split(" ").map((h) => parseInt(h, 16))), data.subarray(v + 1)]);
const t0 = Date.now();
try {
  const t = parseGitIndexTable(bad);
  console.log('parsed', t?.paths.map((p) => p.length), Date.now() - t0, 'ms');
} catch (e) {
  console.log('THREW', (e as Error).message, Date.now() - t0, 'ms');
}

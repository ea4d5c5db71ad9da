// Repro (end to end): after the baseline, a pack index gets a bad large offset; the user checks out
// an older version of a file (its new content is a git blob, so the scan seeds it); `ckpt scan`.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { makeSampleRepo, objectFiles, sampleFiles } from '../test/security/git-files.js';
const base = fs.mkdtempSync(join(os.tmpdir(), 'seedscan-'));
const ws = join(base, 'ws');
const store = join(base, 'store');
makeSampleRepo(ws, { commits: 4 });
const ck = (...a: string[]) => {
  const r = spawnSync(process.execPath, ['bin/ckpt.js', '--store', store, '--workspace', ws, ...a], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL', env: { ...process.env, CKPT_NO_DAEMON: '1', NO_COLOR: '1' } });
  console.log('$ ckpt', a.join(' '), '->', r.status, r.signal, r.stdout.slice(0, 300), r.stderr.slice(0, 600));
  return r;
};
ck('session', 'new', '--json');
const idx = objectFiles(ws).idx[0]!;
const data = Buffer.from(fs.readFileSync(idx));
const n = data.readUInt32BE(8 + 255 * 4);
data.writeUInt32BE(0x80000003, 8 + 1024 + n * 24);
fs.chmodSync(idx, 0o644);
fs.writeFileSync(idx, data);
ck('turn', '--json');
for (const [p, c] of sampleFiles(1)) fs.writeFileSync(join(ws, p), c); // an older commit's content
ck('scan', '--json');

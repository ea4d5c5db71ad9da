// What a scan and a restore say when git's pack index becomes unreadable after the baseline
// referenced the pack's blobs (first byte of the .idx flipped) and the files then change.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { makeSampleRepo, objectFiles } from '../test/security/git-files.js';
const base = fs.mkdtempSync(join(os.tmpdir(), 'idxlost-'));
const ws = join(base, 'ws');
const store = join(base, 'store');
makeSampleRepo(ws, { indexVersion: 2, loose: true });
const ck = (...a: string[]) => {
  const r = spawnSync(process.execPath, ['bin/ckpt.js', '--store', store, '--workspace', ws, ...a], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL', env: { ...process.env, CKPT_NO_DAEMON: '1', NO_COLOR: '1' } });
  console.log('$ ckpt', a.join(' '), '->', r.status, r.signal, '\n', r.stdout.slice(0, 1500), r.stderr.slice(0, 600));
  return r;
};
ck('session', 'new');
const idx = objectFiles(ws).idx[0]!;
const data = Buffer.from(fs.readFileSync(idx));
data[0] = (data[0] as number) ^ 1;
fs.chmodSync(idx, 0o644);
fs.writeFileSync(idx, data);
ck('turn');
for (const p of ['big.txt', 'c.sh', 'same.txt']) fs.writeFileSync(join(ws, p), 'changed\n');
for (const p of ['dir/a.txt', 'dir/sub/b.md']) fs.rmSync(join(ws, p));
ck('scan', '--json');
ck('restore', '1', '--force', '--yes');
console.log(fs.readFileSync(join(ws, 'big.txt'), 'utf8').slice(0, 40));

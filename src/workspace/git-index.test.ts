// A corrupt or hostile v4 index (test/security/git-readers.fuzz.test.ts fuzzes the index at large).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseGitIndexTable } from './git-index.js';

describe('a v4 index whose prefix-compression varint overflows 32 bits', () => {
  it('is malformed (the name grew past its bytes: uninitialised memory in paths, a million paths for two entries)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-git-index-'));
    try {
      const git = (...a: string[]) => execFileSync('git', ['-C', dir, ...a], { stdio: 'pipe' });
      git('init', '-q');
      fs.writeFileSync(join(dir, 'a.txt'), 'a');
      fs.writeFileSync(join(dir, 'b.txt'), 'b');
      git('add', '.');
      git('update-index', '--index-version', '4');
      const data = fs.readFileSync(join(dir, '.git', 'index'));
      expect(parseGitIndexTable(data)?.paths).toEqual(['a.txt', 'b.txt']);
      // Entry 1 at 12: 62 bytes, strip varint 0, "a.txt\0"; entry 2's strip varint at 12 + 69 + 62.
      const v = 12 + 69 + 62;
      expect(data[v]).toBe(5); // strip "a.txt", append "b.txt"
      // (((14+1)*128+126+1)*128+64+1)*128+127+1)*128+127 exceeds 2^31: negative in 32-bit shifts.
      const bad = Buffer.concat([data.subarray(0, v), Buffer.from([0x8e, 0xfe, 0xc0, 0xff, 0x7f]), data.subarray(v + 1)]);
      expect(parseGitIndexTable(bad)).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

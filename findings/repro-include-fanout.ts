// Repro: a repository config that includes itself a few times per file: ckpt reads it
// (includes)^(depth 10) times, so every scan in the work tree hangs for minutes. git itself stops at
// the first chain deeper than 10 ("exceeded maximum include depth").
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { checkoutConversion } from '../src/workspace/git-convert.js';
const dir = fs.mkdtempSync(join(os.tmpdir(), 'inc-'));
execFileSync('git', ['init', '-q', dir]);
const n = Number(process.argv[2] ?? 4);
fs.appendFileSync(join(dir, '.git', 'config'), '[include]\n' + '\tpath = config\n'.repeat(n));
const t0 = Date.now();
const r = checkoutConversion({ top: dir, gitdir: join(dir, '.git'), commondir: join(dir, '.git') }, dir, [], { HOME: dir });
console.log(n, 'includes ->', typeof r === 'function' ? 'predicate' : r, Date.now() - t0, 'ms');

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { RESIDENT_V8_FLAGS } from './resident-process.js';

/** Runs node with natives syntax: sets `flags` at run time as tuneForResidentProcess does, then reports a new function's tier after one call. */
function tierAfterOneCall(flags: readonly string[]): { tier: string; stderr: string } {
  const code = `
    const v8 = require('node:v8');
    for (const flag of ${JSON.stringify(flags)}) v8.setFlagsFromString(flag);
    const f = new Function('x', 'return x + 1');
    f(1);
    const sparkplug = new Function('f', 'return %ActiveTierIsSparkplug(f)');
    process.stdout.write(sparkplug(f) ? 'sparkplug' : 'interpreter');
  `;
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', code], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node exited ${r.status}: ${r.stderr}`);
  return { tier: r.stdout, stderr: r.stderr };
}

describe('resident process V8 flags', () => {
  it('are known to this node (V8 names no unrecognized flag) and compile a function to baseline code on its first call', () => {
    const tuned = tierAfterOneCall(RESIDENT_V8_FLAGS);
    expect(tuned.stderr).toBe('');
    expect(tuned.tier).toBe('sparkplug');
  });

  it('make the difference (with the defaults, a function called once is still interpreted)', () => {
    expect(tierAfterOneCall([]).tier).toBe('interpreter');
  });

  it('an unknown flag would be reported on stderr (so the first test catches a flag a newer V8 dropped)', () => {
    expect(tierAfterOneCall(['--no-such-ckpt-flag']).stderr).toMatch(/unrecognized flag/);
  });
});

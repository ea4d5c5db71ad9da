// A clone that was never built (no dist/): `bin/ckpt.js` says so in one line instead of a module
// loader's stack trace, and a hook still exits 0 (a hook never breaks its agent; 2 in strict mode).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CKPT_BIN } from './helpers/cli.js';

it('an unbuilt clone: one line naming the build, exit 1; a hook exits 0 (2 in strict mode)', () => {
  const clone = mkdtempSync(join(tmpdir(), 'ckpt-unbuilt-'));
  try {
    cpSync(join(CKPT_BIN, '..'), join(clone, 'bin'), { recursive: true });
    cpSync(join(CKPT_BIN, '..', '..', 'package.json'), join(clone, 'package.json'));
    const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      spawnSync(process.execPath, [join(clone, 'bin', 'ckpt.js'), ...args], { input: '{}', encoding: 'utf8', env: { ...process.env, ...env } });
    const help = run(['--help']);
    expect(help.status).toBe(1);
    expect(help.stderr).toBe(`ckpt is not built in ${clone}: run npm ci && npm run build there\n`);
    const hook = run(['hook', 'claude']);
    expect({ status: hook.status, stdout: hook.stdout }).toEqual({ status: 0, stdout: '' });
    expect(hook.stderr).toMatch(/^ckpt is not built/);
    expect(run(['hook', 'claude'], { CKPT_HOOK_STRICT: '1' }).status).toBe(2);
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
});

// Re-pointing installed HTTP hooks at the daemon's current port: only ckpt's own HTTP hooks of that
// agent change (their port only), in the file's own style; anything else, or a file that is not
// settings, is left byte for byte. Real files in a temp folder.
import { mkdtemp, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { repointHttpHooks } from './repoint-http-hooks.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ckpt-repoint-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const ckptHook = (port: number) => ({ type: 'http', url: `http://127.0.0.1:${port}/hooks/claude?workspace=%2Fw`, headers: { Authorization: 'Bearer ckh1.x' } });

it("re-points ckpt's HTTP hooks only, keeps the rest and the file's style and its owner's mode bits (a file holding a credential loses group and other ones); nothing to do writes nothing", async () => {
  const file = join(dir, 'settings.local.json');
  const settings = {
    model: 'opus',
    hooks: {
      PreToolUse: [{ matcher: 'x', hooks: [ckptHook(4000), { type: 'http', url: 'http://127.0.0.1:4000/other' }, { type: 'command', command: 'say hi' }] }],
      PostToolUse: [{ hooks: [ckptHook(4001)] }],
      Stop: [{ hooks: [{ type: 'http', url: 'http://127.0.0.1:4000/hooks/gemini' }] }],
    },
  };
  await writeFile(file, JSON.stringify(settings, null, '\t').replace(/\n/g, '\r\n'));
  await chmod(file, 0o740);
  expect(await repointHttpHooks(file, 'claude', 5000)).toEqual({ file, from: [4000, 4001], hooks: 2 });
  const text = await readFile(file, 'utf8');
  expect(text).toContain('\r\n\t"hooks"');
  expect(JSON.parse(text)).toEqual({
    ...settings,
    hooks: { ...settings.hooks, PreToolUse: [{ ...settings.hooks.PreToolUse[0], hooks: [ckptHook(5000), ...settings.hooks.PreToolUse[0]!.hooks.slice(1)] }], PostToolUse: [{ hooks: [ckptHook(5000)] }] },
  });
  expect((await stat(file)).mode & 0o777).toBe(0o700);
  const bytes = await readFile(file);
  expect(await repointHttpHooks(file, 'claude', 5000)).toBeUndefined();
  expect(await readFile(file)).toEqual(bytes);
});

it('leaves a missing file, a file that is not JSON settings and hooks of another shape alone', async () => {
  expect(await repointHttpHooks(join(dir, 'missing.json'), 'claude', 5000)).toBeUndefined();
  for (const text of ['{"hooks": ', '[1]', '{"hooks": [1]}', '{"hooks": {"PreToolUse": [null, {"hooks": "x"}, {"hooks": [null, 7]}]}}']) {
    const file = join(dir, 'odd.json');
    await writeFile(file, text);
    expect(await repointHttpHooks(file, 'claude', 5000)).toBeUndefined();
    expect(await readFile(file, 'utf8')).toBe(text);
  }
});

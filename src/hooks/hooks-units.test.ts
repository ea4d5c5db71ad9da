// Small pure parts of the hook adapter: which argument lists take the lean hook path, which commands
// are ckpt's own hooks (uninstall removes exactly those), and the hook log's size bound.
import { mkdtemp, readdir, rm, stat, readFile } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../index.js';
import { hookMain, parseHookArgs } from './hook-main.js';
import { isCkptHookCommand, uninstallHooks } from './install/merge-hooks.js';
import { uninstallFlatHooks } from './install/merge-flat-hooks.js';
import { appendHookLog } from './hook-log.js';

describe('hook adapter units', () => {
  it('only an exact hook call takes the lean path', () => {
    expect(parseHookArgs(['hook', 'claude'])).toEqual({ agent: 'claude' });
    expect(parseHookArgs(['--store', '/s', '--workspace=/w', 'hook', 'gemini'])).toEqual({ agent: 'gemini', store: '/s', workspace: '/w' });
    expect(parseHookArgs(['--store', '/s', 'hook', 'claude', '--daemon'])).toEqual({ agent: 'claude', store: '/s', daemon: true });
    for (const argv of [['hook'], ['hook', 'claude', '--json'], ['hook', 'claude', '--daemon', '--daemon'], ['--json', 'hook', 'claude'], ['capture', 'hook'], ['--store'], ['hook', '--help']]) {
      expect(parseHookArgs(argv), argv.join(' ')).toBeUndefined();
    }
  });

  it("recognises ckpt's hook commands, and no one else's", () => {
    for (const c of ['/usr/bin/node /opt/ckpt/bin/ckpt.js hook claude', '/usr/bin/node /opt/ckpt/bin/ckpt.js hook claude --daemon', "'/a b/node' '/x y/bin/ckpt.js' --store '/s t' hook claude", 'npx -y ckpt hook claude', 'ckpt hook claude', '/opt/ckpt/bin/ckpt-hook.sh /usr/bin/node hook claude --daemon', "'/x y/bin/ckpt-hook.sh' '/a b/node' --store '/s t' hook claude --daemon"]) {
      expect(isCkptHookCommand(c, 'claude'), c).toBe(true);
    }
    for (const c of ['npx prettier --write', 'ckpt hook gemini', 'echo hook claude', '/bin/mckpt hook claudex', '/opt/ckpt/bin/ckpt-hook.sh /usr/bin/node hook gemini', 42]) {
      expect(isCkptHookCommand(c, 'claude'), String(c)).toBe(false);
    }
  });

  it('uninstall takes out exactly ckpt\'s hooks, in both settings shapes, and keeps what the user wrote (an empty event list too)', () => {
    const ckpt = { type: 'command', command: 'node /x/bin/ckpt.js hook claude' };
    const mine = { type: 'command', command: 'echo mine' };
    const grouped = { hooks: { Stop: [], PreToolUse: [{ matcher: '*', hooks: [ckpt] }, { matcher: 'Bash', hooks: [mine, ckpt] }], PostToolUse: [{ hooks: [ckpt] }] }, other: 1 };
    expect(uninstallHooks(grouped, 'claude', 'f')).toEqual({
      value: { hooks: { Stop: [], PreToolUse: [{ matcher: 'Bash', hooks: [mine] }] }, other: 1 },
      changes: ['removed PreToolUse (matcher Bash)', 'removed PreToolUse (matcher *)', 'removed PostToolUse'],
    });
    const flat = { version: 1, hooks: { stop: [], preToolUse: [{ command: ckpt.command }, { command: 'echo mine' }], postToolUse: [{ command: ckpt.command }] } };
    expect(uninstallFlatHooks(flat, 'claude', 'f')).toEqual({
      value: { version: 1, hooks: { stop: [], preToolUse: [{ command: 'echo mine' }] } },
      changes: ['removed preToolUse', 'removed postToolUse'],
    });
    expect(uninstallHooks({ hooks: { Stop: [{ hooks: [ckpt] }] } }, 'claude', 'f')).toEqual({ value: {}, changes: ['removed Stop'] });
  });

  it('the hook log stays under its bound and keeps the newest entries', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ckpt-hooklog-'));
    try {
      const store = await openStore({ dir });
      const message = 'x'.repeat(2000);
      for (let i = 0; i < 700; i++) await appendHookLog(store, { agent: 'claude', code: 'IO', message: `${i} ${message}` });
      expect((await stat(join(dir, 'hooks.log'))).size).toBeLessThanOrEqual(1024 * 1024);
      const lines = (await readFile(join(dir, 'hooks.log'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { message: string });
      expect(lines.at(-1)!.message.startsWith('699 ')).toBe(true);
      expect(lines.length).toBeGreaterThan(200);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a shared store URL given to --store is used as a URL, never made into a local folder', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ckpt-hook-url-'));
    try {
      const out: string[] = [];
      const sink = (into: string[]) => new Writable({ write: (c, _e, cb) => (into.push(String(c)), cb()) });
      const event = JSON.stringify({ session_id: 's', cwd, hook_event_name: 'UserPromptSubmit', prompt: 'hi', transcript_path: join(cwd, 't.jsonl') });
      // Nothing listens on port 1: the hook fails (exit 0, a systemMessage), as with any unreachable store.
      const code = await hookMain(
        { agent: 'claude', store: 'postgres://ckpt@127.0.0.1:1/ckpt?blobs=s3://b&endpoint=http://127.0.0.1:1' },
        { stdin: Readable.from([event]), stdout: sink(out), stderr: sink([]), env: { CKPT_HOOK_LOCK_TIMEOUT_MS: '2000' }, cwd },
      );
      expect(code).toBe(0);
      expect(out.join('')).toContain('systemMessage');
      // Before the fix the URL was resolved against cwd: a store folder `postgres:` appeared here.
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

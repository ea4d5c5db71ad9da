// The hook client that starts the store's daemon (`ckpt hook <agent> --daemon`) sends its output to
// daemon/serve.log. It opened that file with a plain append, following a symlink planted there (or a
// `daemon` folder replaced by a link; an agent can plant one when the store lies inside its
// workspace): the daemon's output went to the link's target, outside the store (a probe, 2026-12-06;
// DESIGN §6: no store write follows a symlink below the store root). Now no log is written then.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon } from '../src/hooks/client/hook-client.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let fake: string;
/** A store folder (the hook client's log is a file beside the claim, also under test:shared). */
let store: string;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-serve-log-');
  // Stands for `ckpt serve`: prints a line and exits.
  store = join(dirs.base, 'store-folder');
  fake = join(dirs.base, 'fake-serve.cjs');
  writeFileSync(fake, "console.log('daemon output');\n");
});

afterEach(async () => {
  await dirs.cleanup();
});

/** Starts the fake daemon as the hook client would, and waits until it has surely written. */
async function start(): Promise<void> {
  startDaemon(store, fake, process.env, 1);
  await new Promise((r) => setTimeout(r, 1500));
}

describe('the daemon started by a hook client', () => {
  it('logs to daemon/serve.log', async () => {
    await start();
    expect(readFileSync(join(store, 'daemon', 'serve.log'), 'utf8')).toBe('daemon output\n');
  });

  it('writes nothing through a link planted at daemon/serve.log', async () => {
    mkdirSync(join(store, 'daemon'), { recursive: true });
    const victim = join(dirs.base, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, join(store, 'daemon', 'serve.log'));
    await start();
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('writes nothing through a daemon folder replaced by a link', async () => {
    const elsewhere = join(dirs.base, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(store, { recursive: true });
    symlinkSync(elsewhere, join(store, 'daemon'));
    await start();
    expect(() => readFileSync(join(elsewhere, 'serve.log'))).toThrow(/ENOENT/);
  });
});

describe('the note of hooks recording in-process', () => {
  const run = async (event: Record<string, unknown>) => {
    const { Readable, PassThrough } = await import('node:stream');
    const { hookClient } = await import('../src/hooks/client/hook-client.js');
    const io = { stdin: Readable.from([Buffer.from(JSON.stringify(event))]), stdout: new PassThrough(), stderr: new PassThrough(), env: { ...process.env, CKPT_NO_DAEMON: '' }, cwd: dirs.base, script: fake };
    return hookClient({ agent: 'gemini', store, daemon: true }, io);
  };

  it('is not given by an event that starts the daemon (a fresh install), but by the first later one that finds none, once', async () => {
    const started = await run({ hook_event_name: 'SessionStart', session_id: 's', cwd: dirs.base });
    expect(started).not.toHaveProperty('note');
    await new Promise((r) => setTimeout(r, 1500)); // the stand-in daemon has come and gone
    const tool = await run({ hook_event_name: 'BeforeTool', session_id: 's', cwd: dirs.base, tool_name: 'write_file', tool_input: { file_path: 'a' } });
    expect(tool).toMatchObject({ note: expect.stringContaining('its daemon is not running') });
    const again = await run({ hook_event_name: 'AfterTool', session_id: 's', cwd: dirs.base, tool_name: 'write_file', tool_input: { file_path: 'a' } });
    expect(again).not.toHaveProperty('note');
  });

  it('is given by the event that starts the daemon again after one was killed (its claim left behind)', async () => {
    const { spawnSync } = await import('node:child_process');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid; // a process that has exited
    mkdirSync(join(store, 'daemon'), { recursive: true });
    writeFileSync(join(store, 'daemon', 'daemon.json'), JSON.stringify({ pid: dead, host: '127.0.0.1', port: 1 }));
    const prompt = await run({ hook_event_name: 'BeforeAgent', session_id: 's', cwd: dirs.base, prompt: 'go' });
    expect(prompt).toMatchObject({ note: expect.stringContaining('its daemon is not running') });
    await new Promise((r) => setTimeout(r, 1500)); // the stand-in daemon has come and gone
  });
});

// A command that only reads never starts a store (2026-12-06, a newcomer's probe): a mistyped
// `--store` (or $CKPT_STORE) is NOT_FOUND naming the folder, exit 3, and nothing is made there — it
// used to create the folder with an empty store and then answer "no session". The default location,
// not there yet on a fresh machine, reads as an empty store and is not made either. A command that
// records still starts the store.
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
/** No store from the environment: only what a test passes. */
const bare = { CKPT_STORE: '', CKPT_HOME: '', XDG_DATA_HOME: '' };
const ckpt = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: dirs.workspace, env: { ...bare, HOME: join(dirs.base, 'home'), ...env } });

/** Every command that only reads the store (CommandSpec.reads). */
const READS: string[][] = [
  ['log'],
  ['log', '--all'],
  ['status'],
  ['diff', '0'],
  ['show', '0'],
  ['cat', '0', 'a.txt'],
  ['conflicts'],
  ['owner', 'a.txt'],
  ['session', 'list'],
  ['session', 'show'],
  ['session', 'tree'],
  ['session', 'children', 'x'],
  ['conversation', 'show'],
  ['conversation', 'messages'],
  ['workspace', 'list'],
  ['verify'],
  ['stats'],
  ['export', 'x', '0', 'out'],
];

/**
 * Every command that writes only into what a store holds already (CommandSpec.existing): a session, a
 * workspace, blobs. They made the mistyped folder with an empty store, then failed SESSION_NOT_FOUND.
 */
const NEEDS_EXISTING: string[][] = [
  ['turn'],
  ['capture', 'a.txt'],
  ['settle', 'a.txt'],
  ['scan'],
  ['restore', '0'],
  ['restore', '0', '--dry-run'],
  ['undo', '0', 'a.txt'],
  ['rewind', '0'],
  ['session', 'end'],
  ['session', 'title', 'x', 'y'],
  ['session', 'fork'],
  ['session', 'fork', 'x', '--from-workspace', 'abc'],
  ['session', 'rm', 'x'],
  ['conversation', 'append', '{"type":"message"}'],
  ['conversation', 'compact', '--summary', 's'],
  ['prune'],
  ['gc'],
  ['gc', '--dry-run'],
  ['workspace', 'rm', '--yes'],
];

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-store-missing-');
  await writeFile(join(dirs.workspace, 'a.txt'), 'a\n');
});
afterEach(() => dirs.cleanup());

describe('a store that is not there', () => {
  it('named by --store: every read command is NOT_FOUND naming the folder, and nothing is created', async () => {
    const typo = join(dirs.base, 'no-such', 'store');
    for (const args of READS) {
      const r = await ckpt(['--store', typo, '--json', ...args]);
      expect(r.code, args.join(' ')).toBe(3);
      const error = JSON.parse(r.stderr).error;
      expect(error.code, args.join(' ')).toBe('NOT_FOUND');
      expect(error.message).toContain(typo);
      expect(error.message).toContain('nothing was created');
      expect(existsSync(join(dirs.base, 'no-such')), args.join(' ')).toBe(false);
    }
    expect(existsSync(join(dirs.workspace, 'out'))).toBe(false);
  });

  it('named by $CKPT_STORE, or an empty folder: the same, and the folder is left as it was', async () => {
    const r = await ckpt(['log'], { CKPT_STORE: join(dirs.base, 'typo') });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/\[NOT_FOUND\] no ckpt store at .*typo/);
    expect(existsSync(join(dirs.base, 'typo'))).toBe(false);

    const empty = join(dirs.base, 'empty');
    await mkdir(empty);
    expect((await ckpt(['--store', empty, 'status'])).code).toBe(3);
    expect(await readdir(empty)).toEqual([]);
  });

  it('at the default location (a fresh machine): reads answer as from an empty store and make nothing', async () => {
    const status = await ckpt(['status', '--json']);
    expect(status.code).toBe(0);
    expect(status.json()).toMatchObject({ session: null, store: join(dirs.base, 'home', '.local', 'share', 'ckpt') });
    expect((await ckpt(['session', 'list', '--json'])).json().sessions).toEqual([]);
    expect((await ckpt(['workspace', 'list', '--json'])).json().workspaces).toEqual([]);
    expect((await ckpt(['verify', '--json'])).json().ok).toBe(true);
    const log = await ckpt(['log', '--json']);
    expect(log.code).toBe(3);
    expect(JSON.parse(log.stderr).error.code).toBe('SESSION_NOT_FOUND');
    expect(existsSync(join(dirs.base, 'home'))).toBe(false);
    // $CKPT_HOME is the default location too (DESIGN §2), not a store the user named.
    expect((await ckpt(['session', 'list'], { CKPT_HOME: join(dirs.base, 'ckpt-home') })).code).toBe(0);
    expect(existsSync(join(dirs.base, 'ckpt-home'))).toBe(false);
  });

  it('named by --store: every command that needs what a store holds is NOT_FOUND too, and nothing is created', async () => {
    const typo = join(dirs.base, 'no-such', 'store');
    for (const args of NEEDS_EXISTING) {
      const r = await ckpt(['--store', typo, '--json', ...args]);
      expect(r.code, args.join(' ')).toBe(3);
      const error = JSON.parse(r.stderr).error;
      expect(error.code, args.join(' ')).toBe('NOT_FOUND');
      expect(error.message, args.join(' ')).toContain(typo);
      expect(error.message).toContain('nothing was created');
      expect(existsSync(join(dirs.base, 'no-such')), args.join(' ')).toBe(false);
    }
    const r = await ckpt(['turn'], { CKPT_STORE: join(dirs.base, 'typo') });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/\[NOT_FOUND\] no ckpt store at .*typo/);
    expect(existsSync(join(dirs.base, 'typo'))).toBe(false);
  });

  it('at the default location (a fresh machine): they fail as in an empty store (gc has nothing to do) and make nothing', async () => {
    for (const args of NEEDS_EXISTING) {
      const r = await ckpt(['--json', ...args]);
      if (args[0] === 'gc') {
        expect(r.code, args.join(' ')).toBe(0);
        expect(r.json().deleted).toBe(0);
      } else {
        expect(r.code, args.join(' ')).toBe(3);
        expect(JSON.parse(r.stderr).error.code, args.join(' ')).toMatch(/^(SESSION_)?NOT_FOUND$/);
      }
      expect(existsSync(join(dirs.base, 'home')), args.join(' ')).toBe(false);
    }
  });

  it('a command that records still starts the store, and reads find it then', async () => {
    const store = join(dirs.base, 'new-store');
    expect((await ckpt(['--store', store, 'session', 'new'])).code).toBe(0);
    expect(existsSync(join(store, 'store.json'))).toBe(true);
    expect((await ckpt(['--store', store, 'log'])).code).toBe(0);
  });
});

describe("a store.json whose format is not this ckpt's", () => {
  it('any JSON value there is INVALID_ARGUMENT naming it, never INTERNAL (the fuzz suite: {"toString": false} made String() throw)', async () => {
    const store = join(dirs.base, 'odd-store');
    await mkdir(store);
    for (const format of [{ toString: false }, [1, 2], null, 'two', 2, true]) {
      await writeFile(join(store, 'store.json'), JSON.stringify({ format, createdAt: '2026-12-07T00:00:00.000Z' }));
      const r = await ckpt(['--store', store, 'session', 'list', '--json']);
      expect([format, r.code]).toEqual([format, 2]);
      expect(JSON.parse(r.stderr).error).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('store format') });
    }
  });
});

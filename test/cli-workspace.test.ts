// Finding the workspace and the session (issue 10, items 16–17): from a subfolder the workspace is
// found upward — the nearest folder with a session in the store, else the git top level, else the
// current folder — and --workspace still overrides; a unique prefix names a session, an ambiguous
// one is INVALID_ARGUMENT listing the candidates.
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { libSession } from './helpers/lib-session.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[], cwd = dirs.workspace) => runCli(['--store', dirs.store, ...args], { cwd });
const workspaceOf = async (cwd: string) => (await ckpt(['session', 'new', '--json'], cwd)).json().session.workspace as string;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-ws-');
});
afterEach(() => dirs.cleanup());

describe('workspace discovery', () => {
  it('from a subfolder finds the nearest folder upward that has a session, and records paths relative to it', async () => {
    const top = await libSession(dirs.store, dirs.workspace, 'top');
    const deep = join(dirs.workspace, 'src', 'deep');
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, 'x.ts'), 'one\n');
    const shown = (await ckpt(['session', 'show', '--json'], deep)).json();
    expect(shown.session).toMatchObject({ id: 'top', workspace: dirs.workspace });
    await top.turn();
    const cap = (await ckpt(['capture', 'x.ts', '--json'], deep)).json();
    expect(cap.files[0].path).toBe('src/deep/x.ts');
    await writeFile(join(deep, 'x.ts'), 'two\n');
    expect((await ckpt(['undo', '1', 'x.ts'], deep)).code).toBe(0);
    expect(await readFile(join(deep, 'x.ts'), 'utf8')).toBe('one\n');
    // `workspace rm` without a folder drops the workspace found the same way, not the subfolder.
    const removed = (await ckpt(['workspace', 'rm', '--yes', '--json'], deep)).json();
    expect(removed.removed).toMatchObject({ root: dirs.workspace, sessions: 1 });
  });

  it('without a session above, takes the git top level; outside git, the current folder; --workspace overrides', async () => {
    const repo = join(dirs.base, 'repo');
    const sub = join(repo, 'pkg', 'lib');
    await mkdir(sub, { recursive: true });
    execFileSync('git', ['init', '-q', repo]);
    expect(await workspaceOf(sub)).toBe(repo);

    const plain = join(dirs.base, 'plain', 'inner');
    await mkdir(plain, { recursive: true });
    expect(await workspaceOf(plain)).toBe(plain);

    const explicit = (await ckpt(['--workspace', '..', 'session', 'new', '--json'], plain)).json();
    expect(explicit.session.workspace).toBe(join(dirs.base, 'plain'));
  });

  it('a session in a folder inside a git repository wins over the git top level (nearest first)', async () => {
    const repo = join(dirs.base, 'mono');
    const pkg = join(repo, 'packages', 'a');
    await mkdir(join(pkg, 'src'), { recursive: true });
    execFileSync('git', ['init', '-q', repo]);
    // Inside a git repository a new session goes to the top level unless a workspace is named.
    expect(await workspaceOf(pkg)).toBe(repo);
    await ckpt(['--workspace', '.', 'session', 'new', '--id', 'pkg-a'], pkg);
    const shown = (await ckpt(['session', 'show', '--json'], join(pkg, 'src'))).json();
    expect(shown.session).toMatchObject({ id: 'pkg-a', workspace: pkg });
  });
});

describe('session id prefixes', () => {
  it('a unique prefix names the session (--session, show, fork, rm); an ambiguous one lists the candidates', async () => {
    for (const id of ['alpha-1111', 'alpha-2222', 'beta-3333']) await libSession(dirs.store, dirs.workspace, id);
    expect((await ckpt(['--session', 'alpha-1', 'session', 'show', '--json'])).json().session.id).toBe('alpha-1111');
    expect((await ckpt(['session', 'show', 'beta', '--json'])).json().session.id).toBe('beta-3333');
    expect((await ckpt(['--session', 'alpha-2', 'turn', '--json'])).json()).toEqual({ turn: 1, tag: '1' });

    const ambiguous = await ckpt(['--session', 'alpha', 'log', '--json']);
    expect(ambiguous.code).toBe(2);
    const err = JSON.parse(ambiguous.stderr).error;
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect([...err.data.candidates].sort()).toEqual(['alpha-1111', 'alpha-2222']);

    const none = await ckpt(['--session', 'gamma', 'log', '--json']);
    expect(none.code).toBe(3);
    expect(JSON.parse(none.stderr).error.code).toBe('SESSION_NOT_FOUND');

    expect((await ckpt(['session', 'rm', 'beta', '--json'])).json()).toEqual({ removed: 'beta-3333' });
    const ids = (await ckpt(['session', 'list', '--json'])).json().sessions.map((s: { id: string }) => s.id);
    expect(ids.sort()).toEqual(['alpha-1111', 'alpha-2222']);
  });
});

// `ckpt init <agent> --uninstall` takes away the folders init made for ckpt's file (newcomer probe:
// `.claude/`, `.codex/`, `.github/hooks/`, `.opencode/plugins/`… were left empty), deepest first, and
// nothing else: a folder holding anything else stays, a symlinked one is not followed, `~/.config`
// stays; a dry run names them and removes nothing. Real files in temp folders, the real CLI.
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stopStoreDaemon } from './agents/harness/stop-store-daemon.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
let project: string;
let home: string;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: project, env: { HOME: home, CKPT_DAEMON_IDLE_EXIT: '60' } });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-init-folders-');
  project = dirs.workspace;
  home = join(dirs.base, 'home');
  await mkdir(home);
});
afterEach(async () => {
  await stopStoreDaemon(dirs.store); // the daemon `init` started, if any
  await dirs.cleanup();
});

const AGENTS: [string, string[]][] = [
  ['claude', ['.claude']],
  ['codex', ['.codex']],
  ['gemini', ['.gemini']],
  ['cursor', ['.cursor']],
  ['copilot', ['.github/hooks', '.github']],
  ['opencode', ['.opencode/plugins', '.opencode']],
];

describe('ckpt init <agent> --project --uninstall', () => {
  it.each(AGENTS)('%s: the folders init made are gone, deepest first; a dry run names them and removes nothing', async (agent, made) => {
    await writeFile(join(project, 'a.txt'), 'mine\n');
    const init = await ckpt(['init', agent, '--project', '--json']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.json().removedFolders).toBeUndefined();
    const dry = await ckpt(['init', agent, '--project', '--uninstall', '--dry-run', '--json']);
    expect(dry.json()).toMatchObject({ changed: true, dryRun: true, removedFolders: made.map((d) => join(project, d)) });
    expect(existsSync(init.json().file)).toBe(true);
    const text = await ckpt(['init', agent, '--project', '--uninstall', '--dry-run']);
    expect(text.stdout).toContain(`would remove the empty folder ${join(project, made[0]!)}`);

    const r = await ckpt(['init', agent, '--project', '--uninstall', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().removedFolders).toEqual(made.map((d) => join(project, d)));
    expect((await readdir(project)).sort()).toEqual(['a.txt']);
    // Nothing left to remove: no field, as before.
    expect((await ckpt(['init', agent, '--project', '--uninstall', '--json'])).json()).toMatchObject({ changed: false });
  });

  it('a folder holding anything else stays, as does every folder above it', async () => {
    await mkdir(join(project, '.github', 'workflows'), { recursive: true });
    await writeFile(join(project, '.github', 'workflows', 'ci.yml'), 'on: push\n');
    await ckpt(['init', 'copilot', '--project']);
    expect((await ckpt(['init', 'copilot', '--project', '--uninstall', '--json'])).json().removedFolders).toEqual([join(project, '.github', 'hooks')]);
    expect(await readdir(join(project, '.github'))).toEqual(['workflows']);

    await mkdir(join(project, '.claude', 'agents'), { recursive: true });
    await writeFile(join(project, '.claude', 'agents', 'reviewer.md'), 'review\n');
    await ckpt(['init', 'claude', '--project']);
    const r = (await ckpt(['init', 'claude', '--project', '--uninstall', '--json'])).json();
    expect(r.changed).toBe(true);
    expect(r.removedFolders).toBeUndefined();
    expect(await readdir(join(project, '.claude'))).toEqual(['agents']);
  });

  it('a symlinked folder is not followed: the link and the folder it leads to stay', async () => {
    const elsewhere = join(dirs.base, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, join(project, '.codex'));
    await ckpt(['init', 'codex', '--project']);
    const r = (await ckpt(['init', 'codex', '--project', '--uninstall', '--json'])).json();
    expect(r.changed).toBe(true);
    expect(r.removedFolders).toBeUndefined();
    expect((await lstat(join(project, '.codex'))).isSymbolicLink()).toBe(true);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('--user: opencode\'s own folders go, ~/.config stays', async () => {
    await ckpt(['init', 'opencode', '--user']);
    const r = (await ckpt(['init', 'opencode', '--user', '--uninstall', '--json'])).json();
    expect(r.removedFolders).toEqual([join(home, '.config', 'opencode', 'plugins'), join(home, '.config', 'opencode')]);
    expect(await readdir(join(home, '.config'))).toEqual([]);
  });

  it('an uninstall that keeps the file (other settings in it) keeps its folder', async () => {
    await mkdir(join(project, '.gemini'));
    await writeFile(join(project, '.gemini', 'settings.json'), '{"theme":"dark"}\n');
    await ckpt(['init', 'gemini', '--project']);
    const r = (await ckpt(['init', 'gemini', '--project', '--uninstall', '--json'])).json();
    expect(r.removedFolders).toBeUndefined();
    expect(JSON.parse(await readFile(join(project, '.gemini', 'settings.json'), 'utf8'))).toEqual({ theme: 'dark' });
  });
});

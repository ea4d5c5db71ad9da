// Usage errors and help (issue 10, items 14 and 19): no subcommand prints help, not an error; with
// --json every run prints exactly one JSON document (usage errors included, no usage text around
// it); `<cmd> --help` lists the global options and the tag syntax.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/main.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[]) => runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-usage-');
});
afterEach(() => dirs.cleanup());

/** Asserts the run printed one JSON document in all (on `stream`) and nothing on the other stream. */
function oneDocument(r: { stdout: string; stderr: string }, stream: 'stdout' | 'stderr'): Record<string, unknown> {
  const other = stream === 'stdout' ? r.stderr : r.stdout;
  expect(other).toBe('');
  return JSON.parse(r[stream]) as Record<string, unknown>;
}

describe('no subcommand', () => {
  it('prints the help and exits 0 (no "(outputHelp)" error); a command group without its subcommand too', async () => {
    const r = await ckpt([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: ckpt');
    expect(r.stdout).toContain('restore');
    expect(r.stderr).toBe('');
    const group = await ckpt(['session']);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('Usage: ckpt session');
    expect(group.stdout + group.stderr).not.toMatch(/outputHelp|INVALID_ARGUMENT/);
  });

  it('with --json is one JSON error: INVALID_ARGUMENT, exit 2', async () => {
    const r = await ckpt(['--json']);
    expect(r.code).toBe(2);
    expect(oneDocument(r, 'stderr')).toMatchObject({ error: { code: 'INVALID_ARGUMENT', message: 'no command given' } });
  });
});

describe('--json means one JSON document', () => {
  it.each([
    [['restore', '--json'], "missing required argument 'tag'"],
    [['bogus', '--json'], "unknown command 'bogus'"],
    [['session', 'list', '--bogus', '--json'], "unknown option '--bogus'"],
    [['--json', 'diff'], "missing required argument 'from'"],
  ])('usage error %j: the JSON error alone on stderr, no usage text', async (args, message) => {
    const r = await ckpt(args);
    expect(r.code).toBe(2);
    const doc = oneDocument(r, 'stderr') as { error: { code: string; message: string } };
    expect(doc.error.code).toBe('INVALID_ARGUMENT');
    expect(doc.error.message).toContain(message);
  });

  it('--help and --version with --json are JSON documents on stdout', async () => {
    const help = await ckpt(['restore', '--help', '--json']);
    expect(help.code).toBe(0);
    expect((oneDocument(help, 'stdout') as { help: string }).help).toContain('Usage: ckpt restore');
    const version = await ckpt(['--version', '--json']);
    expect(oneDocument(version, 'stdout')).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it('without --json a usage error is one line with the code and a pointer to the help', async () => {
    const r = await ckpt(['restore']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error \[INVALID_ARGUMENT\] missing required argument 'tag'\nrun 'ckpt restore --help' for usage\n$/);
  });
});

describe('help of a command', () => {
  it.each([['restore'], ['diff'], ['session fork']])('%s --help lists the global options and the tag syntax', async (cmd) => {
    const r = await ckpt([...cmd.split(' '), '--help']);
    expect(r.code).toBe(0);
    for (const global of ['--store <dir|url>', '--workspace <dir>', '--session <id>', '--json']) expect(r.stdout).toContain(global);
    expect(r.stdout).toMatch(/N\.K +just before the K-th capture of turn N/);
    expect(r.stdout).toMatch(/@S +just after the event with sequence number S/);
  });

  it('store copy <from> <to> takes stores, not tags: its help and usage pointer have no tag syntax', async () => {
    for (const args of [['store', 'copy', '--help'], ['help', 'store', 'copy']]) {
      const r = await ckpt(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Usage: ckpt store copy');
      expect(r.stdout).not.toContain('Tags name points');
    }
  });

  it('the tag syntax follows the help of exactly the commands that take a tag (and of ckpt)', () => {
    const io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {}, cwd: dirs.workspace, invokedAs: 'ckpt' };
    const withTags: string[] = [];
    const walk = (cmd: Command, path: string): void => {
      for (const sub of cmd.commands) {
        const name = `${path} ${sub.name()}`.trim();
        let help = '';
        sub.configureOutput({ writeOut: (s) => void (help += s), writeErr: (s) => void (help += s) }).outputHelp();
        if (help.includes('Tags name points')) withTags.push(name);
        walk(sub, name);
      }
    };
    walk(buildProgram(io), '');
    expect(withTags.sort()).toEqual(['cat', 'diff', 'export', 'restore', 'rewind', 'session fork', 'settle', 'show', 'undo']);
  });

  it('hook --help names the agents it takes, as init --help does', async () => {
    for (const cmd of ['hook', 'init']) {
      const r = await ckpt([cmd, '--help']);
      expect(r.stdout.replace(/\s+/g, ' ')).toContain('(claude, codex, copilot, cursor, gemini, opencode');
    }
  });

  it('status --help lists the global options too', async () => {
    const r = await ckpt(['status', '--help']);
    expect(r.stdout).toContain('Global Options');
    expect(r.stdout).toContain('--session <id>');
  });
});

describe('help for a command that does not exist (newcomer probe)', () => {
  it.each([
    [['help', 'nope'], 'ckpt', 'nope'],
    [['nope', '--help'], 'ckpt', 'nope'],
    [['session', 'help', 'nope'], 'ckpt session', 'nope'],
    [['help', 'session', 'nope'], 'ckpt session', 'nope'],
    [['session', 'nope', '--help'], 'ckpt session', 'nope'],
  ])('%j says the command is unknown and exits 2, as `ckpt nope` does', async (args, group, name) => {
    const r = await ckpt(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`error [INVALID_ARGUMENT] unknown command '${name}'`);
    expect(r.stderr).toContain(`run '${group} --help' for usage`);
    expect(r.stderr).not.toContain('Usage:');
  });

  it('keeps commander\'s suggestion of a close name, and is one JSON error with --json', async () => {
    const r = await ckpt(['help', 'restor']);
    expect(r.stderr).toContain("unknown command 'restor'\n(Did you mean restore?)");
    const sub = await ckpt(['help', 'session', 'lis', '--json']);
    expect(sub.code).toBe(2);
    expect(oneDocument(sub, 'stderr')).toMatchObject({
      error: { code: 'INVALID_ARGUMENT', message: "unknown command 'lis'\n(Did you mean one of list, ls?)", data: { usage: 'ckpt session --help' } },
    });
  });

  it('help of a real command still exits 0: help, help restore, help session list (its own help), help help', async () => {
    for (const [args, usage] of [
      [['help'], 'Usage: ckpt [options] [command]'],
      [['help', 'restore'], 'Usage: ckpt restore'],
      [['restore', '--help'], 'Usage: ckpt restore'],
      [['help', 'session', 'list'], 'Usage: ckpt session list'],
      [['session', 'help', 'fork'], 'Usage: ckpt session fork'],
      [['help', 'help'], 'Usage: ckpt [options] [command]'],
    ] as const) {
      const r = await ckpt([...args]);
      expect([args, r.code, r.stderr]).toEqual([args, 0, '']);
      expect(r.stdout).toContain(usage);
    }
  });

  it('help asked for on purpose with --json is a {"help"} document, as --help is', async () => {
    const r = await ckpt(['--json', 'help', 'restore']);
    expect(r.code).toBe(0);
    expect((oneDocument(r, 'stdout') as { help: string }).help).toContain('Usage: ckpt restore');
  });
});

describe('a bad flag value is a usage error before any look-up', () => {
  it.each([
    [['scan', '--budget', 'x'], '--budget must be a non-negative integer'],
    [['turn', '--message-count', 'x'], '--message-count must be a non-negative integer'],
    [['status', '--limit', 'x'], '--limit must be a non-negative integer'],
  ])('%j in a workspace without a session: INVALID_ARGUMENT, exit 2 (not SESSION_NOT_FOUND, 3)', async (args, message) => {
    const r = await ckpt([...args, '--json']);
    expect(r.code).toBe(2);
    expect(oneDocument(r, 'stderr')).toMatchObject({ error: { code: 'INVALID_ARGUMENT', message: expect.stringContaining(message) } });
  });
});

describe('a bad tag is a usage error before any look-up', () => {
  it.each([
    [['restore', 'x y z'], 'x y z'],
    [['undo', '1.x', 'a.txt'], '1.x'],
    [['rewind', '-1', '--dry-run'], '-1'],
    [['diff', '@@@'], '@@@'],
    [['diff', '0', '1..2'], '1..2'],
    [['show', 'HEAD'], 'HEAD'],
    [['cat', '@', 'a.txt'], '@'],
    [['settle', '--tag', 'last', 'a.txt'], 'last'],
    [['session', 'fork', '--at', 'x'], 'x'],
    [['export', 'x', '01', 'out'], '01'],
    [['restore', '1', '--dry-run'], undefined],
  ])('%j in a workspace without a session: INVALID_ARGUMENT naming the tag, exit 2 (not SESSION_NOT_FOUND, 3)', async (args, bad) => {
    // A store that exists, with a session in another folder: only this workspace has none.
    const other = join(dirs.base, 'other');
    await mkdir(other);
    expect((await ckpt(['--workspace', other, 'session', 'new'])).code).toBe(0);
    const r = await ckpt([...args, '--json']);
    const error = (oneDocument(r, 'stderr') as { error: { code: string; message: string; data: Record<string, unknown> } }).error;
    if (bad === undefined) {
      // A good tag still gets as far as the look-up.
      expect(r.code).toBe(3);
      expect(error.code).toBe('SESSION_NOT_FOUND');
      return;
    }
    expect(r.code, JSON.stringify(error)).toBe(2);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe(`invalid tag ${JSON.stringify(bad)}: expected N, N.K or @S`);
    expect(error.data.tag).toBe(bad);
  });
});

describe('a bad value names its option and the value the same way in every error', () => {
  it.each([
    [['turn', '--message-count', 'x'], '--message-count', 'x', { '--message-count': 'x' }],
    [['scan', '--budget', '1.5'], '--budget', '1.5', { '--budget': '1.5' }],
    [['status', '--limit', '-1'], '--limit', '-1', { limit: '-1' }],
    [['prune', '--keep-turns', '0'], '--keep-turns', '0', {}],
    [['prune', '--keep-checkpoints', 'x'], '--keep-checkpoints', 'x', {}],
    [['prune', '--older-than', '30'], '--older-than', '30', {}],
    [['gc', '--grace', 'soon'], '--grace', 'soon', {}],
    [['--max-file-size', 'big', 'status'], '--max-file-size', 'big', {}],
    [['conversation', 'compact', '--preserve-last', 'x'], '--preserve-last', 'x', {}],
    [['conversation', 'compact', '--summary', 's', '--through-seq', '-2'], '--through-seq', '-2', {}],
    [['session', 'list', '--kind', 'twig'], '--kind', 'twig', {}],
    [['serve', '--port', '70000'], '--port', '70000', { port: '70000' }],
    [['serve', '--idle-exit', '0'], '--idle-exit', '0', { idleExit: '0' }],
    [['serve', '--max-event-streams', '0'], '--max-event-streams', '0', { '--max-event-streams': '0' }],
    [['init', 'vim'], '<agent>', 'vim', { agent: 'vim' }],
    [['restore', 'x'], '<tag>', 'x', { tag: 'x' }],
    [['diff', '0', 'y'], '<to>', 'y', { tag: 'y' }],
    [['session', 'fork', '--at', 'z'], '--at', 'z', { tag: 'z' }],
    [['--session', ' ', 'log'], '--session', ' ', { flag: '--session' }],
    [['session', 'show', ''], '<id>', '', { flag: 'session id' }],
  ])('%j: INVALID_ARGUMENT with data.option and data.value, the keys it had kept', async (args, option, value, kept) => {
    const r = await ckpt([...args, '--json']);
    expect(r.code).toBe(2);
    const error = (oneDocument(r, 'stderr') as { error: { code: string; data: Record<string, unknown> } }).error;
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.data).toEqual({ ...kept, option, value });
  });

  it('from the environment: option names the variable', async () => {
    const r = await runCli(['--store', dirs.store, '--json', 'prune'], { cwd: dirs.workspace, env: { CKPT_KEEP_TURNS: 'many' } });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr).error.data).toEqual({ env: 'CKPT_KEEP_TURNS', option: 'CKPT_KEEP_TURNS', value: 'many' });
  });
});

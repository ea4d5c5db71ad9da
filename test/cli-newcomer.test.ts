// A new user's first hour (issue 29): short session ids (the random part, a unique prefix of it, as
// git and docker take short hashes), commands that say which session and workspace they show, a
// fork that says it became the default, `status` before any session, and output in words — `show`,
// deletes, renames and links in `log` and `diff`, a missing tag in turns. The real CLI, real files.
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../src/store.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[], cwd = dirs.workspace) => runCli(['--store', dirs.store, ...args], { cwd });
const w = (rel: string) => join(dirs.workspace, rel);
/** The store exists, empty: a read command never starts one (cli-store-missing.test.ts). */
const emptyStore = async () => (await openStore({ dir: dirs.store })).close();
const A = '20261202-005836-e460fbc0';
const B = '20261202-010102-e46a9d31';
const C = '20261202-011500-7f00c2aa';

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-newcomer-');
});
afterEach(() => dirs.cleanup());

describe('short session ids', () => {
  it('a unique prefix of the random part names a session; an ambiguous one lists the candidates; whole-id prefixes work as before', async () => {
    for (const id of [A, B, C]) expect((await ckpt(['session', 'new', '--id', id])).code).toBe(0);
    expect((await ckpt(['--session', '7f', 'session', 'show', '--json'])).json().session.id).toBe(C);
    expect((await ckpt(['--session', 'e460', 'turn', '--json'])).json()).toEqual({ turn: 1, tag: '1' });
    expect((await ckpt(['session', 'show', 'e46a', '--json'])).json().session.id).toBe(B);

    const ambiguous = await ckpt(['--session', 'e46', 'log', '--json']);
    expect(ambiguous.code).toBe(2);
    const err = JSON.parse(ambiguous.stderr).error;
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect([...err.data.candidates].sort()).toEqual([A, B]);
    const text = await ckpt(['--session', 'e46', 'log']);
    expect(text.stderr).toContain(`could be e460fbc0 (${A}), e46a9d31 (${B}); give more characters`);

    // A prefix of the whole id still wins (what was accepted before short ids).
    expect((await ckpt(['--session', '20261202-0115', 'session', 'show', '--json'])).json().session.id).toBe(C);
    expect((await ckpt(['--session', 'zzz', 'log', '--json'])).code).toBe(3);

    // An agent-linked id: the agent's own id is the short part.
    const linked = 'claude-2b7c3f9e-1d4a-4c8e-9f20-6a5b1c0d7e31';
    await ckpt(['session', 'new', '--id', linked]);
    expect((await ckpt(['--session', '2b7c', 'session', 'show', '--json'])).json().session.id).toBe(linked);

    const list = (await ckpt(['session', 'list'])).stdout;
    expect(list).toMatch(new RegExp(`^e460fbc0  root .* events.*${A}$`, 'm'));
    expect(list).toMatch(/^2b7c3f9e {2}root /m);
  });

  it('log and status name the session and workspace; a fork says it is now the default and how to go back', async () => {
    await ckpt(['session', 'new', '--id', A, '--title', 'fix parser']);
    await ckpt(['turn', '--text', 'first']);
    const log = await ckpt(['log']);
    expect(log.stdout.split('\n')[0]).toBe(`session e460fbc0 "fix parser" in ${dirs.workspace}  ${A}`);
    expect((await ckpt(['log', '--json'])).json()).toMatchObject({ session: A, workspace: dirs.workspace });
    const status = (await ckpt(['status'])).stdout.split('\n');
    expect(status[0]).toBe(`workspace ${dirs.workspace}`);
    expect(status[1]).toBe(`session   e460fbc0 "fix parser"  ${A}`);

    const fork = await ckpt(['session', 'fork', '--at', '1']);
    expect(fork.code, fork.stderr).toBe(0);
    const forkId = /into (\S+)/.exec(fork.stdout)![1]!;
    expect(fork.stdout).toContain(`the fork ${forkId} is now the default session: commands without --session act on it`);
    const back = /To work on the original, name it: (.+)$/m.exec(fork.stdout)![1]!;
    expect(back).toMatch(/--session e460fbc0 log$/);
    expect((await ckpt(['status'])).stdout).toContain(`session   ${forkId} "fix parser (fork)"`);
    // The printed command works: it names the original.
    const original = await runCli(back.split(' ').slice(2), { cwd: dirs.workspace });
    expect(original.stdout.split('\n')[0]).toContain(`session e460fbc0 "fix parser"`);
  });

  it('status before any session: "no session yet" with the next step, exit 0; a named missing session is still not found', async () => {
    await emptyStore();
    const r = await ckpt(['status']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('no session yet');
    expect(r.stdout).toMatch(/start one by hand: +\S+.* session new --title 'my task'/);
    expect(r.stdout).toMatch(/init claude/);
    const json = await ckpt(['status', '--json']);
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({ workspace: dirs.workspace, session: null, next: expect.stringContaining('session new') });
    expect((await ckpt(['--session', 'nope', 'status', '--json'])).code).toBe(3);
  });
});

describe('readable output', () => {
  it('log marks deletions, shows renames as a -> b and links by their target; JSON grows change, renamedFrom/To, target', async () => {
    await ckpt(['session', 'new', '--id', A]);
    await mkdir(w('src'));
    for (const f of ['a.txt', 'b.txt', 'src/c.txt']) await writeFile(w(f), `${f} content\n`);
    expect((await ckpt(['scan'])).code).toBe(0);
    await ckpt(['turn', '--text', 'tidy up']);
    await rm(w('b.txt'));
    await rename(w('src/c.txt'), w('src/d.txt'));
    await symlink('a.txt', w('link'));
    expect((await ckpt(['scan', '--tool', 'Bash'])).code).toBe(0);
    const text = (await ckpt(['log', '--files'])).stdout;
    expect(text).toMatch(/^ {2}1\.1 +Bash +b\.txt \(deleted\), link \(new link to a\.txt\), src\/c\.txt -> src\/d\.txt \(renamed\) /m);
    const files = (await ckpt(['log', '--json'])).json().checkpoints.find((c: { tag: string }) => c.tag === '1.1').files;
    expect(files).toEqual([
      { path: 'b.txt', state: 'file', change: 'deleted' },
      { path: 'link', state: 'absent', change: 'created', target: 'a.txt' },
      { path: 'src/c.txt', state: 'file', change: 'deleted', renamedTo: 'src/d.txt' },
      { path: 'src/d.txt', state: 'absent', change: 'created', renamedFrom: 'src/c.txt' },
    ]);
    expect((await ckpt(['show', '1'])).stdout).toMatch(/^ {2}next checkpoint 1\.1, a workspace scan after Bash, .*, recorded: b\.txt \(as it was\), link \(not there yet\)/m);
    // diff: a link is its target, not a line of content.
    expect((await ckpt(['diff', '1'])).stdout).toMatch(/^A link {2}link to a\.txt$/m);
    expect((await ckpt(['diff', '1', '--json'])).json().changes.find((c: { path: string }) => c.path === 'link')).toMatchObject({ status: 'A', link: { to: 'a.txt' } });
  });

  it('show says what a tag is in words; a missing tag is explained in turns', async () => {
    await ckpt(['session', 'new', '--id', A]);
    await ckpt(['turn', '--text', 'add a greeting']);
    await ckpt(['capture', '--tool', 'Write', 'greet.ts']);
    await writeFile(w('greet.ts'), 'hi\n');
    await ckpt(['settle', 'greet.ts']);
    const show = (await ckpt(['show', '1'])).stdout;
    expect(show).not.toMatch(/position @|considers|path\(s\)/);
    expect(show).toMatch(/^tag 1: the start of turn 1 "add a greeting", sent (just now|\d+ s ago) {2}\(event 2 of 4\)$/m);
    expect(show).toMatch(/^ {2}next checkpoint 1\.1, before Write, .*, recorded: greet\.ts \(not there yet\)$/m);
    expect(show).toMatch(/^ {2}restoring to 1 would put the 1 path recorded after it \(by 1 checkpoint\) back as they were then; \S+.* restore 1 --dry-run shows the plan$/m);
    expect((await ckpt(['show', '1.1'])).stdout).toMatch(/^tag 1\.1: just before checkpoint 1\.1, in turn 1 "add a greeting"/m);
    expect((await ckpt(['show', '@4'])).stdout).toMatch(/^tag @4: just after event 4 \(settle, .*\), in turn 1/m);
    expect((await ckpt(['show', '@4'])).stdout).toContain('restoring to @4 would change nothing');

    const missing = await ckpt(['show', '9']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('tag 9 not found: the session has turn 1 only');
    expect((await ckpt(['show', '1.5'])).stderr).toContain('tag 1.5 not found: turn 1 has checkpoints 1.1 to 1.1');
    expect((await ckpt(['show', '@40'])).stderr).toContain('tag @40 not found: the session has 4 event(s) (@1 to @4), turn 1 only');
    expect(JSON.parse((await ckpt(['show', '9', '--json'])).stderr).error.data).toEqual({ tag: '9', lastTurn: 1, lastSeq: 4 });
  });
});

describe('rewind (a new user trying the README)', () => {
  it('prints the watermark in words: the message count only when the turn recorded one, never "? messages"', async () => {
    await ckpt(['session', 'new', '--title', 'rewind']);
    await ckpt(['turn', '--text', 'first']);
    await writeFile(w('a.txt'), 'a\n');
    await ckpt(['scan', '--tool', 'Bash']);
    const plain = await ckpt(['rewind', '1']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^conversation rewound to turn 1 \(what came after is hidden, not deleted\)$/m);
    expect(plain.stdout).not.toContain('?');
    expect((await ckpt(['rewind', '1', '--json'])).json().watermark).toEqual({ turn: 1, messageCount: null });

    await ckpt(['turn', '--message-count', '12']);
    await writeFile(w('b.txt'), 'b\n');
    await ckpt(['scan', '--tool', 'Bash']);
    expect((await ckpt(['rewind', '2'])).stdout).toMatch(/^conversation rewound to turn 2, 12 messages \(what came after is hidden, not deleted\)$/m);
  });

  /** A session (`session new` flags), one turn and a recorded change, then `rewind 1 --fork`: its output and the fork's id. */
  async function rewindFork(newFlags: string[], id = A): Promise<{ stdout: string; fork: string }> {
    await ckpt(['session', 'new', '--id', id, ...newFlags]);
    await ckpt(['turn', '--text', 'first']);
    await writeFile(w('a.txt'), 'a\n');
    await ckpt(['scan', '--tool', 'Bash']);
    const r = await ckpt(['rewind', '1', '--fork']);
    expect(r.code, r.stderr).toBe(0);
    return { stdout: r.stdout, fork: /^continuing in fork (\S+)$/m.exec(r.stdout)![1]! };
  }

  it('rewind --fork says the fork is now the default session and how to name the original, as session fork does', async () => {
    const { stdout, fork } = await rewindFork([]);
    expect(stdout).toContain(`the fork ${fork.slice(-8)} is now the default session: commands without --session act on it`);
    const back = /To work on the original, name it: (.+)$/m.exec(stdout)![1]!;
    expect(back).toMatch(/--session e460fbc0 log$/);
    expect((await ckpt(['status', '--json'])).json().session).toBe(fork);
    const original = await runCli(back.split(' ').slice(2), { cwd: dirs.workspace });
    expect(original.stdout.split('\n')[0]).toContain('session e460fbc0');
  });

  it("rewind --fork of an agent's session says the agent's next prompt goes on in the original (a real-Claude probe)", async () => {
    // The session Claude's hooks record into: its id is derived from Claude's own session id.
    const { stdout, fork } = await rewindFork(['--agent', 'claude', '--external-id', 'conv-1'], 'claude-conv-1');
    expect(stdout).toContain(`the fork ${fork.slice(-8)} is the default session until claude's next prompt, which ckpt records in claude-conv-1 as before`);
  });

  it('rewind --fork of a session that only says which agent made it (no hooks record it): the fork is the default', async () => {
    const { stdout, fork } = await rewindFork(['--agent', 'claude']);
    expect(stdout).toContain(`the fork ${fork.slice(-8)} is now the default session`);
  });
});

describe('read-only commands in a folder ckpt never recorded (a new user trying commands)', () => {
  it('leave nothing in the store: no workspace appears in `workspace list` until a session is made; errors and texts as before', async () => {
    await emptyStore();
    const listed = async () => (await ckpt(['workspace', 'list', '--json'])).json().workspaces;
    const status = await ckpt(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.json()).toMatchObject({ workspace: dirs.workspace, session: null });
    for (const args of [['session', 'list'], ['session', 'tree'], ['conflicts'], ['log', '--all']]) {
      const r = await ckpt([...args, '--json']);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect((await ckpt(['session', 'list'])).stdout).toBe('no sessions in this workspace\n');
    expect((await ckpt(['log', '--all'])).stdout).toBe('no checkpoints yet\n');
    for (const args of [['log'], ['restore', '1'], ['diff', '1'], ['show', '1'], ['owner', 'a.txt'], ['cat', '1', 'a.txt'], ['turn'], ['scan'], ['capture', 'a.txt']]) {
      const r = await ckpt(args);
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr).toBe(`error [SESSION_NOT_FOUND] no session in workspace ${dirs.workspace} in the store ${dirs.store}; create one with 'ckpt session new' (or pick the store that has them: --store, $CKPT_STORE or $CKPT_HOME)\n`);
    }
    const named = await ckpt(['--session', 'nope', 'log', '--json']);
    expect(named.code).toBe(3);
    expect(JSON.parse(named.stderr).error).toEqual({ code: 'SESSION_NOT_FOUND', message: `session "nope" not found in workspace ${dirs.workspace}`, data: { session: 'nope' } });
    expect(await listed()).toEqual([]);

    expect((await ckpt(['session', 'new'])).code).toBe(0);
    expect((await listed()).map((w: { root: string }) => w.root)).toEqual([dirs.workspace]);
    expect((await ckpt(['status', '--json'])).json().session).toEqual(expect.any(String));
  });
});

describe('the verbs a newcomer reaches for', () => {
  it('`session create|ls|remove` and `workspace ls|remove` are `new`, `list` and `rm`; help names both; a typo suggests the alias', async () => {
    const made = await ckpt(['session', 'create', '--title', 'first', '--json']);
    expect(made.code, made.stderr).toBe(0);
    const id = made.json().session.id as string;
    expect((await ckpt(['session', 'ls', '--json'])).json().sessions.map((s: { id: string }) => s.id)).toEqual([id]);
    expect((await ckpt(['workspace', 'ls', '--json'])).json().workspaces.map((w: { root: string }) => w.root)).toEqual([dirs.workspace]);
    const help = (await ckpt(['session', '--help'])).stdout;
    for (const usage of ['new|create [options]', 'list|ls [options]', 'rm|remove [options] <id>']) expect(help).toContain(usage);
    const typo = await ckpt(['session', 'crate']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('(Did you mean create?)');
    expect((await ckpt(['session', 'remove', id])).code).toBe(0);
    expect((await ckpt(['session', 'list', '--json'])).json().sessions).toEqual([]);
    expect((await ckpt(['workspace', 'remove', '--yes', '--json'])).code).toBe(0);
    expect((await ckpt(['workspace', 'list', '--json'])).json().workspaces).toEqual([]);
  });
});

describe('a session of another workspace (README "Sharing a store": session fork SESSION --from-workspace WID)', () => {
  it('is named by a unique prefix there too; the fork says this folder was left alone and how to get the tree', async () => {
    await ckpt(['session', 'new', '--id', A]);
    await ckpt(['turn', '--text', 'first']);
    await writeFile(w('a.txt'), 'a1\n');
    await ckpt(['scan', '--tool', 'Bash']);
    await ckpt(['turn', '--text', 'second']);
    const wid = (await ckpt(['workspace', 'list', '--json'])).json().workspaces[0].id as string;
    const other = join(dirs.base, 'other');
    await mkdir(other);

    const fork = await ckpt(['session', 'fork', 'e460', '--from-workspace', wid], other);
    expect(fork.code, fork.stderr).toBe(0);
    expect(fork.stdout).toContain(`forked e460fbc0 at @`);
    expect(fork.stdout).toContain(`the files here were left as they are (the history is of workspace ${wid} ${dirs.workspace})`);
    expect(fork.stdout).not.toContain('the workspace is as it was');
    expect(fork.stdout).toContain(`The original, e460fbc0, stays in workspace ${wid}`);
    const json = await ckpt(['session', 'fork', 'e460f', '--from-workspace', wid, '--at', '2', '--json'], other);
    expect(json.json().session.forkedFrom).toMatchObject({ session: A, workspace: wid });
    // An unknown prefix there is still not found (exit 3).
    expect((await ckpt(['session', 'fork', 'zzz', '--from-workspace', wid], other)).code).toBe(3);

    // The command the fork names (the original's tree, from this folder) writes the tree of the tag into a new folder.
    const tree = join(dirs.base, 'tree');
    expect(fork.stdout).toMatch(/ckpt export e460fbc0 @\d+ DIR writes the whole tree/);
    const exported = await ckpt(['export', 'e460fbc0', '2', tree], other);
    expect(exported.code, exported.stderr).toBe(0);
    expect(await readFile(join(tree, 'a.txt'), 'utf8')).toBe('a1\n');
    // The fork's own tag at its fork point names the same tree: exported from the original's workspace.
    const forkId = json.json().session.id as string;
    const forkTree = join(dirs.base, 'fork-tree');
    const fromFork = await ckpt(['export', forkId, '2', forkTree, '--json'], other);
    expect(fromFork.code, fromFork.stderr).toBe(0);
    expect(fromFork.json()).toMatchObject({ session: A, workspace: wid, files: 1 });
    expect(await readFile(join(forkTree, 'a.txt'), 'utf8')).toBe('a1\n');
  });
});

describe("README's command block", () => {
  it('runs top to bottom in a fresh workspace, every command exit 0 (with the edits its comments imply)', async () => {
    const { execFile } = await import('node:child_process');
    const { CKPT_BIN } = await import('./helpers/cli.js');
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf('```sh\nckpt session new --title "fix parser"');
    expect(start).toBeGreaterThan(0);
    const block = readme.slice(start + 6, readme.indexOf('```', start + 6));
    const commands = block
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').replace(/ \[[^\]]*\]/g, '').trim())
      .filter((l) => l.startsWith('ckpt '));
    expect(commands.length).toBeGreaterThan(25);
    await mkdir(w('src'));
    await writeFile(w('src/parser.ts'), 'parse v0\n');
    const sh = (cmd: string) =>
      new Promise<{ code: number; out: string }>((resolve) => {
        const script = `ckpt() { "${process.execPath}" "${CKPT_BIN}" --store "${dirs.store}" "$@"; }\n${cmd}`;
        execFile('bash', ['-c', script], { cwd: dirs.workspace, env: { ...process.env, NO_COLOR: '1', CKPT_NO_DAEMON: '1' } }, (err, stdout, stderr) =>
          resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
        );
      });
    let undo: string | undefined;
    for (const cmd of commands) {
      if (cmd.startsWith('ckpt settle')) await writeFile(w('src/parser.ts'), 'parse v1, by the agent\n');
      if (cmd.startsWith('ckpt scan')) await writeFile(w('build.log'), 'made by a shell command\n');
      // The restore after `restore 1` is the undo it printed.
      if (undo !== undefined) expect(cmd, 'the undo command restore 1 printed').toBe(`ckpt restore ${undo}`);
      const r = await sh(cmd);
      expect(r.code, `${cmd}\n${r.out}`).toBe(0);
      undo = cmd === 'ckpt restore 1' ? /undo with: .* restore (\S+)/.exec(r.out)?.[1] : undefined;
    }
  }, 60_000);
});

describe('settle of a path the capture did not record (a newcomer probe, thirteenth session)', () => {
  it('says which paths were not settled, on stderr and in --json warnings; the rest is settled, exit 0', async () => {
    await writeFile(w('a.txt'), 'a\n');
    expect((await ckpt(['session', 'new'])).code).toBe(0);
    await ckpt(['turn']);
    await ckpt(['capture', 'a.txt']);
    await writeFile(w('a.txt'), 'b\n');
    const r = await ckpt(['settle', 'a.txt', 'nosuch.txt']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('settled 1 path(s) of 1.1\n');
    expect(r.stderr).toContain('not settled: nosuch.txt — capture 1.1 did not record it');
    await mkdir(w('sub'));
    const json = await ckpt(['settle', '../a.txt', '../typo', '--json'], w('sub'));
    expect(json.json()).toMatchObject({ tag: '1.1', files: [{ path: 'a.txt' }], warnings: [expect.stringContaining('not settled: ../typo')] });
    // Through a symlink to the workspace: the same paths, no false warning.
    await symlink(dirs.workspace, join(dirs.base, 'via-link'));
    const linked = await ckpt(['settle', 'a.txt', '--json'], join(dirs.base, 'via-link'));
    expect(linked.json().warnings).toBeUndefined();
  });
});

describe("the workspace's first session says it took the baseline (a newcomer probe, thirteenth session)", () => {
  it('session new reports what the baseline looked at and stored; a second session in the workspace does not', async () => {
    for (let i = 0; i < 5; i++) await writeFile(w(`f${i}.txt`), `${i}\n`);
    const first = await ckpt(['session', 'new', '--json']);
    expect(first.json()).toMatchObject({ baseline: { scanned: 5, stored: 5 } });
    const text = await ckpt(['session', 'new']);
    expect(text.stdout).not.toContain('baseline');
    expect((await ckpt(['session', 'new', '--json'])).json().baseline).toBeUndefined();
    await rm(dirs.store, { recursive: true });
    expect((await ckpt(['session', 'new'])).stdout).toMatch(/recorded the workspace's baseline: 5 file\(s\) looked at, 5 stored/);
  });
});

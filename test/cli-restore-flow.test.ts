// The restore family as people meet it (issue 10, items 11–13, 15, 21): a dry run says when the real
// run would be refused; the confirmation is asked whenever stdin is a terminal (stdout piped or not),
// and answering no is a documented cancel (exit 10), not an error; a path with no record is NOT_FOUND;
// the printed undo hint works when pasted into a shell.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { libSession, openLibSession } from './helpers/lib-session.js';
import { CKPT_SH, quote, runInPty } from './helpers/pty.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

let dirs: TempDirs;
const ckpt = (args: string[], cwd = dirs.workspace) => runCli(['--store', dirs.store, ...args], { cwd });
const w = (rel: string) => join(dirs.workspace, rel);

/** Turn 1 changes a.txt from v1 to v2 (captured and settled; set up in-process). */
async function oneEdit(): Promise<void> {
  const session = await libSession(dirs.store, dirs.workspace, 'flow-session');
  await writeFile(w('a.txt'), 'v1\n');
  await session.turn();
  await session.capture(['a.txt']);
  await writeFile(w('a.txt'), 'v2\n');
  await session.settle(['a.txt']);
}

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-cli-flow-');
  await oneEdit();
});
afterEach(() => dirs.cleanup());

describe('dry run with drift (item 11)', () => {
  it('says the real run would be refused with DRIFT unless --force, in JSON and text, and exits 0', async () => {
    await writeFile(w('a.txt'), 'edited by hand\n');
    const dry = await ckpt(['restore', '1', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json()).toMatchObject({ dryRun: true, restored: ['a.txt'], drift: ['a.txt'], wouldRefuse: { code: 'DRIFT', paths: ['a.txt'] } });
    const text = await ckpt(['restore', '1', '--dry-run']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/would be refused \(DRIFT/);
    expect(text.stdout).toContain('--force');
    const forced = (await ckpt(['restore', '1', '--dry-run', '--force', '--json'])).json();
    expect(forced.wouldRefuse).toBeUndefined();
    const rewound = (await ckpt(['rewind', '1', '--fork', '--dry-run', '--json'])).json();
    expect(rewound.wouldRefuse).toEqual({ code: 'DRIFT', paths: ['a.txt'] });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('edited by hand\n');
  });
});

describe('dry run with content missing from the store', () => {
  it('says the real run would fail BLOB_NOT_FOUND when a blob it writes is gone or not a file, and exits 0', async () => {
    const session = await openLibSession(dirs.store, dirs.workspace, 'flow-session');
    await writeFile(w('big.bin'), randomBytes(200_000)); // over the inline limit: a loose blob
    await session.turn();
    await session.capture(['big.bin']);
    await writeFile(w('big.bin'), 'small now\n');
    await session.settle(['big.bin']);
    const capture = (await session.events()).filter((e) => e.type === 'capture').at(-1) as unknown as { files: { path: string; blob?: string }[] };
    const blob = capture.files.find((f) => f.path === 'big.bin')!;
    const loose = join(dirs.store, 'blobs', blob.blob!.slice(0, 2), blob.blob!.slice(2));
    // Removed, then a symlink planted in its place (the store reads no link).
    for (const plant of [async () => {}, () => symlink(w('a.txt'), loose)]) {
      await rm(loose, { force: true });
      await plant();
      const dry = await ckpt(['restore', '2', '--dry-run', '--json']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.json()).toMatchObject({ dryRun: true, wouldRefuse: { code: 'BLOB_NOT_FOUND', paths: ['big.bin'] } });
      expect((await ckpt(['restore', '2', '--dry-run'])).stdout).toMatch(/would fail \(BLOB_NOT_FOUND, exit 3\).*big\.bin/);
      expect((await ckpt(['restore', '2', '--dry-run', '--force', '--json'])).json().wouldRefuse).toMatchObject({ code: 'BLOB_NOT_FOUND' });
      const real = await ckpt(['restore', '2', '--json']);
      expect(real.code).toBe(3);
      expect(JSON.parse(real.stderr).error.code).toBe('BLOB_NOT_FOUND');
    }
    // A plan whose content is all there (a.txt's, inline in the log) is not refused.
    expect((await ckpt(['restore', '1', 'a.txt', '--dry-run', '--json'])).json().wouldRefuse).toBeUndefined();
  });
});

describe('confirmation on a terminal (items 12, 15)', () => {
  it('asks when stdin is a terminal even with stdout piped; "n" cancels with exit 10 and changes nothing', async () => {
    const code = join(dirs.base, 'code.txt');
    const r = await runInPty(`{ ${CKPT_SH} --store ${quote(dirs.store)} restore 1; echo $? > ${quote(code)}; } | cat > ${quote(join(dirs.base, 'out.txt'))}`, {
      cwd: dirs.workspace,
      input: 'n\n',
    });
    expect(r.screen).toContain('Restore these paths? [y/N]');
    const out = await readFile(join(dirs.base, 'out.txt'), 'utf8');
    expect(out).toContain('cancelled, nothing changed');
    expect(r.screen + out).not.toContain('INVALID_ARGUMENT');
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v2\n');
    expect((await readFile(code, 'utf8')).trim()).toBe('10');
  });

  it('with --json a cancel is one JSON document {cancelled:true}; "y" restores with stdout redirected', async () => {
    const json = join(dirs.base, 'out.json');
    const no = await runInPty(`${CKPT_SH} --store ${quote(dirs.store)} restore 1 --json > ${quote(json)}`, { cwd: dirs.workspace, input: 'n\n' });
    expect(no.code).toBe(10);
    expect(JSON.parse(await readFile(json, 'utf8'))).toEqual({ cancelled: true, to: '1' });
    const yes = await runInPty(`${CKPT_SH} --store ${quote(dirs.store)} restore 1 > ${quote(json)}`, { cwd: dirs.workspace, input: 'y\n' });
    expect(yes.code, yes.screen).toBe(0);
    expect(yes.screen).toContain('Restore these paths?');
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v1\n');
  });

  it('does not ask when stdin is not a terminal (hooks, scripts), even with stdout on a terminal', async () => {
    const r = await runInPty(`echo n | ${CKPT_SH} --store ${quote(dirs.store)} restore 1`, { cwd: dirs.workspace });
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).not.toContain('Restore these paths?');
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v1\n');
  });
});

describe('session rm on a terminal (a newcomer probe: it removed a history without a word)', () => {
  it('asks; "n" keeps the session (exit 10), --yes and a script (stdin not a terminal) are not asked', async () => {
    const listed = async () => (await ckpt(['session', 'list', '--json'])).json().sessions.map((s: { id: string }) => s.id);
    const no = await runInPty(`${CKPT_SH} --store ${quote(dirs.store)} session rm flow-session`, { cwd: dirs.workspace, input: 'n\n' });
    expect(no.screen).toContain('Remove session flow-session');
    expect(no.screen).toContain('[y/N]');
    expect(no.code).toBe(10);
    expect(await listed()).toEqual(['flow-session']);
    const yes = await runInPty(`${CKPT_SH} --store ${quote(dirs.store)} session rm flow-session`, { cwd: dirs.workspace, input: 'y\n' });
    expect(yes.code, yes.screen).toBe(0);
    expect(await listed()).toEqual([]);
    for (const [command, id] of [[`${CKPT_SH} --store ${quote(dirs.store)} session rm s2 --yes`, 's2'], [`echo n | ${CKPT_SH} --store ${quote(dirs.store)} session rm s3`, 's3']] as const) {
      await libSession(dirs.store, dirs.workspace, id);
      const r = await runInPty(command, { cwd: dirs.workspace });
      expect(r.code, r.screen).toBe(0);
      expect(r.screen).not.toContain('[y/N]');
      expect(await listed()).toEqual([]);
    }
  });
});

describe('undo of a path with no record (item 13)', () => {
  it('is NOT_FOUND (exit 3) naming the path; a path recorded only before the tag is skipped, not an error', async () => {
    const missing = await ckpt(['undo', '1', 'no-such-file', '--json']);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stderr).error).toMatchObject({ code: 'NOT_FOUND', data: { paths: ['no-such-file'] } });
    const partly = await ckpt(['restore', '1', 'a.txt', 'typo.txt', '--json']);
    expect(partly.code).toBe(3);
    expect(JSON.parse(partly.stderr).error.data.paths).toEqual(['typo.txt']);
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v2\n');

    await (await openLibSession(dirs.store, dirs.workspace, 'flow-session')).turn();
    const later = await ckpt(['undo', '2', 'a.txt', '--json']);
    expect(later.code, later.stderr).toBe(0);
    expect(later.json()).toMatchObject({ restored: [], skipped: [{ path: 'a.txt', why: 'not-captured-after-tag' }] });
  });
});

describe('a restore that changes nothing', () => {
  it('says so in one line (not "restored to 1: 0 written, 0 deleted, 0 skipped" then "nothing to change")', async () => {
    expect((await ckpt(['restore', '1'])).code).toBe(0);
    const again = await ckpt(['restore', '1']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('nothing to change: the workspace already matches 1\n');
    expect((await ckpt(['restore', '1', '--json'])).json()).toMatchObject({ restored: [], deleted: [], undo: null });
  });
});

describe('the undo hint (item 21)', () => {
  it('is a command that works as printed: keeps --store, --workspace and --session, quotes paths with spaces', async () => {
    const spaced = join(dirs.base, 'my store');
    const ws = join(dirs.base, 'my ws');
    await mkdir(join(ws, 'sub'), { recursive: true });
    const run = (args: string[]) => runCli(['--store', '../my store', '--workspace', '../my ws', ...args], { cwd: join(dirs.base, 'ws') });
    const hinted = await libSession(spaced, ws, 'hint-1');
    const other = await libSession(spaced, ws, 'other-2');
    await writeFile(join(ws, 'b c.txt'), 'old\n');
    await hinted.turn();
    await hinted.capture(['b c.txt']);
    await writeFile(join(ws, 'b c.txt'), 'new\n');
    await hinted.settle(['b c.txt']);
    await other.turn(); // the hinted session is no longer the newest

    const restored = await run(['--session', 'hint', 'restore', '1']);
    expect(restored.code, restored.stderr).toBe(0);
    expect(await readFile(join(ws, 'b c.txt'), 'utf8')).toBe('old\n');
    const hint = /undo with: (.+)$/m.exec(restored.stdout)?.[1];
    expect(hint).toContain(`--store ${quote(spaced)}`);
    expect(hint).toContain('--session hint-1');
    // Pasted into a shell in another folder, it undoes the restore.
    const sh = await promisify(execFile)('sh', ['-c', hint!], { cwd: dirs.base }).catch((e) => e);
    expect(sh.stderr ?? '').toBe('');
    expect(await readFile(join(ws, 'b c.txt'), 'utf8')).toBe('new\n');
  });
});

// `ckpt diff N` looks too (DESIGN §10 "diff looks too"): what changed outside the agent since ckpt last
// looked — hand edits after the last prompt, a killed tool call's writes — is listed as `restore N`
// plans it (put back, or refused as drift), marked `unrecorded`, while the diff stays a read: nothing
// is written to the store (no event, no index, no blob — git's content is read, not copied), and it
// answers over a read-only store.
import { spawnSync } from 'node:child_process';
import { chmod, lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeWorld } from './fixtures/restore-world.js';
import { capture } from '../src/capture/capture.js';
import { openBaseWorld, useWorlds } from './helpers/worlds.js';
import { makeTempDirs } from './helpers/temp.js';
import { CKPT_BIN, runCli } from './helpers/cli.js';
import { SHARED_BASE } from './helpers/shared-store.js';
import { startMcp } from './helpers/mcp.js';
import { createClient } from './helpers/http.js';
import { startDaemon } from '../src/http/daemon.js';
import { openStore } from '../src/store.js';
import { releaseLingeringLocks } from '../src/storage/fs/fs-lock.js';

const world = useWorlds(makeWorld);

/** A world whose workspace is a git work tree with `files` committed before ckpt's baseline (which then references git's blobs). */
const gitWorld = useWorlds(async (files?: Record<string, string>) => {
  const dirs = await makeTempDirs('ckpt-diff-look-git-');
  for (const [rel, text] of Object.entries(files ?? {})) await writeFile(join(dirs.workspace, rel), text);
  const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dirs.workspace, encoding: 'utf8' });
  git('init', '-q');
  git('add', '-A');
  expect(git('commit', '-qm', 'start').status).toBe(0);
  return openBaseWorld(dirs, { title: 'diff look (git)' });
});

/** Every entry under the store with its size, mode and mtime: any write shows. */
async function storeListing(dir: string, out: string[] = []): Promise<string[]> {
  for (const name of (await readdir(dir)).sort()) {
    const abs = join(dir, name);
    const st = await lstat(abs);
    out.push(`${abs} ${st.isDirectory() ? 'd' : st.size} ${st.mode.toString(8)} ${st.mtimeMs}`);
    if (st.isDirectory()) await storeListing(abs, out);
  }
  return out;
}

/**
 * The store as the writes before the diff leave it: the settle's blob copy and owner record (the
 * after-call queue follows its answer) done, and the session lock its last append kept for the next
 * one (`linger`) given back — else its timer removes the lock file while the diff runs.
 */
async function settled(store: string, session: { ctx: { afterCall: { drain(): Promise<void> } } }): Promise<void> {
  await session.ctx.afterCall.drain();
  await releaseLingeringLocks(store);
}

/** The entries of one listing not in the other (`-` gone, `+` new or changed). */
function changedEntries(before: string[], after: string[]): string[] {
  return [...before.filter((e) => !after.includes(e)).map((e) => `- ${e}`), ...after.filter((e) => !before.includes(e)).map((e) => `+ ${e}`)];
}

const isRoot = process.getuid?.() === 0;
const canMount = isRoot && !SHARED_BASE && spawnSync('unshare', ['-m', 'sh', '-c', 'mount --bind / /mnt && echo ok'], { encoding: 'utf8' }).stdout?.includes('ok');

describe('diff to the present looks first', () => {
  it('lists hand edits, hand-made and hand-deleted files since the last turn exactly as `restore --dry-run` plans them', async () => {
    const w = await world();
    await w.write('agent.txt', 'v1\n');
    await w.write('mine.txt', 'mine at prompt 1\n');
    await w.write('gone.txt', 'deleted by hand later\n');
    await w.write('exec.sh', 'echo hi\n', 0o644);
    await w.write('old.txt', 'edited by hand before prompt 1\n');
    await w.session.turn(); // scans first: ckpt knows the whole workspace at prompt 1
    await w.tool(['agent.txt'], () => w.write('agent.txt', 'v2\n'));
    await writeFile(w.at('mine.txt'), 'edited by hand\n');
    await writeFile(w.at('notes.txt'), 'new by hand\n');
    await rm(w.at('gone.txt'));
    await chmod(w.at('exec.sh'), 0o755);
    const eventsBefore = (await w.session.events()).length;

    const diff = await w.session.diff('1', undefined, { patch: true });
    const shown = Object.fromEntries(diff.changes.map((c) => [c.path, `${c.status}${c.unrecorded ? ' unrecorded' : ''}`]));
    expect(shown).toEqual({ 'agent.txt': 'M', 'exec.sh': 'M unrecorded', 'gone.txt': 'D unrecorded', 'mine.txt': 'M unrecorded', 'notes.txt': 'A unrecorded' });
    expect(diff.changes.find((c) => c.path === 'exec.sh')?.mode).toEqual({ from: '644', to: '755' });
    expect(diff.changes.find((c) => c.path === 'mine.txt')).toMatchObject({ added: 1, removed: 1 });
    expect(diff.patch).toContain('-mine at prompt 1\n+edited by hand\n');
    expect(diff.patch).toContain('--- a/gone.txt\n+++ /dev/null');

    const dry = await w.session.restore('1', { dryRun: true });
    expect(diff.changes.map((c) => c.path).sort()).toEqual([...dry.restored, ...dry.deleted].sort());
    expect(dry.wouldRefuse?.paths.slice().sort()).toEqual(diff.changes.filter((c) => c.unrecorded).map((c) => c.path).sort());
    expect((await w.session.events()).length, 'the diff recorded nothing').toBe(eventsBefore);
    // A past TO does not look: a hand edit is not between two tags.
    expect((await w.session.diff('0', '1')).changes.some((c) => c.unrecorded)).toBe(false);
  });

  it('a tool call killed mid-call (captured, never settled) and a shell\'s writes no scan followed: as the restore plans them', async () => {
    const w = await world();
    await w.write('edit.txt', 'before\n');
    await w.write('keep.txt', 'kept\n');
    await w.session.turn();
    // An Edit whose agent was killed after its write: the capture is recorded, its settle never ran.
    await capture(w.session, ['edit.txt'], { tool: 'Edit' });
    await writeFile(w.at('edit.txt'), 'written by the killed tool\n');
    // A Bash killed mid-command: its writes were never scanned.
    await mkdir(w.at('out'));
    await writeFile(w.at('out/build.log'), 'from the shell\n');
    await rm(w.at('keep.txt'));
    const diff = await w.session.diff('1');
    expect(diff.changes.map((c) => `${c.path}:${c.status}${c.unrecorded ? ' unrecorded' : ''}`)).toEqual(['edit.txt:M', 'keep.txt:D unrecorded', 'out:A unrecorded', 'out/build.log:A unrecorded']);
    const dry = await w.session.restore('1', { dryRun: true });
    expect([...dry.restored, ...dry.deleted].sort()).toEqual(['edit.txt', 'keep.txt', 'out', 'out/build.log']);
    expect(dry.wouldRefuse?.paths.slice().sort()).toEqual(['keep.txt', 'out', 'out/build.log']);
  });

  it('lists folders as the restore plans them: made or removed by hand, made by the agent in a recorded turn (CLI --json)', async () => {
    const w = await world();
    await w.write('a.txt', 'one\n');
    await mkdir(w.at('gone'));
    await mkdir(w.at('full'));
    await w.write('full/f.txt', 'in a folder\n');
    await w.session.turn(); // 1
    await w.tool(['agentdir'], () => mkdir(w.at('agentdir')), 'Bash');
    await w.session.turn(); // 2
    await mkdir(w.at('handdir')); // by hand, empty, no scan
    await rm(w.at('gone'), { recursive: true });
    await rm(w.at('full'), { recursive: true });
    await settled(w.dirs.store, w.session);
    const ckpt = async (...args: string[]) => {
      const r = await runCli(['--store', w.dirs.store, ...args, '--json'], { cwd: w.root, env: { CKPT_NO_DAEMON: '1' } });
      expect(r.code, r.stderr).toBe(0);
      return r.json();
    };
    const expected = {
      '1': ['agentdir:A dir', 'full:D dir unrecorded', 'full/f.txt:D unrecorded', 'gone:D dir unrecorded', 'handdir:A dir unrecorded'],
      '2': ['full:D dir unrecorded', 'full/f.txt:D unrecorded', 'gone:D dir unrecorded', 'handdir:A dir unrecorded'],
    };
    for (const tag of ['1', '2'] as const) {
      const diff = (await ckpt('diff', tag)).changes as { path: string; status: string; dir?: true; unrecorded?: true }[];
      expect(diff.map((c) => `${c.path}:${c.status}${c.dir ? ' dir' : ''}${c.unrecorded ? ' unrecorded' : ''}`), `diff ${tag}`).toEqual(expected[tag]);
      const dry = await ckpt('restore', tag, '--dry-run');
      expect(diff.map((c) => c.path), `restore ${tag} --dry-run`).toEqual([...dry.restored, ...dry.deleted].sort());
      expect(diff.filter((c) => c.unrecorded).map((c) => c.path)).toEqual(dry.wouldRefuse.paths.slice().sort());
      const plan = Object.fromEntries((dry.plan as { path: string; action: string }[]).map((e) => [e.path, e.action]));
      for (const c of diff.filter((x) => x.dir)) expect(plan[c.path], c.path).toBe(c.status === 'A' ? 'delete' : 'mkdir');
    }
    // Between two tags a folder shows the same way: the one the agent made in turn 1.
    expect((await ckpt('diff', '1', '2')).changes).toEqual([{ path: 'agentdir', status: 'A', added: 0, removed: 0, dir: true }]);
    const text = await runCli(['--store', w.dirs.store, 'diff', '2'], { cwd: w.root, env: { CKPT_NO_DAEMON: '1' } });
    expect(text.stdout).toContain('A handdir  folder  (not recorded yet)');
  });

  it('leaves what changed before the tag, as the restore does', async () => {
    const w = await world();
    await w.write('a.txt', 'one\n');
    await w.session.turn();
    await writeFile(w.at('a.txt'), 'two\n');
    await new Promise((r) => setTimeout(r, 2_100 + 50)); // beyond the look's clock slack
    await w.session.turn(); // its scan records a.txt
    await w.tool(['b.txt'], () => w.write('b.txt', 'agent\n'));
    await writeFile(w.at('b.txt'), 'hand\n');
    const diff = await w.session.diff('2');
    const dry = await w.session.restore('2', { dryRun: true });
    expect(diff.changes.map((c) => `${c.path}${c.unrecorded ? ' unrecorded' : ''}`)).toEqual(['b.txt unrecorded']);
    expect([...dry.restored, ...dry.deleted]).toEqual(['b.txt']);
  });

  it('writes nothing to the store (listing and mtimes unchanged)', async () => {
    const w = await world();
    await w.write('a.txt', 'one\n');
    for (let i = 0; i < 80; i++) await w.write(`many/f${i}.txt`, `file ${i}\n`); // enough to read through a pack
    await w.session.turn();
    await w.tool(['a.txt'], () => w.write('a.txt', 'two\n'));
    await w.session.diff('1'); // any cache a first read fills (hot state) is filled now
    await settled(w.dirs.store, w.session);
    const before = await storeListing(w.dirs.store);
    await writeFile(w.at('a.txt'), 'one\n'); // content the store holds: a store write would freshen its blob
    for (let i = 0; i < 80; i++) await writeFile(w.at(`many/f${i}.txt`), `changed by hand ${i}\n`);
    await mkdir(w.at('newdir'));
    await writeFile(w.at('newdir/x.txt'), 'new by hand\n');
    const diff = await w.session.diff('1', undefined, { patch: true });
    await w.session.ctx.afterCall.drain(); // what the diff might have queued is written now: none
    // a.txt holds prompt 1's content again: no change from 1 (the restore leaves it too).
    expect(diff.changes.filter((c) => c.unrecorded)).toHaveLength(82); // 80 files, newdir and its file
    expect(changedEntries(before, await storeListing(w.dirs.store))).toEqual([]);
  });

  it('reads the previous content of a git-tracked file from git, without copying it into the store', async () => {
    const w = await gitWorld({ 'tracked.txt': 'committed line\n', 'other.txt': 'kept\n' });
    await w.session.turn();
    await writeFile(w.at('tracked.txt'), 'edited by hand\n');
    await settled(w.dirs.store, w.session);
    const before = await storeListing(w.dirs.store);
    const diff = await w.session.diff('1', undefined, { patch: true });
    await w.session.ctx.afterCall.drain();
    expect(diff.changes).toEqual([{ path: 'tracked.txt', status: 'M', added: 1, removed: 1, unrecorded: true }]);
    expect(diff.patch).toContain('-committed line\n+edited by hand\n');
    expect(changedEntries(before, await storeListing(w.dirs.store)), 'git content is read for the diff, not copied').toEqual([]);
    const dry = await w.session.restore('1', { dryRun: true });
    expect(dry.restored).toEqual(['tracked.txt']);
  });

  it.skipIf(!canMount)('`ckpt diff 1 --json` answers over a read-only store, listing the hand edit', async () => {
    const w = await world();
    await w.write('a.txt', 'one\n');
    await w.session.turn();
    await w.tool(['a.txt'], () => w.write('a.txt', 'two\n'));
    await writeFile(w.at('b.txt'), 'by hand\n');
    await mkdir(w.at('gen'));
    for (let i = 0; i < 70; i++) await writeFile(w.at(`gen/f${i}.txt`), `made by hand ${i}\n`); // read as a scan reads many: through a pack
    // As a CLI does once first (caches a read may fill), then on a read-only mount of the store.
    expect((await runCli(['--store', w.dirs.store, 'diff', '1'], { cwd: w.root })).code).toBe(0);
    const before = await storeListing(w.dirs.store);
    const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
    const r = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', w.dirs.store, process.execPath, CKPT_BIN, '--store', w.dirs.store, 'diff', '1', '--json'], {
      cwd: w.root,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', CKPT_NO_DAEMON: '1' },
    });
    expect(r.status, r.stderr).toBe(0);
    const changes = JSON.parse(r.stdout).changes as { path: string }[];
    expect(changes.slice(0, 2)).toEqual([
      { path: 'a.txt', status: 'M', added: 1, removed: 1 },
      { path: 'b.txt', status: 'A', added: 1, removed: 0, unrecorded: true },
    ]);
    expect(changes).toHaveLength(73); // and the folder gen
    expect(await storeListing(w.dirs.store)).toEqual(before);
  });
});

describe('cat looks too: it prints what `restore TAG PATH` writes', () => {
  it('a file edited, made or removed by hand after the last prompt (no scan): the bytes at the tag, or NOT_FOUND, as the restore leaves the path', async () => {
    const w = await world();
    await w.write('a.txt', 'a at prompt 1\n');
    await w.write('gone.txt', 'removed by hand later\n');
    await w.write('b.txt', 'b at prompt 1\n');
    await w.session.turn(); // 1: a.txt and gone.txt are known from the scan only, no capture names them
    await w.tool(['b.txt'], () => w.write('b.txt', 'b by the agent\n'));
    await w.session.turn(); // 2
    await writeFile(w.at('a.txt'), 'a HAND EDIT\n');
    await writeFile(w.at('new.txt'), 'new by hand\n');
    await rm(w.at('gone.txt'));
    await settled(w.dirs.store, w.session);
    const before = await storeListing(w.dirs.store);
    const cat = (path: string) => runCli(['--store', w.dirs.store, 'cat', '1', path], { cwd: w.root, env: { CKPT_NO_DAEMON: '1' } });
    const printed: Record<string, string> = {};
    for (const path of ['a.txt', 'b.txt', 'gone.txt', 'new.txt']) {
      const r = await cat(path);
      printed[path] = r.code === 0 ? r.stdout : `exit ${r.code}: ${r.stderr.trim()}`;
    }
    expect(printed).toEqual({
      'a.txt': 'a at prompt 1\n',
      'b.txt': 'b at prompt 1\n',
      'gone.txt': 'removed by hand later\n',
      'new.txt': 'exit 3: error [NOT_FOUND] new.txt did not exist at 1',
    });
    expect(await w.session.readFile('1', 'a.txt')).toMatchObject({ source: 'recorded', drift: true, state: 'file' });
    expect(changedEntries(before, await storeListing(w.dirs.store)), 'cat wrote nothing').toEqual([]);
    // What the restore of each path writes (forced: the hand changes are drift).
    for (const path of ['a.txt', 'b.txt', 'gone.txt', 'new.txt']) await w.session.restore('1', { paths: [path], force: true });
    const after: Record<string, string> = {};
    for (const path of ['a.txt', 'b.txt', 'gone.txt', 'new.txt']) after[path] = await readFile(w.at(path), 'utf8').catch(() => 'absent');
    expect(after).toEqual({ ...printed, 'new.txt': 'absent' });
  });

  it('an ignored file ckpt never recorded: not printed as it is now (an MCP probe read a changed .env "unchanged since the tag")', async () => {
    const w = await world();
    await w.write('.gitignore', '.env\n');
    await w.write('.env', 'TOKEN=at-turn-1\n');
    await w.session.turn();
    await writeFile(w.at('.env'), 'TOKEN=now\n');
    expect(await w.session.readFile('1', '.env')).toMatchObject({ state: 'skipped', why: 'ignored' });
    const r = await runCli(['--store', w.dirs.store, 'cat', '1', '.env'], { cwd: w.root, env: { CKPT_NO_DAEMON: '1' } });
    expect(r.stdout).not.toContain('TOKEN');
    expect(r.code).not.toBe(0);
    // One a tool recorded is answered from its record, ignored or not.
    const tag = await w.tool(['.env'], () => writeFile(w.at('.env'), 'TOKEN=agent\n'));
    expect(await w.session.readFile(tag, '.env')).toMatchObject({ state: 'file', content: Buffer.from('TOKEN=now\n') });
  });

  it('in a git work tree: a tracked file edited by hand is printed from git as committed, nothing copied into the store', async () => {
    const w = await gitWorld({ 'tracked.txt': 'committed line\n' });
    await w.session.turn();
    await writeFile(w.at('tracked.txt'), 'edited by hand\n');
    await settled(w.dirs.store, w.session);
    const before = await storeListing(w.dirs.store);
    const r = await runCli(['--store', w.dirs.store, 'cat', '1', 'tracked.txt'], { cwd: w.root, env: { CKPT_NO_DAEMON: '1' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('committed line\n');
    expect(changedEntries(before, await storeListing(w.dirs.store)), 'git content is read for cat, not copied').toEqual([]);
    await w.session.restore('1', { paths: ['tracked.txt'], force: true });
    expect(await readFile(w.at('tracked.txt'), 'utf8')).toBe(r.stdout);
  });
});

describe('diff to the present looks first: MCP', () => {
  it('the MCP diff tool lists the hand edit with `unrecorded` (its output schema keeps the key)', async () => {
    const dirs = await makeTempDirs('ckpt-diff-look-mcp-');
    const mcp = await startMcp({ store: dirs.store, workspace: dirs.workspace });
    try {
      const at = (rel: string) => join(dirs.workspace, rel);
      await writeFile(at('a.txt'), 'one\n');
      await mcp.ok('session_new', {});
      await mcp.ok('turn', {});
      await writeFile(at('notes.txt'), 'by hand\n');
      await mkdir(at('empty')); // a folder keeps its `dir` through the output schema
      const diff = await mcp.ok('diff', { from: '1' });
      expect(diff.changes).toEqual([
        { path: 'empty', status: 'A', added: 0, removed: 0, dir: true, unrecorded: true },
        { path: 'notes.txt', status: 'A', added: 1, removed: 0, unrecorded: true },
      ]);
      expect((await mcp.ok('restore_preview', { tag: '1' })).wouldRefuse).toEqual({ code: 'DRIFT', paths: ['empty', 'notes.txt'] });
    } finally {
      await mcp.close();
      await dirs.cleanup();
    }
  });
});

describe('diff to the present looks first: HTTP', () => {
  it('GET /diff lists a hand edit since the last turn with `unrecorded`, as the restore preview plans it', async () => {
    const dirs = await makeTempDirs('ckpt-diff-look-http-');
    const store = await openStore({ dir: dirs.store });
    const daemon = await startDaemon({ store, version: 'test' });
    try {
      const client = createClient(daemon.url, daemon.token);
      const ws = dirs.workspace;
      const q = (extra: Record<string, string> = {}) => `?${new URLSearchParams({ workspace: ws, ...extra })}`;
      await writeFile(join(ws, 'a.txt'), 'one\n');
      expect((await client.call('POST', '/sessions', { body: { workspace: ws, id: 's1' } })).status).toBe(200);
      expect((await client.call('POST', '/sessions/s1/turn', { body: { workspace: ws, messageCount: 1 } })).json()).toEqual({ turn: 1, tag: '1' });
      await writeFile(join(ws, 'a.txt'), 'edited by hand\n');
      const diff = (await client.call('GET', `/sessions/s1/diff${q({ from: '1' })}`)).json();
      expect(diff.changes).toEqual([{ path: 'a.txt', status: 'M', added: 1, removed: 1, unrecorded: true }]);
      const preview = (await client.call('POST', '/sessions/s1/restore/preview', { body: { workspace: ws, tag: '1' } })).json();
      expect(preview.wouldRefuse).toEqual({ code: 'DRIFT', paths: ['a.txt'] });
    } finally {
      await daemon.close();
      await dirs.cleanup();
    }
  });
});

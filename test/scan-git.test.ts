// Git-aware baseline (issue 4 item 4) on real repositories made with the git CLI (setup only; ckpt
// never runs git): clean files reference git's blobs without being read, dirty and untracked files
// are read, a nested repository's files are scanned as normal files, and a referenced blob is copied
// from git's objects (loose or packed) the moment a scan finds its file changed or deleted.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { chmod, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaptureEvent } from '../src/format/event.js';
import { capture } from '../src/capture/capture.js';
import { settle } from '../src/capture/settle.js';
import { startTurn } from '../src/capture/turn.js';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import { loadGitIndex, parseGitIndex } from '../src/workspace/git-index.js';
import { makeScanWorld, treeOf, type ScanWorld } from './fixtures/scan-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeScanWorld);

/** Ages every work-tree file so git's index entries are not racily clean, then refreshes git's index. */
async function settleGit(w: ScanWorld, paths: string[]): Promise<void> {
  const old = new Date(Date.now() - 60_000);
  for (const p of paths) await utimes(w.at(p), old, old);
  // git's index must be written a clock tick after those ctimes, or its entries are racily clean.
  await new Promise((r) => setTimeout(r, 30));
  w.git('update-index', '--refresh');
}

async function repo(w: ScanWorld, files: Record<string, string>): Promise<void> {
  w.git('init', '-q');
  for (const [p, c] of Object.entries(files)) await w.write(p, c, p.endsWith('.sh') ? 0o755 : 0o644);
  w.git('add', '-A');
  w.git('commit', '-q', '-m', 'init');
  await settleGit(w, Object.keys(files));
}

describe('git index parsing', () => {
  it('reads v2, v3 (extended flags) and v4 (prefix-compressed) indexes alike', async () => {
    const w = await world();
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`dir${i % 3}/sub/file-${i}.txt`] = `content ${i}\n`;
    files['run.sh'] = '#!/bin/sh\n';
    await repo(w, files);
    const read = () => parseGitIndex(readFileSync(w.at('.git/index')))!;
    const v2 = read();
    expect(v2.size).toBe(31);
    expect(v2.get('run.sh')?.mode).toBe(0o100755);
    w.git('update-index', '--index-version', '4');
    expect(readFileSync(w.at('.git/index')).readUInt32BE(4)).toBe(4);
    expect(read()).toEqual(v2);
    // v3: an intent-to-add entry needs extended flags; it is not a committed blob, so it is skipped.
    await w.write('new.txt', 'n');
    w.git('update-index', '--index-version', '3');
    w.git('add', '-N', 'new.txt');
    const v3 = read();
    expect(v3.has('new.txt')).toBe(false);
    expect(v3.get('dir0/sub/file-0.txt')).toEqual(v2.get('dir0/sub/file-0.txt'));
    // Entries of a workspace inside the repository are relative to the workspace.
    const prefixed = parseGitIndex(readFileSync(w.at('.git/index')), 'dir1/')!;
    expect([...prefixed.keys()].every((k) => k.startsWith('sub/'))).toBe(true);
    expect(prefixed.size).toBe(10);
  });

  it('returns undefined for what it cannot parse', () => {
    expect(parseGitIndex(Buffer.from('not an index at all, not at all'))).toBeUndefined();
    const bad = Buffer.alloc(64);
    bad.write('DIRC');
    bad.writeUInt32BE(9, 4);
    expect(parseGitIndex(bad)).toBeUndefined();
  });
});

describe('git-aware baseline', () => {
  it('clean files reference git blobs; dirty, untracked and nested-repo files are read; .git is never entered', async () => {
    const w = await world();
    await repo(w, { 'a.txt': 'alpha\n', 'src/b.ts': 'beta\n', 'run.sh': 'echo\n', 'dirty.txt': 'committed\n' });
    await w.write('dirty.txt', 'edited, not staged\n');
    await w.write('untracked.txt', 'u\n');
    // A nested repository: its files are normal files here, its .git is not entered.
    await w.write('nested/inner.txt', 'inner\n');
    execFileSync('git', ['init', '-q'], { cwd: w.at('nested') });
    const r = await scan(w.session);
    expect(r).toMatchObject({ baseline: true, scanned: 6, gitReferenced: 3, hashed: 3 });
    expect(loadGitIndex(w.root)?.table.count).toBe(4);

    // A later shell change to a git-referenced file: its before-image is copied from git's objects.
    await w.write('a.txt', 'alpha rewritten\n');
    await w.remove('src/b.ts');
    w.git('gc', '-q'); // objects now live in a pack
    const c = await scan(w.session, { tool: 'Bash' });
    expect(c.files.map((f) => [f.path, f.change])).toEqual([
      ['a.txt', 'modified'],
      ['src/b.ts', 'deleted'],
    ]);
    const cap = (await w.session.events()).find((e) => e.type === 'capture') as CaptureEvent;
    expect(cap.files.every((f) => f.state === 'file' && /^[0-9a-f]{64}$/.test(f.blob ?? ''))).toBe(true);
    await restore(w.session, c.tag!, {});
    expect(await w.read('a.txt')).toBe('alpha\n');
    expect(await w.read('src/b.ts')).toBe('beta\n');
  });

  it('references git only for regular files within the size cap whose stat matches', async () => {
    const w = await world({ maxBlobBytes: 1000 });
    await repo(w, { 'ok.txt': 'ok\n', 'big.bin': 'x'.repeat(5000), 'chmod.sh': 'echo\n', 'touched.txt': 't\n' });
    await w.link('link', 'ok.txt');
    w.git('add', 'link');
    w.git('commit', '-q', '-m', 'link');
    // Same content, other stat: a mode change, and an mtime moved without git's index knowing.
    await chmod(w.at('chmod.sh'), 0o755);
    await utimes(w.at('touched.txt'), new Date(Date.now() - 30_000), new Date(Date.now() - 30_000));
    const r = await scan(w.session);
    expect(r).toMatchObject({ baseline: true, scanned: 5, gitReferenced: 1, hashed: 2 });
    expect(r.skipped.map((s) => [s.path, s.why])).toEqual([['big.bin', 'too-large']]);
  });

  it('does not trust racily clean entries (file changed at or after git wrote its index)', async () => {
    const w = await world();
    await repo(w, { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    // The index now looks older than the files: their entries could hide a same-tick rewrite.
    const older = new Date(Date.now() - 120_000);
    await utimes(w.at('.git/index'), older, older);
    const r = await scan(w.session);
    expect(r).toMatchObject({ baseline: true, scanned: 2, gitReferenced: 0, hashed: 2 });
  });

  it('matches files by name within each folder (subfolders, look-alike names) and non-ASCII paths', async () => {
    const names = ['a.txt', 'a/b.txt', 'a/b/c.txt', 'a/b-c.txt', 'a/b0.txt', 'a/b/d/e.txt', 'a0/x.txt', 'a-/y.txt', 'z.txt'];
    const w = await world();
    await repo(w, Object.fromEntries(names.map((n) => [n, `${n}\n`])));
    const table = loadGitIndex(w.root)!.table;
    expect(table.ascii).toBe(true);
    expect([...table.folderNames('a').keys()].sort()).toEqual(['b-c.txt', 'b.txt', 'b0.txt']);
    expect([...table.folderNames('a/b').keys()]).toEqual(['c.txt']);
    expect([...table.folderNames('').keys()]).toEqual(['a.txt', 'z.txt']);
    expect(table.folderNames('nope').size).toBe(0);
    expect(await scan(w.session)).toMatchObject({ baseline: true, scanned: names.length, gitReferenced: names.length, hashed: 0 });

    const u = await world();
    const wide = ['é/ü.txt', 'e/u.txt', 'e\u{1F600}.txt', 'e\uFB01.txt'];
    await repo(u, Object.fromEntries(wide.map((n) => [n, `${n}\n`])));
    expect(loadGitIndex(u.root)!.table.ascii).toBe(false);
    expect(await scan(u.session)).toMatchObject({ baseline: true, scanned: wide.length, gitReferenced: wide.length, hashed: 0 });
  });

  it('a workspace that is a folder inside a repository uses the entries under it', async () => {
    const w = await world();
    await repo(w, { 'pkg/app/x.txt': 'x\n', 'pkg/app/y.txt': 'y\n', 'other/z.txt': 'z\n' });
    const ws = await w.store.openWorkspace(w.at('pkg/app'));
    const session = await ws.create({ title: 'inner', baseline: false });
    const r = await scan(session);
    expect(r).toMatchObject({ baseline: true, scanned: 2, gitReferenced: 2, hashed: 0 });
  });

  it('restores a git-referenced tree after shell changes exactly', async () => {
    const w = await world();
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++) files[`m${i % 2}/f${i}.txt`] = `file ${i}\n`;
    await repo(w, files);
    const base = await scan(w.session);
    expect(base.gitReferenced).toBe(12);
    const before = await treeOf(w.root);
    w.git('rm', '-q', '-r', 'm0');
    await w.write('m1/f1.txt', 'changed\n');
    await w.write('m2/new.txt', 'new\n');
    const r = await scan(w.session);
    expect(r.files).toHaveLength(8 + 2); // and the folders m0 (deleted) and m2 (created)
    await restore(w.session, r.tag!, {});
    expect(await treeOf(w.root)).toEqual(before);
  });
});

describe('a checkout of many files (the git copy in the scan\'s pack)', () => {
  it('copies the before-content of what changed or went, never of what stayed; a lost object is reported; the agent\'s own record stays the before-image; restore exact', async () => {
    const w = await world();
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const a: Record<string, string> = {};
    for (let i = 0; i < 80; i++) a[`d${i % 2}/f${i}.txt`] = `A ${i}\n`;
    await repo(w, a);
    // Commit B: 70 files changed, 5 removed, 3 added; then back to A.
    for (let i = 0; i < 70; i++) await w.write(`d${i % 2}/f${i}.txt`, `B ${i}\n`);
    for (let i = 70; i < 75; i++) w.git('rm', '-q', `d${i % 2}/f${i}.txt`);
    for (let i = 0; i < 3; i++) await w.write(`d2/new${i}.txt`, `new ${i}\n`);
    w.git('add', '-A');
    w.git('commit', '-q', '-m', 'B');
    const b = w.git('rev-parse', 'HEAD').trim();
    w.git('checkout', '-q', '-f', 'HEAD~1');
    await settleGit(w, Object.keys(a));
    await scan(w.session);
    const { blobs } = w.session.ctx;
    // What the baseline referenced (never read): nearly all on a calm machine; what it read is in the store.
    const referenced: number[] = [];
    for (let i = 0; i < 80; i++) if (!(await blobs.has(sha(`A ${i}\n`)))) referenced.push(i);
    const changedRef = referenced.filter((i) => i >= 2 && i < 70);
    expect(changedRef.length).toBeGreaterThan(0);
    // An agent's write of f0 (its owner record is newer than the scan index: the before-image the checkout's scan takes).
    await startTurn(w.session);
    await capture(w.session, ['d0/f0.txt'], { tool: 'Write' });
    await w.write('d0/f0.txt', 'agent 0\n');
    await settle(w.session, ['d0/f0.txt']);
    const atAgent = await treeOf(w.root);
    // A referenced file's object (A's content) gone from git: its change is recorded as lost, never as created.
    const lost = changedRef[0]!;
    const lostPath = `d${lost % 2}/f${lost}.txt`;
    const lostOid = w.git('rev-parse', `HEAD:${lostPath}`).trim();
    rmSync(w.at(`.git/objects/${lostOid.slice(0, 2)}/${lostOid.slice(2)}`));
    w.git('checkout', '-q', '-f', b);

    const r = await scan(w.session);
    expect(r.files.length).toBe(70 + 5 + 3 + 1); // and the folder d2
    expect(r.skipped).toEqual([expect.objectContaining({ path: lostPath, why: expect.stringMatching(/^git-object-missing/) })]);
    for (const i of referenced) {
      // Changed or deleted: copied out of git (the lost one aside); unchanged: never read.
      expect([i, await blobs.has(sha(`A ${i}\n`))]).toEqual([i, i !== lost && i < 75]);
    }
    await restore(w.session, r.tag!, { force: true });
    const lostNow = { type: 'file', mode: 0o644, content: `B ${lost}\n` };
    expect(await treeOf(w.root)).toEqual({ ...atAgent, [lostPath]: lostNow });
  });
});

describe('a file git stops tracking (a probe, 2026-12-07)', () => {
  // `trusted`: the scans trust an unchanged stat at once (racyMs 0), so the file's reference is
  // carried by stat (git-carried.ts); else its entry is too young to trust and it is looked at again.
  for (const [watched, trusted] of [[false, false], [false, true], [true, true]] as const) {
    it(`untracked by undoing the commit that added it, git gc, an edit: ${watched ? 'the watched scan leaves it to the full scan, which' : 'the scan'} stores it first${trusted ? ' (reference carried by stat)' : ''}, so a restore brings it back`, async () => {
      const sha = (text: string) => createHash('sha256').update(text).digest('hex');
      let w = await world();
      // The baseline must reference git's blob of notes (the path under test); git's index is racily
      // clean now and then on a loaded machine, so a fresh repository is tried again.
      for (let attempt = 0; ; attempt++) {
        await repo(w, { base: 'base\n', notes: 'v1 of notes\n' });
        if ((await scan(w.session, trusted ? { racyMs: 0 } : {})).gitReferenced === 2) break;
        expect(attempt).toBeLessThan(4);
        w = await world();
      }
      const { blobs } = w.session.ctx;
      expect(await blobs.has(sha('v1 of notes\n'))).toBe(false);
      const turn = await startTurn(w.session);
      const atTurn = await treeOf(w.root);
      const options = (paths: string[]) => ({ ...(watched ? { changedPaths: async () => new Set(paths) } : {}), ...(trusted ? { racyMs: 0 } : {}) });
      // The commit made again without it: untracked, the same bytes on disk, and git's index no longer
      // keeps its blob from git gc.
      w.git('rm', '-q', '--cached', 'notes');
      w.git('commit', '-q', '--amend', '-m', 'init');
      const untracked = await scan(w.session, options([]));
      expect(untracked.files).toEqual([]);
      if (watched) expect(untracked.watched, 'the full scan answered').toBeUndefined();
      expect(await blobs.has(sha('v1 of notes\n')), "the content is in ckpt's store").toBe(true);
      w.git('reflog', 'expire', '--expire=now', '--all');
      w.git('gc', '-q', '--prune=now');
      expect(() => w.git('cat-file', '-e', w.git('hash-object', 'notes').trim()), 'git pruned the blob').toThrow();
      expect(await scan(w.session, options([]))).toMatchObject({ files: [] });
      await w.write('notes', 'v2 of notes\n');
      const edit = await scan(w.session, options(['notes']));
      expect(edit.files).toMatchObject([{ path: 'notes', change: 'modified' }]);
      expect(edit.skipped).toEqual([]);
      await restore(w.session, turn.tag, {});
      expect(await treeOf(w.root)).toEqual(atTurn);
    });
  }
});

describe("git's index swapped for another (a probe, thirteenth session)", () => {
  // An mtime says nothing here: the index found now is another repository's, or an older copy of this
  // one's. The scan index records which index it saw (path, inode, size, times): any difference checks
  // the references carried by stat (git-carried.ts gitIndexChangedSince).
  const swaps: [string, (w: ScanWorld, backup: string) => void][] = [
    ["a nested repository's .git removed: the enclosing repository's old index is found", (w) => rmSync(w.at('.git'), { recursive: true, force: true })],
    ['.git put back from a copy made before the last commit (cp -a keeps its mtimes)', (w, backup) => {
      rmSync(w.at('.git'), { recursive: true, force: true });
      execFileSync('cp', ['-a', backup, w.at('.git')]);
    }],
  ];
  for (const [name, swap] of swaps) {
    for (const watched of [false, true]) {
      it(`${name}: ${watched ? 'the watched scan leaves it to the full scan, which' : 'the scan'} stores the files first, so a restore brings them back`, async () => {
        let w = await world();
        const backup = join(w.dirs.base, 'git-backup');
        for (let attempt = 0; ; attempt++) {
          // The enclosing repository (a home folder kept in git), its index older than everything below.
          execFileSync('git', ['init', '-q', w.dirs.base]);
          writeFileSync(join(w.dirs.base, 'outer-file'), 'outer\n');
          execFileSync('git', ['-C', w.dirs.base, 'add', 'outer-file']);
          execFileSync('git', ['-C', w.dirs.base, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'outer']);
          await repo(w, { f: 'v1 of f\n', g: 'g\n' });
          execFileSync('cp', ['-a', w.at('.git'), backup]);
          await w.write('f', 'precious, only in the last commit\n');
          w.git('commit', '-q', '-am', 'second');
          await settleGit(w, ['f']); // g's entry is settled already (touched again, git's refresh may keep its old ctime)
          const base = await scan(w.session, { racyMs: 0 });
          if (base.gitReferenced === 2) break;
          expect(attempt).toBeLessThan(4);
          w = await world();
        }
        const turn = await startTurn(w.session);
        const atTurn = await treeOf(w.root);
        const options = (paths: string[]) => ({ racyMs: 0, ...(watched ? { changedPaths: async () => new Set(paths) } : {}) });
        swap(w, backup);
        const swapped = await scan(w.session, options([]));
        expect(swapped.files).toEqual([]);
        if (watched) expect(swapped.watched, 'the full scan answered').toBeUndefined();
        await w.write('f', 'edited\n');
        await w.remove('g');
        const edit = await scan(w.session, options(['f', 'g']));
        expect(edit.files).toMatchObject([{ path: 'f', change: 'modified' }, { path: 'g', change: 'deleted' }]);
        expect(edit.skipped).toEqual([]);
        await restore(w.session, turn.tag, {});
        expect(await treeOf(w.root)).toEqual(atTurn);
      });
    }
  }
});

/** Commits `files`, checks `again` out once more (through git's conversion) and settles git's index. */
async function commitAndCheckOut(w: ScanWorld, files: Record<string, string>, again: string[]): Promise<void> {
  for (const [p, c] of Object.entries(files)) await w.write(p, c);
  w.git('add', '-A');
  w.git('commit', '-q', '-m', 'init');
  for (const p of again) await w.remove(p);
  w.git('checkout', '--', ...again);
  await settleGit(w, Object.keys(files));
}

/** Changes the tree by `edit` (as a shell would), scans and restores to before it: the tree is `mine` again. */
async function expectRestoredAfter(w: ScanWorld, mine: Awaited<ReturnType<typeof treeOf>>, edit: () => Promise<void>): Promise<void> {
  await edit();
  const r = await scan(w.session, { tool: 'Bash' });
  await restore(w.session, r.tag!, {});
  expect(await treeOf(w.root)).toEqual(mine);
}

describe('a checkout that converts content (found 2026-12-06)', () => {
  // git writes other bytes than the blob's and records their stat: referencing the blob would restore
  // LF for CRLF, the unexpanded \$Id\$, a filter's clean form (git-lfs: the pointer for the file).
  // Each way, with the files still referenced: those no converting rule names.
  const converting: [string, (w: ScanWorld) => Promise<void>, string[]][] = [
    ['a tracked .gitattributes eol=crlf', async (w) => w.write('.gitattributes', '*.txt text eol=crlf\n'), ['.gitattributes', 'c.dat']],
    ['core.autocrlf=true', async (w) => void w.git('config', 'core.autocrlf', 'true'), []],
    ['an ident attribute', async (w) => w.write('sub/.gitattributes', '*.txt ident\n'), ['a.txt', 'c.dat', 'sub/.gitattributes']],
    [
      'a same-size smudge filter named in info/attributes',
      async (w) => {
        w.git('config', 'filter.up.smudge', 'tr a-z A-Z');
        w.git('config', 'filter.up.clean', 'tr A-Z a-z');
        await w.write('.git/info/attributes', '*.txt filter=up\n');
      },
      ['c.dat'],
    ],
  ];
  for (const [name, setUp, referenced] of converting) {
    it(`${name}: the files it names are hashed, never referenced, and a restore gives back the converted bytes`, async () => {
      const w = await world();
      w.git('init', '-q');
      await setUp(w);
      const files = { 'a.txt': 'one\ntwo $Id$\n', 'sub/b.txt': 'three $Id$\n', 'c.dat': 'four\n' };
      await commitAndCheckOut(w, files, Object.keys(files));
      const mine = await treeOf(w.root);
      const converted = Object.entries(files).filter(([p, c]) => {
        const e = mine[p];
        return e?.type === 'file' && e.content !== c;
      });
      expect(converted.length, 'git converted nothing').toBeGreaterThan(0);
      const base = await scan(w.session);
      expect(base.gitReferenced).toBe(referenced.length);
      await expectRestoredAfter(w, mine, async () => {
        await w.write('a.txt', 'rewritten\n');
        await w.remove('sub/b.txt');
        await w.write('c.dat', 'five\n');
      });
    });
  }

  it('only the paths a converting rule names lose their references (*.bat eol=crlf)', async () => {
    const w = await world();
    w.git('init', '-q');
    await commitAndCheckOut(w, { '.gitattributes': '*.bat eol=crlf\n', 'run.bat': 'echo one\necho two\n', 'app/main.txt': 'main\n' }, ['run.bat']);
    const mine = await treeOf(w.root);
    expect(mine['run.bat']).toMatchObject({ content: 'echo one\r\necho two\r\n' });
    expect(await scan(w.session)).toMatchObject({ baseline: true, scanned: 3, gitReferenced: 2, hashed: 1 });
    await expectRestoredAfter(w, mine, async () => {
      await w.write('run.bat', 'echo three\n');
      await w.write('app/main.txt', 'changed\n');
    });
  });

  it("a tracked .gitattributes edited since the checkout: its staged version (what the checkout read) still counts", async () => {
    const w = await world();
    w.git('init', '-q');
    await commitAndCheckOut(w, { '.gitattributes': '*.txt text eol=crlf\n', 'a.txt': 'one\ntwo\n' }, ['a.txt']);
    // The rule dropped in the work tree only: git status still calls a.txt clean, its bytes CRLF.
    await w.write('.gitattributes', '# nothing\n');
    const mine = await treeOf(w.root);
    expect(mine['a.txt']).toMatchObject({ content: 'one\r\ntwo\r\n' });
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 0 });
    await expectRestoredAfter(w, mine, () => w.write('a.txt', 'rewritten\n'));
  });

  it('a git replace ref: the checkout wrote the replacement, so nothing is referenced', async () => {
    const w = await world();
    w.git('init', '-q');
    await w.write('a.txt', 'orig\n');
    w.git('add', '-A');
    w.git('commit', '-q', '-m', 'init');
    const replacement = w.git('rev-parse', 'HEAD:a.txt').trim();
    await w.write('b.txt', 'replaced\n');
    const other = w.git('hash-object', '-w', 'b.txt').trim();
    await w.remove('b.txt');
    w.git('replace', replacement, other);
    await w.remove('a.txt');
    w.git('checkout', '--', 'a.txt');
    // git's own refresh would re-hash a.txt and call it modified; any later index write keeps its stat.
    await new Promise((r) => setTimeout(r, 50));
    await w.write('c.txt', 'c\n');
    w.git('add', 'c.txt');
    expect(await w.read('a.txt')).toBe('replaced\n');
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 0, hashed: 2 });
    await w.write('a.txt', 'rewritten\n');
    const r = await scan(w.session, { tool: 'Bash' });
    await restore(w.session, r.tag!, {});
    expect(await w.read('a.txt')).toBe('replaced\n');
  });

  // git reads attributes from the work tree whatever its ignore rules say: an ignored one converts
  // the checkout too, though the walk never lists it as content.
  for (const ignored of [false, true]) {
    it(`an untracked .gitattributes below the root${ignored ? ' that ignore rules hide' : ''} (git applies it on checkout): what lies below it is hashed`, async () => {
      const w = await world();
      w.git('init', '-q');
      await commitAndCheckOut(w, { ...(ignored ? { '.gitignore': '.gitattributes\n' } : {}), 'sub/a.txt': 'one\ntwo\n', 'top.txt': 'top\n' }, []);
      await w.write('sub/.gitattributes', '*.txt text eol=crlf\n');
      await w.remove('sub/a.txt');
      w.git('checkout', '--', 'sub/a.txt');
      await settleGit(w, ['sub/a.txt']);
      const mine = await treeOf(w.root);
      expect(mine['sub/a.txt']).toMatchObject({ content: 'one\r\ntwo\r\n' });
      expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: ignored ? 2 : 1 });
      await expectRestoredAfter(w, mine, () => w.write('sub/a.txt', 'rewritten\n'));
      if (!ignored) return;
      // A watched scan cannot see an ignored one: told of it, it leaves the look to the full scan.
      await w.write('.gitattributes', '*.dat text\n');
      const r = await scan(w.session, { changedPaths: async () => new Set(['.gitattributes']) });
      expect(r.watched, 'the full scan answered').toBeUndefined();
    });
  }

  for (const watched of [false, true]) {
    it(`the same made after the baseline, then a checkout: the next ${watched ? 'watched ' : ''}scan reads what the checkout converted`, async () => {
      const w = await world();
      w.git('init', '-q');
      await commitAndCheckOut(w, { 'sub/a.txt': 'one\ntwo\n', 'top.txt': 'top\n' }, []);
      expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 2 });
      await w.write('sub/.gitattributes', '*.txt text eol=crlf\n');
      if (watched) expect(await scan(w.session)).toMatchObject({ files: [{ path: 'sub/.gitattributes' }] });
      await w.remove('sub/a.txt');
      w.git('checkout', '--', 'sub/a.txt');
      await settleGit(w, ['sub/a.txt']);
      const mine = await treeOf(w.root);
      expect(mine['sub/a.txt']).toMatchObject({ content: 'one\r\ntwo\r\n' });
      const options = watched ? { changedPaths: async () => new Set(['sub/a.txt']) } : {};
      const r = await scan(w.session, options);
      if (watched) expect(r.watched, 'the watched scan answered').toBeDefined();
      await expectRestoredAfter(w, mine, () => w.write('sub/a.txt', 'rewritten\n'));
    });
  }

  it('attributes that convert nothing, on checkout or on add, keep the references', async () => {
    const w = await world();
    await repo(w, { '.gitattributes': '*.png binary\n*.md -text diff=markdown\n', 'a.txt': 'a\n', 'run.sh': 'echo\n' });
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 3, hashed: 0 });
  });

  it('ident over a blob that holds an expanded $Id: the checkout rewrites it at the same size, so the file is read', async () => {
    const w = await world();
    w.git('init', '-q');
    await w.write('a.c', `x $Id: ${'0123456789'.repeat(4)} $\n`);
    // Many files checked out after a.c: git writes its index well after a.c (a later clock tick),
    // so a.c's entry is not racily clean and keeps the stat of what the checkout wrote.
    for (let k = 0; k < 800; k++) await w.write(`z/${k}.txt`, `${k}\n`);
    w.git('add', '-A');
    w.git('commit', '-q', '-m', 'c0');
    await w.write('.gitattributes', '*.c ident\n');
    w.git('add', '.gitattributes'); // a.c not again: its blob keeps the expanded id
    w.git('commit', '-q', '-m', 'c1');
    await w.remove('a.c');
    await w.remove('z');
    w.git('checkout', '--', '.');
    const mine = await treeOf(w.root);
    expect(mine['a.c']).toMatchObject({ content: `x $Id: ${w.git('rev-parse', 'HEAD:a.c').trim()} $\n` });
    expect(Number(w.git('cat-file', '-s', 'HEAD:a.c'))).toBe(50); // the same size as the file
    expect(await scan(w.session)).toMatchObject({ baseline: true });
    await expectRestoredAfter(w, mine, () => w.write('a.c', 'rewritten\n'));
  });

  it("* text=auto: the files at their blob's size stay referenced (their bytes are the blob's), a CRLF one added is read", async () => {
    const w = await world();
    w.git('init', '-q');
    await commitAndCheckOut(w, { '.gitattributes': '* text=auto\n', 'a.txt': 'one\ntwo\n', 'lib/b.js': 'b\n', 'c.dat': 'c\n', 'win.txt': 'one\r\ntwo\r\n' }, []);
    expect(w.git('cat-file', 'blob', 'HEAD:win.txt')).toBe('one\ntwo\n');
    const mine = await treeOf(w.root);
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 4, hashed: 1 });
    await expectRestoredAfter(w, mine, async () => {
      await w.write('win.txt', 'rewritten\n');
      await w.write('a.txt', 'rewritten\n');
    });
  });

  // Found by test/scan-git-property.test.ts (2026-12-06): `git add` normalizes CRLF to LF under
  // `text=auto`, `text`, any `eol` or `core.autocrlf=input`: the work tree keeps CRLF, git's index
  // calls it clean, and the baseline referenced the LF blob (a restore gave back LF).
  const normalizing: [string, (w: ScanWorld) => Promise<void>][] = [
    ['* text=auto', (w) => w.write('.gitattributes', '* text=auto\n')],
    ['*.txt text eol=lf', (w) => w.write('.gitattributes', '*.txt text eol=lf\n')],
    ['core.autocrlf=input', async (w) => void w.git('config', 'core.autocrlf', 'input')],
  ];
  for (const [name, setUp] of normalizing) {
    it(`${name}: a CRLF file added (stored LF, CRLF in the work tree, clean to git) is hashed and restored as CRLF`, async () => {
      const w = await world();
      w.git('init', '-q');
      await setUp(w);
      await w.write('a.txt', 'one\r\ntwo\r\n');
      w.git('add', '-A');
      w.git('commit', '-q', '-m', 'c0');
      await settleGit(w, ['a.txt']);
      expect(w.git('status', '--porcelain')).toBe('');
      expect(w.git('cat-file', 'blob', 'HEAD:a.txt')).toBe('one\ntwo\n');
      const mine = await treeOf(w.root);
      // a.txt is read (its blob is smaller: CRLF stored as LF); .gitattributes, where there is one, holds
      // its blob's bytes at its blob's size and stays referenced.
      expect(await scan(w.session)).toMatchObject({ hashed: 1, gitReferenced: name.startsWith('core.') ? 0 : 1 });
      await expectRestoredAfter(w, mine, () => w.write('a.txt', 'rewritten\n'));
    });
  }
});

describe('found by the history oracle (issue 9)', () => {
  /**
   * A mode-only change of a file matching git's index (what `git checkout` of a commit that only sets
   * +x does: chmod in place, git's index updated), scanned with `options`: recorded with its content
   * id, and the restore to the turn sees no drift. The baseline must reference git's blobs (the path
   * under test); git's index is racily clean now and then on a loaded machine (see the baseline tests
   * above), so a fresh repository is tried again.
   */
  async function modeOnlyChange(options?: Parameters<typeof scan>[1]): Promise<Awaited<ReturnType<typeof scan>>> {
    let w = await world();
    for (let attempt = 0; ; attempt++) {
      await repo(w, { run: '#!/bin/sh\necho hi\n', 'keep.txt': 'k\n' });
      if ((await scan(w.session)).gitReferenced === 2) break;
      expect(attempt).toBeLessThan(4);
      w = await world();
    }
    const before = await treeOf(w.root);
    const turn = await startTurn(w.session);
    await chmod(w.at('run'), 0o755);
    w.git('add', 'run');
    const r = await scan(w.session, options);
    expect(r.files).toMatchObject([{ path: 'run', change: 'mode', mode: 0o755 }]);
    expect(r.files[0]!.blob).toMatch(/^[0-9a-f]{64}$/);
    const back = await restore(w.session, turn.tag);
    expect(back.drift).toEqual([]);
    expect(await treeOf(w.root)).toEqual(before);
    return r;
  }

  it('a mode-only change of a file matching git\'s index records its content id, so a restore sees no drift', async () => {
    await modeOnlyChange();
  });

  it('the same through a watched scan (the daemon\'s): the change is recorded with its content id, not refused', async () => {
    // A round-6 probe (real Claude Code, default and HTTP hooks): `chmod 755 src/util.js && git add -A`
    // in a Bash call made the daemon's after-tool scan fail "refusing to append: event settle …: file
    // image without a valid blob id" — the watched scan dropped the after-state's git blob, which the
    // full scan copies into the store. The turn-end scan recorded it instead, as tool "Stop".
    const r = await modeOnlyChange({ changedPaths: async () => new Set(['run']) });
    expect(r.watched, 'the watched scan answered').toBeDefined();
  });
});

describe('found by the git property test (2026-12-06, test/scan-git-property.test.ts)', () => {
  it('a smudged index entry (size 0 of a non-empty blob) is not clean, whatever its stat', async () => {
    const w = await world();
    w.git('init', '-q');
    await w.write('a.txt', 'hello world\n');
    w.git('add', '-A');
    w.git('commit', '-q', '-m', 'c0');
    // What git leaves when a file is emptied within its checkout's timestamp tick (coarse on Linux)
    // and a later index write finds the entry racily clean with other content: the entry keeps the
    // file's stat, its size set to 0. Forged here (the tick cannot be hit on purpose).
    await w.write('a.txt', '');
    const st = statSync(w.at('a.txt'), { bigint: true });
    await new Promise((r) => setTimeout(r, 30));
    const idx = readFileSync(w.at('.git/index'));
    const e = 12; // the only entry
    idx.writeUInt32BE(Number(st.ctimeNs / 1_000_000_000n), e);
    idx.writeUInt32BE(Number(st.ctimeNs % 1_000_000_000n), e + 4);
    idx.writeUInt32BE(Number(st.mtimeNs / 1_000_000_000n), e + 8);
    idx.writeUInt32BE(Number(st.mtimeNs % 1_000_000_000n), e + 12);
    idx.writeUInt32BE(Number(st.ino % 4294967296n), e + 20);
    idx.writeUInt32BE(0, e + 36);
    createHash('sha1').update(idx.subarray(0, idx.length - 20)).digest().copy(idx, idx.length - 20);
    writeFileSync(w.at('.git/index'), idx);
    expect(w.git('diff', '--name-only'), 'git calls it modified').toBe('a.txt\n');
    const mine = await treeOf(w.root);
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 0, hashed: 1 });
    await expectRestoredAfter(w, mine, () => w.write('a.txt', 'rewritten\n'));
  });

  it('a file re-checked-out under a branch\'s eol=crlf, left CRLF by the checkout back: not referenced again', async () => {
    const w = await world();
    const settle = async () => {
      // git records a.txt's stat (clean under the attributes of the moment) and is not racy.
      const old = new Date(Date.now() - 60_000);
      await utimes(w.at('a.txt'), old, old);
      await new Promise((r) => setTimeout(r, 30));
      w.git('update-index', '-q', '--refresh');
    };
    w.git('init', '-q', '-b', 'main');
    await w.write('a.txt', 'one\ntwo\n');
    w.git('add', '-A');
    w.git('commit', '-q', '-m', 'c0');
    w.git('checkout', '-q', '-b', 'crlf');
    await w.write('.gitattributes', '*.txt text eol=crlf\n');
    w.git('add', '-A');
    w.git('commit', '-q', '-m', 'c1');
    w.git('checkout', '-q', 'main');
    await settle();
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 1 });
    w.git('checkout', '-q', 'crlf');
    await w.remove('a.txt');
    w.git('checkout', '--', 'a.txt'); // CRLF now
    await settle();
    // .gitattributes goes; a.txt has the same blob on main, so the checkout leaves it: CRLF, clean to git.
    w.git('checkout', '-q', 'main');
    const mine = await treeOf(w.root);
    expect(mine['a.txt']).toMatchObject({ content: 'one\r\ntwo\r\n' });
    // The change LF -> CRLF is recorded (it was not: the scan took the blob again and saw nothing).
    const r = await scan(w.session);
    expect(r.files.map((f) => [f.path, f.change])).toEqual([['a.txt', 'modified']]);
    expect(r.gitReferenced).toBe(0);
    await expectRestoredAfter(w, mine, () => w.write('a.txt', 'rewritten\n'));
  });
});

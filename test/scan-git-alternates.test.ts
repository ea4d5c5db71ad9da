// Git work trees that borrow objects (issue 9 E), on real repositories made with the git CLI (setup
// only): `git clone --shared`, `--reference`, nested and relative alternates, packed sources with
// offset and ref deltas. A git-aware scan references a borrowed blob, copies it into ckpt's store when
// the file changes, and a restore brings it back. An object that is really gone never passes
// silently: at baseline the file is read from the workspace instead; after, the path is recorded
// `skipped` (never absent) and the scan says so in `skipped` and `warnings`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaptureEvent } from '../src/format/event.js';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import { openGitObjects, parseAlternates } from '../src/workspace/git-objects.js';
import { makeScanWorld, treeOf, type ScanWorld } from './fixtures/scan-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeScanWorld);

const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, env, encoding: 'utf8' });

/** A source repository at `dir` with `versions` commits of the same files (later ones small edits: deltas when packed). */
function sourceRepo(dir: string, versions: Record<string, string>[]): string[] {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  const commits: string[] = [];
  for (const files of versions) {
    for (const [p, c] of Object.entries(files)) {
      mkdirSync(join(dir, p, '..'), { recursive: true });
      writeFileSync(join(dir, p), c);
    }
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', `v${commits.length}`);
    commits.push(git(dir, 'rev-parse', 'HEAD').trim());
  }
  return commits;
}

/** Ages the work tree's files and refreshes git's index, so entries are not racily clean. */
function settle(w: ScanWorld): void {
  const old = new Date(Date.now() - 60_000);
  for (const p of git(w.root, 'ls-files', '-z').split('\0').filter(Boolean)) utimesSync(w.at(p), old, old);
  // The index must be written a clock tick after those ctimes, or its entries are racily clean.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30);
  w.git('update-index', '-q', '--refresh');
}

function bigText(seed: number, edit = ''): string {
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) lines.push(`line ${i} of file ${seed}: the quick brown fox jumps over the lazy dog`);
  return `${lines.join('\n')}\n${edit}`;
}

/** Three versions of four files: the first two as the source of a delta chain. */
const VERSIONS = [0, 1, 2].map((v) => ({
  'a.txt': bigText(1, `edit ${v}\n`),
  'src/b.txt': bigText(2, `edit ${v}\n`),
  'src/deep/c.txt': bigText(3, v === 2 ? 'last\n' : ''),
  'd.txt': `small ${v}\n`,
}));

/** Changes every file the way a shell command would, scans, restores, and checks the tree came back. */
async function changeScanRestore(w: ScanWorld): Promise<void> {
  const before = await treeOf(w.root);
  await w.write('a.txt', 'rewritten\n');
  await w.remove('src/b.txt');
  await w.write('src/deep/c.txt', 'rewritten too\n');
  await w.remove('d.txt');
  const r = await scan(w.session, { tool: 'Bash' });
  expect(r.warnings).toBeUndefined();
  expect(r.skipped).toEqual([]);
  expect(r.files.map((f) => [f.path, f.change])).toEqual([
    ['a.txt', 'modified'],
    ['d.txt', 'deleted'],
    ['src/b.txt', 'deleted'],
    ['src/deep/c.txt', 'modified'],
  ]);
  const cap = (await w.session.events()).filter((e): e is CaptureEvent => e.type === 'capture').at(-1)!;
  expect(cap.files.map((f) => f.state)).toEqual(['file', 'file', 'file', 'file']);
  await restore(w.session, r.tag!, {});
  expect(await treeOf(w.root)).toEqual(before);
}

describe('git alternates and packs', () => {
  it('git clone --shared: borrowed blobs are referenced at baseline and copied when their files change', async () => {
    const w = await world();
    const src = join(w.dirs.base, 'src');
    sourceRepo(src, VERSIONS);
    git(src, 'gc', '-q', '--aggressive'); // a packed source: older versions are deltas
    git(w.root, 'clone', '-q', '--shared', src, '.');
    git(w.root, 'checkout', '-q', 'HEAD~2'); // the oldest version: delta objects in the source's pack
    settle(w);
    const base = await scan(w.session);
    expect(base).toMatchObject({ baseline: true, scanned: 4, gitReferenced: 4, hashed: 0 });
    await changeScanRestore(w);
  });

  it('git clone --reference (loose source objects) and ref deltas in a repacked reference', async () => {
    const w = await world();
    const src = join(w.dirs.base, 'src');
    sourceRepo(src, VERSIONS);
    const ref = join(w.dirs.base, 'ref');
    git(w.dirs.base, 'clone', '-q', '--bare', '--no-local', src, ref);
    // Offsets off: the reference's pack holds REF_DELTA objects.
    git(ref, '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-a', '-d', '-q', '-f', '--depth=5');
    git(w.root, 'clone', '-q', '--no-local', '--reference', ref, src, '.');
    expect(openGitObjects(join(w.root, '.git')).dirs).toHaveLength(2);
    git(w.root, 'checkout', '-q', 'HEAD~1');
    settle(w);
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 4, hashed: 0 });
    await changeScanRestore(w);
  });

  it('nested alternates with relative paths (and comments, blank lines)', async () => {
    const w = await world();
    const a = join(w.dirs.base, 'a');
    const commits = sourceRepo(a, VERSIONS);
    // b borrows from a (relative path), the work tree borrows from b (relative path): a's objects two hops away.
    const b = join(w.dirs.base, 'nest', 'b');
    git(w.dirs.base, 'init', '-q', '--bare', b);
    writeFileSync(join(b, 'objects/info/alternates'), `# borrowed\n\n${relative(join(b, 'objects'), join(a, '.git/objects'))}\n`);
    git(w.root, 'init', '-q');
    mkdirSync(w.at('.git/objects/info'), { recursive: true });
    writeFileSync(w.at('.git/objects/info/alternates'), `${relative(w.at('.git/objects'), join(b, 'objects'))}/\n`);
    git(w.root, 'reset', '-q', '--hard', commits[1]!);
    expect(git(w.root, 'count-objects', '-v')).toMatch(/^count: 0$/m); // nothing of its own
    settle(w);
    const objects = openGitObjects(w.at('.git'));
    expect(objects.dirs).toHaveLength(3);
    expect(objects.problems).toEqual([]);
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 4, hashed: 0 });
    await changeScanRestore(w);
  });

  it('a borrowed object missing at baseline: the file is read from the workspace, nothing is lost', async () => {
    const w = await world();
    const src = join(w.dirs.base, 'src');
    sourceRepo(src, VERSIONS);
    git(w.root, 'clone', '-q', '--shared', src, '.');
    settle(w);
    rmSync(src, { recursive: true, force: true }); // the source of a --shared clone removed
    const base = await scan(w.session);
    expect(base).toMatchObject({ baseline: true, scanned: 4, gitReferenced: 0, hashed: 4 });
    await changeScanRestore(w);
  });

  it('a referenced object that disappears later: the path is skipped with a reason and the scan warns', async () => {
    const w = await world();
    const src = join(w.dirs.base, 'src');
    sourceRepo(src, VERSIONS);
    git(w.root, 'clone', '-q', '--shared', src, '.');
    settle(w);
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 4 });
    rmSync(src, { recursive: true, force: true });
    await w.write('a.txt', 'rewritten\n');
    await w.remove('d.txt');
    const r = await scan(w.session);
    expect(r.files.map((f) => [f.path, f.change])).toEqual([
      ['a.txt', 'modified'],
      ['d.txt', 'deleted'],
    ]);
    expect(r.skipped.map((s) => s.path)).toEqual(['a.txt', 'd.txt']);
    expect(r.skipped[0]!.why).toMatch(/^git-object-missing: git blob [0-9a-f]{40} is in none of /);
    expect(r.warnings?.join('\n')).toMatch(/2 changed path\(s\) lost their previous content/);
    expect(r.warnings?.join('\n')).toMatch(/does not exist/);
    const cap = (await w.session.events()).filter((e): e is CaptureEvent => e.type === 'capture').at(-1)!;
    expect(cap.files.map((f) => [f.path, f.state, f.why])).toEqual([
      ['a.txt', 'skipped', 'git-object-missing'],
      ['d.txt', 'skipped', 'git-object-missing'],
    ]);
    // The restore leaves what it cannot bring back as it is, and says so.
    const back = await restore(w.session, r.tag!, {});
    expect(back.skipped.map((s) => s.path)).toEqual(['a.txt', 'd.txt']);
    expect(await w.read('a.txt')).toBe('rewritten\n');
  });
});

describe('git checkouts in a packed repository', () => {
  it('the previous versions are copied out of delta chains that pass through the files the scan just read', async () => {
    const w = await world();
    const src = join(w.dirs.base, 'src');
    sourceRepo(src, VERSIONS);
    git(src, 'gc', '-q', '--aggressive'); // the newest versions whole, older ones deltas on them
    git(w.root, 'clone', '-q', '--no-local', src, '.');
    git(w.root, 'checkout', '-q', 'HEAD~2');
    settle(w);
    const before = await treeOf(w.root);
    expect(await scan(w.session)).toMatchObject({ baseline: true, gitReferenced: 4, hashed: 0 });
    git(w.root, 'checkout', '-q', '-f', 'main');
    const r = await scan(w.session, { tool: 'Bash' });
    expect(r.warnings).toBeUndefined();
    expect(r.skipped).toEqual([]);
    expect(r.files.map((f) => [f.path, f.change])).toEqual([
      ['a.txt', 'modified'],
      ['d.txt', 'modified'],
      ['src/b.txt', 'modified'],
      ['src/deep/c.txt', 'modified'],
    ]);
    const cap = (await w.session.events()).filter((e): e is CaptureEvent => e.type === 'capture').at(-1)!;
    expect(cap.files.map((f) => f.state)).toEqual(['file', 'file', 'file', 'file']);
    await restore(w.session, r.tag!, {});
    expect(await treeOf(w.root)).toEqual(before);
  });
});

describe('git object store', () => {
  it('reads every blob of packed repositories (offset and ref deltas) byte for byte as git does', async () => {
    const w = await world();
    const src = join(w.dirs.base, 'src');
    sourceRepo(src, [...VERSIONS, ...VERSIONS.map((v) => ({ ...v, 'e.txt': bigText(4, 'x'.repeat(300)) }))]);
    for (const [label, args] of [
      ['ofs', ['-c', 'repack.useDeltaBaseOffset=true', 'repack', '-a', '-d', '-q', '-f']],
      ['ref', ['-c', 'repack.useDeltaBaseOffset=false', 'repack', '-a', '-d', '-q', '-f']],
    ] as const) {
      git(src, ...args);
      const objects = openGitObjects(join(src, '.git'));
      const blobs = git(src, 'rev-list', '--objects', '--all')
        .split('\n')
        .map((l) => l.split(' ')[0]!)
        .filter((oid) => oid && git(src, 'cat-file', '-t', oid).trim() === 'blob');
      expect(blobs.length, label).toBeGreaterThan(10);
      for (const oid of blobs) {
        expect(objects.hasHex(oid)).toBe(true);
        const want = execFileSync('git', ['cat-file', 'blob', oid], { cwd: src });
        expect((await objects.readBlob(oid))?.equals(want), `${label} ${oid}`).toBe(true);
      }
      expect(objects.hasHex('0'.repeat(40))).toBe(false);
      expect(await objects.readBlob('0'.repeat(40))).toBeUndefined();
    }
  });

  it('a seeded blob ends the delta chains through it: older versions are rebuilt from it, not from the pack', async () => {
    const w = await world();
    const src = join(w.dirs.base, 'src');
    sourceRepo(src, VERSIONS);
    git(src, 'gc', '-q', '--aggressive');
    const packDir = join(src, git(src, 'rev-parse', '--git-path', 'objects/pack').trim());
    const name = readdirSync(packDir).find((n) => n.endsWith('.pack'))!;
    // verify-pack rows: id type size size-in-pack offset [depth base-id]
    const rows = git(src, 'verify-pack', '-v', join(packDir, name.replace(/\.pack$/, '.idx')))
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    const delta = rows.find((r) => r[1] === 'blob' && r.length >= 7)!;
    const [oldOid, baseOid] = [delta[0]!, delta[6]!];
    const base = rows.find((r) => r[0] === baseOid)!;
    const want = execFileSync('git', ['cat-file', 'blob', oldOid], { cwd: src });
    const baseData = execFileSync('git', ['cat-file', 'blob', baseOid], { cwd: src });
    // The base's bytes in the pack damaged: only the seed can rebuild the older version now.
    const bytes = readFileSync(join(packDir, name));
    const [size, offset] = [Number(base[3]), Number(base[4])];
    for (let k = offset + 2; k < offset + size; k++) bytes[k] = (bytes[k] as number) ^ 0x55;
    writeFileSync(join(packDir, name), bytes);
    expect(openGitObjects(join(src, '.git')).readBlobs([oldOid])[0]).toBeUndefined();
    const seeded = openGitObjects(join(src, '.git'));
    expect(seeded.seedBlob(baseOid, baseData)).toBe(true);
    expect(seeded.seedBlob('0'.repeat(40), Buffer.from('not in git'))).toBe(false);
    expect(seeded.readBlobs([oldOid])[0]?.equals(want)).toBe(true);
  });

  it('a corrupt pack yields no content (never wrong content)', async () => {
    const w = await world();
    const src = join(w.dirs.base, 'src');
    sourceRepo(src, VERSIONS);
    git(src, 'gc', '-q');
    const oid = git(src, 'rev-parse', 'HEAD:a.txt').trim();
    const pack = git(src, 'rev-parse', '--git-path', 'objects/pack').trim();
    const name = readdirSync(join(src, pack)).find((n) => n.endsWith('.pack'))!;
    const bytes = readFileSync(join(src, pack, name));
    for (let k = 200; k < bytes.length - 40; k += 97) bytes[k] = (bytes[k] as number) ^ 0x55;
    writeFileSync(join(src, pack, name), bytes);
    const objects = openGitObjects(join(src, '.git'));
    expect(objects.hasHex(oid)).toBe(true); // the index still lists it
    expect(await objects.readBlob(oid)).toBeUndefined();
  });
});

describe('parseAlternates', () => {
  it('reads one path a line, skips comments and blank lines, unquotes C-quoted paths', () => {
    expect(parseAlternates('/a/objects\n# c\n\n../../b/objects/\r\n"/with \\"quote\\"/\\303\\244\\tx"\n')).toEqual([
      '/a/objects',
      '../../b/objects',
      '/with "quote"/ä\tx',
    ]);
  });
});

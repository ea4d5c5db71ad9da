// Oracle test on real history (issue 9, "Tests to add" 2 and 3): the fixture bundle holds 28 real
// trees of the Git project (renames, symlinks, mode flips, a symlink <-> file type change, folders
// that come and go). A folder is walked through the commits — a turn + a scan per commit — then every
// turn is restored in a shuffled (seeded) order and compared with `git ls-tree -r` of its commit:
// paths, modes (100644/100755/120000), blob ids and, through them, symlink targets, and the folders
// the tree implies. Once in a plain folder (commits applied by the test from `git diff --raw`), once
// in a git work tree moved with `git checkout`. `diff` between pairs of turns must agree with
// `git diff --name-status --no-renames` of the commits.
//
// A third walk records the history as an agent's tool calls do instead of scans: before each commit
// is applied, a capture of exactly the paths it changes — content the store has never seen, so each
// capture carries it inline (DESIGN §10 "Inline before-images") — with the blob-store copy dropped, as
// after a crash right after each append. Every turn must still restore exactly from the log's copies.
//
// By default a subset of the commits (the small early trees: renames, a folder that vanishes, a new
// symlink, a retarget, mode-only flips); CKPT_HISTORY_ALL=1 walks all 28 (with RelNotes' symlink <->
// file type changes) in both variants. The `--shared` clone (alternates) variant waits for the
// git-alternates fix of issue 9 E.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readFile, readlink, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../src/capture/capture.js';
import { startTurn } from '../src/capture/turn.js';
import type { CaptureEvent } from '../src/format/event.js';
import { diffSession } from '../src/history/diff.js';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import type { SessionHandle } from '../src/session/session-handle.js';
import { openStore } from '../src/store.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUNDLE = [join(REPO_ROOT, '..', 'shared', 'fixtures', 'history.bundle'), '/work/shared/fixtures/history.bundle'].find((p) => existsSync(p));

const ALL = process.env.CKPT_HISTORY_ALL === '1';
/** Default: the small early trees (renames, a vanishing folder, a new symlink, a retarget, mode-only flips). */
const COMMITS = ALL ? Array.from({ length: 28 }, (_, i) => i + 1) : [1, 2, 3, 4, 6, 7, 8];
/** In a git work tree (the slower path: content copied from git's objects as files change), fewer by default. */
const COMMITS_GIT = ALL ? COMMITS : [1, 2, 3, 4];
const tagOf = (n: number): string => `c${String(n).padStart(2, '0')}`;

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_NOSYSTEM: '1' };

function git(cwd: string, args: string[], input?: Buffer): Buffer {
  return execFileSync('git', args, { cwd, env: GIT_ENV, maxBuffer: 1 << 30, ...(input ? { input } : {}) });
}

interface TreeEntry {
  mode: string;
  oid: string;
}

/** `git ls-tree -r` of a commit: path -> mode and blob id. */
function lsTree(repo: string, rev: string): Map<string, TreeEntry> {
  const out = new Map<string, TreeEntry>();
  for (const rec of git(repo, ['ls-tree', '-r', '-z', rev]).toString('utf8').split('\0')) {
    if (!rec) continue;
    const tab = rec.indexOf('\t');
    const [mode, , oid] = rec.slice(0, tab).split(' ');
    out.set(rec.slice(tab + 1), { mode: mode!, oid: oid! });
  }
  return out;
}

/** The folders a tree implies (every ancestor of every entry). */
function foldersOf(paths: Iterable<string>): string[] {
  const dirs = new Set<string>();
  for (const p of paths) for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) dirs.add(p.slice(0, i));
  return [...dirs].sort();
}

const blobId = (data: Buffer): string => createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');

/** The workspace as git would see it: path -> mode and blob id, and its folders (`.git` left out). */
async function workTree(root: string): Promise<{ entries: Map<string, TreeEntry>; folders: string[] }> {
  const entries = new Map<string, TreeEntry>();
  const folders: string[] = [];
  async function walk(rel: string): Promise<void> {
    for (const name of await readdir(join(root, rel))) {
      if (rel === '' && name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const info = await lstat(join(root, r));
      if (info.isSymbolicLink()) entries.set(r, { mode: '120000', oid: blobId(Buffer.from(await readlink(join(root, r)))) });
      else if (info.isDirectory()) {
        folders.push(r);
        await walk(r);
      } else entries.set(r, { mode: info.mode & 0o100 ? '100755' : '100644', oid: blobId(await readFile(join(root, r))) });
    }
  }
  await walk('');
  return { entries, folders: folders.sort() };
}

function sorted(m: Map<string, TreeEntry>): [string, TreeEntry][] {
  return [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Moves a plain folder from the tree of `from` (or nothing) to the tree of `to`, as a checkout would. */
async function applyCommit(repo: string, root: string, from: string | undefined, to: string): Promise<void> {
  const target = lsTree(repo, to);
  const before = from ? lsTree(repo, from) : new Map<string, TreeEntry>();
  const changed: string[] = [];
  for (const [path, e] of target) {
    const b = before.get(path);
    if (!b || b.oid !== e.oid || b.mode !== e.mode) changed.push(path);
  }
  for (const path of before.keys()) {
    if (target.has(path)) continue;
    await rm(join(root, path), { force: true });
    // Folders exist while they hold something, as in git.
    for (let d = dirname(path); d !== '.'; d = dirname(d)) {
      try {
        await rmdir(join(root, d));
      } catch {
        break;
      }
    }
  }
  if (changed.length === 0) return;
  // All contents in one `git cat-file --batch`.
  const out = git(repo, ['cat-file', '--batch'], Buffer.from(changed.map((p) => `${target.get(p)!.oid}\n`).join('')));
  let at = 0;
  for (const path of changed) {
    const nl = out.indexOf(10, at);
    const size = Number(out.toString('latin1', at, nl).split(' ')[2]);
    const data = out.subarray(nl + 1, nl + 1 + size);
    at = nl + 1 + size + 1;
    const abs = join(root, path);
    await mkdir(dirname(abs), { recursive: true });
    await rm(abs, { force: true });
    const { mode } = target.get(path)!;
    if (mode === '120000') await symlink(data.toString('utf8'), abs);
    else {
      await writeFile(abs, data);
      await chmod(abs, mode === '100755' ? 0o755 : 0o644);
    }
  }
}

/** Deterministic shuffle (mulberry32). */
function shuffle<T>(items: readonly T[], seed: number): T[] {
  let s = seed >>> 0;
  const rand = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** git's name-status between two commits; T (type change) is M for ckpt (same path, other content). */
function gitNameStatus(repo: string, a: string, b: string): [string, string][] {
  const out: [string, string][] = [];
  const parts = git(repo, ['diff', '--name-status', '--no-renames', '-z', a, b]).toString('utf8').split('\0');
  for (let i = 0; i + 1 < parts.length; i += 2) out.push([parts[i + 1]!, parts[i] === 'T' ? 'M' : parts[i]!]);
  return out.sort(([x], [y]) => (x < y ? -1 : 1));
}

let dirs: TempDirs;
let repo: string;

beforeAll(() => {
  if (!BUNDLE) return;
  return (async () => {
    dirs = await makeTempDirs('ckpt-history-');
    repo = join(dirs.base, 'repo');
    git(dirs.base, ['clone', '-q', BUNDLE, repo]);
  })();
}, 120_000);
afterAll(() => dirs?.cleanup());

async function walkAndRestore(
  session: SessionHandle,
  root: string,
  commits: readonly number[],
  move: (from: string | undefined, to: string) => Promise<void>,
): Promise<Map<number, string>> {
  const turns = new Map<number, string>(); // commit -> turn tag
  let prev: string | undefined;
  for (const n of commits) {
    await move(prev, tagOf(n));
    prev = tagOf(n);
    // Every change is recorded by a scan before the turn that marks the tree of commit n.
    const r = await scan(session);
    expect(r.skipped).toEqual([]);
    turns.set(n, (await startTurn(session)).tag);
  }
  for (const n of shuffle(commits, 9)) {
    const r = await restore(session, turns.get(n)!);
    expect({ commit: n, skipped: r.skipped, drift: r.drift }).toEqual({ commit: n, skipped: [], drift: [] });
    const expected = lsTree(repo, tagOf(n));
    const actual = await workTree(root);
    expect({ commit: n, entries: sorted(actual.entries) }).toEqual({ commit: n, entries: sorted(expected) });
    expect({ commit: n, folders: actual.folders }).toEqual({ commit: n, folders: foldersOf(expected.keys()) });
  }
  return turns;
}

describe.skipIf(!BUNDLE)('real history oracle (issue 9)', () => {
  it('a plain folder walked through the commits restores every turn exactly; diffs agree with git', { timeout: 600_000 }, async () => {
    const root = join(dirs.base, 'plain');
    await mkdir(root);
    const store = await openStore({ dir: join(dirs.base, 'store-plain') });
    const session = await (await store.openWorkspace(root)).create({ title: 'history' });
    await scan(session); // baseline of the empty folder
    const turns = await walkAndRestore(session, root, COMMITS, (from, to) => applyCommit(repo, root, from, to));

    // diff between pairs of turns (both directions) agrees with git's name-status.
    const events = await session.events();
    const C = COMMITS;
    const pairs: [number, number][] = [
      [C[0]!, C[1]!],
      [C[1]!, C[0]!],
      [C[2]!, C[3]!],
      [C.at(-2)!, C.at(-1)!], // c07 -> c08 by default: mode-only flips
      [C.at(-1)!, C[0]!],
      ...(C.includes(22) ? ([[21, 22], [22, 24], [24, 21]] as [number, number][]) : []),
    ];
    for (const [a, b] of pairs) {
      const d = await diffSession({ events, from: turns.get(a)!, to: turns.get(b)!, blobs: session.ctx.blobs, root, maxBytes: session.ctx.options.maxBlobBytes });
      expect({ a, b, skipped: d.skipped }).toEqual({ a, b, skipped: [] });
      // git lists no folders; diff lists one made or removed (`dir`), as the restore makes or deletes it.
      expect({ a, b, changes: d.changes.filter((c) => !c.dir).map((c) => [c.path, c.status]) }).toEqual({ a, b, changes: gitNameStatus(repo, tagOf(a), tagOf(b)) });
    }
  });

  it('tool captures of content changed outside ckpt (carried inline, the store copy dropped) restore every turn exactly', { timeout: 600_000 }, async () => {
    const root = join(dirs.base, 'inline');
    await mkdir(root);
    // `defer` drops the blob-store copies: only the log's inline records hold that content.
    const store = await openStore({ dir: join(dirs.base, 'store-inline'), defer: () => {} });
    const session = await (await store.openWorkspace(root)).create({ title: 'history by tool calls', baseline: false });
    const turns = new Map<number, string>(); // commit n -> the turn whose start is the tree before n
    let prev: string | undefined;
    for (const n of COMMITS) {
      turns.set(n, (await startTurn(session)).tag);
      // The paths the commit changes, captured before it changes them (as PreToolUse does).
      const paths = prev ? gitNameStatus(repo, prev, tagOf(n)).map(([path]) => path) : [...lsTree(repo, tagOf(n)).keys()];
      const r = await capture(session, paths, { tool: 'Edit' });
      expect(r.warnings).toBeUndefined();
      await applyCommit(repo, root, prev, tagOf(n));
      prev = tagOf(n);
    }
    await scan(session); // the last tree, recorded
    const events = await session.events();
    const inlined = events.filter((e): e is CaptureEvent => e.type === 'capture' && e.inline !== undefined);
    expect(inlined.length).toBeGreaterThan(COMMITS.length / 2);
    // Only the log holds most of that content (the final scan stores what the last tree still has, e.g. after mode-only flips).
    const ids = inlined.flatMap((c) => Object.keys(c.inline!));
    const onlyInLog = (await Promise.all(ids.map(async (id) => !(await session.ctx.blobs.has(id))))).filter(Boolean).length;
    expect(onlyInLog).toBeGreaterThan(ids.length / 2);
    for (const n of shuffle(COMMITS, 7)) {
      const r = await restore(session, turns.get(n)!);
      expect({ commit: n, skipped: r.skipped, drift: r.drift }).toEqual({ commit: n, skipped: [], drift: [] });
      const before = COMMITS.indexOf(n) > 0 ? lsTree(repo, tagOf(COMMITS[COMMITS.indexOf(n) - 1]!)) : new Map<string, TreeEntry>();
      const actual = await workTree(root);
      expect({ commit: n, entries: sorted(actual.entries) }).toEqual({ commit: n, entries: sorted(before) });
      expect({ commit: n, folders: actual.folders }).toEqual({ commit: n, folders: foldersOf(before.keys()) });
    }
  });

  it('a git work tree moved with `git checkout` restores every turn exactly', { timeout: 600_000 }, async () => {
    const root = join(dirs.base, 'checkout');
    git(dirs.base, ['clone', '-q', '--no-checkout', repo, root]);
    git(root, ['checkout', '-q', tagOf(COMMITS_GIT[0]!)]);
    const store = await openStore({ dir: join(dirs.base, 'store-git') });
    const session = await (await store.openWorkspace(root)).create({ title: 'history in git' });
    await scan(session); // baseline: references git's blobs
    await walkAndRestore(session, root, COMMITS_GIT, async (from, to) => {
      if (from) git(root, ['checkout', '-q', to]);
    });
  });
});

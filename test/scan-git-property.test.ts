// Model-based property test of scans and restores in a git work tree (issue 4 item 4; DESIGN §10 "git
// blobs only where the work tree holds them"). Random sequences drive REAL git (spawned) — commits of
// small files (CRLF, LF, mixed, `$Id$`, non-UTF-8 bytes), .gitattributes changes (tracked at the top
// and in a subfolder, untracked at the top; eol=crlf, ident, text=auto, -text, binary, a macro),
// `core.autocrlf`, `info/attributes`, checkouts, resets, stashes, `rm` + `git checkout -- path`,
// `git rm`, `git mv`, what leaves git's blobs unnamed (`git rm --cached`, `reset --mixed`, `commit
// --amend`), `git gc` (objects repacked, loose ones removed), and right after a scan the reflogs and
// stashes expired and `gc --prune=now` (every object git's refs and index do not name is gone: what
// ckpt still references must be named by git's index then) — with shell edits (writes, deletes, renames, chmods, symlinks, folders, old
// mtimes) and ckpt scans in between. The model is the tree read from disk right after each scan; for
// every scan point, restoring to the capture that follows it must give back exactly that tree
// (bytes, modes, symlinks, folders), and the restore's undo the tree before the restore. A scan that
// records nothing must have seen nothing change.
//
// Variants: a plain folder (no git); git with settled indexes (files aged, then `git update-index
// --refresh`: git's entries trusted, so ckpt references blobs); git raced (scans right after
// checkouts and commits, git's index racily clean or smudged); and settled with `core.autocrlf`,
// `info/attributes` and an untracked top `.gitattributes` changed between scans. Scans are full,
// full with the index rewritten, or watched (told the paths a watcher would have seen).
// The prelude may also leave an untracked `g/.gitattributes` (ignored, or not) that no commit holds.
// Not generated (a documented residual, DESIGN §10 "a checkout that converts content" — Left): rules
// that changed between a checkout and the baseline (the rules of the moment of the checkout are
// unknown; here every rule is set before the first commit and its checkout).
//
// CKPT_PROPERTY_RUNS raises the number of runs per variant; CKPT_PROPERTY_SEED replays one (test/setup/property-replay.ts);
// CKPT_PROPERTY_STATS=1 prints how many points were restored and files referenced by blob id.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { chmod, mkdir, rename, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import { makeScanWorld, type ScanWorld } from './fixtures/scan-world.js';
import { strictTreeOf, type StrictTree } from './helpers/strict-tree.js';

const PATHS = ['a.txt', 'b.dat', 'd/c.txt', 'd/e/f.txt', 'g/h.bin'];
const CONTENTS: { name: string; bytes: Buffer }[] = [
  { name: 'lf', bytes: Buffer.from('one\ntwo\n') },
  { name: 'crlf', bytes: Buffer.from('one\r\ntwo\r\n') },
  { name: 'mixed', bytes: Buffer.from('one\r\ntwo\n') },
  { name: 'id', bytes: Buffer.from('x $Id$\n') },
  { name: 'id-crlf', bytes: Buffer.from('$Id$\r\n') },
  { name: 'latin1', bytes: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) },
  { name: 'nul', bytes: Buffer.from([0x00, 0xff, 0x0d, 0x0a]) },
  { name: 'empty', bytes: Buffer.alloc(0) },
  { name: 'short', bytes: Buffer.from('z') },
];
/** Attribute texts: converting (eol=crlf, ident, a macro), and not (-text, binary, text=auto). */
const ATTRS = [
  '',
  '*.txt text eol=crlf\n',
  '* ident\n',
  '*.dat -text\n*.txt ident\n',
  '*.bin binary\n* text eol=crlf\n',
  '[attr]win text eol=crlf\n*.dat win\n',
  '* text=auto\n',
  'c.txt eol=crlf\n',
];
/** Where attributes live: tracked at the top, tracked in d/ (each written and staged). */
const TRACKED_ATTRS = ['.gitattributes', 'd/.gitattributes'];

type Op =
  | { op: 'write'; path: string; content: string; mode: number }
  | { op: 'delete'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'chmod'; path: string; mode: number }
  | { op: 'link'; path: string; target: string }
  | { op: 'mkdir'; path: string }
  | { op: 'touchOld'; path: string }
  | { op: 'attrs'; file: string; text: string }
  | { op: 'commit'; branch: boolean }
  | { op: 'checkoutF'; pick: number }
  | { op: 'checkoutBranch'; pick: number }
  | { op: 'resetHard'; pick: number }
  | { op: 'stash' }
  | { op: 'stashPop' }
  | { op: 'discard'; path: string }
  | { op: 'gitRm'; path: string }
  | { op: 'gitMv'; from: string; to: string }
  | { op: 'untrack'; path: string }
  | { op: 'resetMixed'; pick: number }
  | { op: 'amend' }
  | { op: 'gc' }
  | { op: 'scanThenPrune'; always: boolean }
  | { op: 'settle' }
  | { op: 'config'; autocrlf: 'unset' | 'true' | 'false' | 'input' }
  | { op: 'info'; text: string }
  | { op: 'untracked'; text: string }
  | { op: 'scan'; always: boolean; watched: boolean };

/**
 * Before the baseline: config set once (changing it later is a documented residual), a first commit of
 * `files` with tracked attributes, checked out again (through git's conversion), so the baseline has
 * blobs to reference.
 */
interface Prelude {
  autocrlf: 'unset' | 'true' | 'false' | 'input';
  info: string;
  topUntracked: string;
  /**
   * `g/.gitattributes` (`*.bin text eol=crlf`), never committed and never changed: untracked, or
   * also ignored (.git/info/exclude) — git's checkout applies it either way; g/h.bin is then
   * committed and checked out again through it.
   */
  below: '' | 'untracked' | 'ignored';
  /** Committed; those with `again` are checked out once more (through git's conversion), the others keep the bytes written. */
  files: { path: string; content: string; again: boolean }[];
  top: string;
  sub: string;
}

const path = fc.constantFrom(...PATHS);
const shellOps: fc.Arbitrary<Op>[] = [
  fc.record({ op: fc.constant('write' as const), path, content: fc.constantFrom(...CONTENTS.map((c) => c.name)), mode: fc.constantFrom(0o644, 0o755) }),
  fc.record({ op: fc.constant('delete' as const), path }),
  fc.record({ op: fc.constant('rename' as const), from: path, to: path }),
  fc.record({ op: fc.constant('chmod' as const), path, mode: fc.constantFrom(0o644, 0o755) }),
  fc.record({ op: fc.constant('link' as const), path, target: fc.constantFrom('a.txt', '../b.dat', 'missing') }),
  fc.record({ op: fc.constant('mkdir' as const), path: fc.constantFrom('e', 'd/z', 'g') }),
  fc.record({ op: fc.constant('touchOld' as const), path }),
];
const scanOp = fc.record({ op: fc.constant('scan' as const), always: fc.boolean(), watched: fc.boolean() });
/** Every file and folder the operations can touch. */
const TOUCHABLE = [...PATHS, '.gitattributes', 'd/.gitattributes'];
const FOLDERS = ['d', 'd/e', 'g', 'e', 'd/z'];
const gitOps: fc.Arbitrary<Op>[] = [
  fc.record({ op: fc.constant('attrs' as const), file: fc.constantFrom(...TRACKED_ATTRS), text: fc.constantFrom(...ATTRS) }),
  fc.record({ op: fc.constant('commit' as const), branch: fc.boolean() }),
  fc.record({ op: fc.constant('checkoutF' as const), pick: fc.nat(20) }),
  fc.record({ op: fc.constant('checkoutBranch' as const), pick: fc.nat(20) }),
  fc.record({ op: fc.constant('resetHard' as const), pick: fc.nat(20) }),
  fc.constant({ op: 'stash' as const }),
  fc.constant({ op: 'stashPop' as const }),
  fc.record({ op: fc.constant('discard' as const), path }),
  fc.record({ op: fc.constant('gitRm' as const), path }),
  fc.record({ op: fc.constant('gitMv' as const), from: path, to: path }),
  fc.record({ op: fc.constant('untrack' as const), path }),
  fc.record({ op: fc.constant('resetMixed' as const), pick: fc.nat(20) }),
  fc.constant({ op: 'amend' as const }),
  fc.constant({ op: 'gc' as const }),
  fc.record({ op: fc.constant('scanThenPrune' as const), always: fc.boolean() }),
];
const settleOp = fc.constant({ op: 'settle' as const });
/** Rule changes after the baseline: what the baseline's residual is about, so only after it. */
const ruleOps: fc.Arbitrary<Op>[] = [
  fc.record({ op: fc.constant('config' as const), autocrlf: fc.constantFrom('unset' as const, 'true' as const, 'false' as const, 'input' as const) }),
  fc.record({ op: fc.constant('info' as const), text: fc.constantFrom('', '*.dat eol=crlf\n', '*.bin ident\n', '* text eol=crlf\n') }),
  fc.record({ op: fc.constant('untracked' as const), text: fc.constantFrom('', 'd/c.txt text eol=crlf\n', '*.txt ident\n') }),
];

function opsArb(git: boolean, settle: boolean, rules = false): fc.Arbitrary<Op[]> {
  const weighted = [
    ...(rules ? ruleOps.map((arbitrary) => ({ weight: 2, arbitrary })) : []),
    ...shellOps.map((arbitrary) => ({ weight: git ? 2 : 4, arbitrary })),
    { weight: 4, arbitrary: scanOp as fc.Arbitrary<Op> },
    ...(git ? gitOps.map((arbitrary) => ({ weight: 2, arbitrary })) : []),
    ...(git && settle ? [{ weight: 3, arbitrary: settleOp as fc.Arbitrary<Op> }] : []),
  ];
  return fc.array(fc.oneof(...weighted), { minLength: 4, maxLength: 24 });
}

const preludeArb: fc.Arbitrary<Prelude> = fc.record({
  autocrlf: fc.constantFrom('unset' as const, 'true' as const, 'false' as const, 'input' as const),
  info: fc.constantFrom('', '', '*.dat eol=crlf\n', '*.bin ident\n'),
  topUntracked: fc.constantFrom('', '', 'd/c.txt text eol=crlf\n'),
  below: fc.constantFrom('' as const, '' as const, 'untracked' as const, 'ignored' as const),
  files: fc.uniqueArray(fc.record({ path, content: fc.constantFrom(...CONTENTS.map((c) => c.name)), again: fc.boolean() }), { selector: (f) => f.path, maxLength: PATHS.length }),
  top: fc.constantFrom(...ATTRS),
  sub: fc.constantFrom(...ATTRS),
});

type Tree = StrictTree;

/** Every entry under `dir`, nothing followed (strict-tree.ts). */
const treeOf = (dir: string): Promise<Tree> => strictTreeOf(dir, { skip: ['.git'], bytes: true });

/** Whether anything (a dangling symlink too) is at `abs`. */
function lexists(abs: string): boolean {
  try {
    lstatSync(abs);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs git; a refusal (nothing to commit, a conflict, no such commit) is part of the sequence, not a failure. */
function tryGit(w: ScanWorld, ...args: string[]): boolean {
  try {
    execFileSync('git', args, {
      cwd: w.root,
      stdio: 'ignore',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    });
    return true;
  } catch {
    return false;
  }
}

interface RunLog {
  /** Trees at scans whose capture follows them, by the capture's tag. */
  points: { tag: string; tree: Tree; at: number }[];
  /** Files the scans referenced by git blob id (summed), for the run statistics. */
  gitReferenced: number;
}

/** Run statistics, printed with CKPT_PROPERTY_STATS=1 (is the reference path exercised?). */
const stats = { runs: 0, points: 0, gitReferenced: 0, scans: 0, watched: 0 };

/** Ages the files and refreshes git's index a tick later: git's entries are trusted, so ckpt references blobs. */
async function settleGit(w: ScanWorld): Promise<void> {
  const old = new Date(Date.now() - 60_000);
  for (const p of [...PATHS, ...TRACKED_ATTRS]) await utimes(w.at(p), old, old).catch(() => {});
  await sleep(20);
  tryGit(w, 'update-index', '-q', '--refresh');
}

async function runSequence(w: ScanWorld, git: boolean, settle: boolean, prelude: Prelude | undefined, ops: Op[]): Promise<RunLog> {
  const commits: string[] = [];
  const branches: string[] = [];
  if (git) {
    tryGit(w, 'init', '-q', '-b', 'main');
    if (prelude!.autocrlf !== 'unset') tryGit(w, 'config', 'core.autocrlf', prelude!.autocrlf);
    if (prelude!.info !== '') await w.write('.git/info/attributes', prelude!.info);
    if (prelude!.topUntracked !== '') {
      // Untracked at the top: never committed (left out of every `git add`, see addAll).
      await w.write('.gitattributes', prelude!.topUntracked);
    }
  }
  if (git && prelude!.below !== '') {
    await w.write('g/.gitattributes', '*.bin text eol=crlf\n');
    if (prelude!.below === 'ignored') await w.write('.git/info/exclude', 'g/.gitattributes\n');
    // g/h.bin committed and checked out again through that rule (so the baseline meets a converted file).
    const h = prelude!.files.find((f) => f.path === 'g/h.bin');
    if (h) h.again = true;
    else prelude!.files.push({ path: 'g/h.bin', content: 'lf', again: true });
  }
  const attrsTracked = git && prelude!.topUntracked === '';
  const addAll = () => tryGit(w, 'add', '-A', '--', '.', ':(exclude)g/.gitattributes', ...(attrsTracked ? [] : [':(exclude).gitattributes']));
  if (git) {
    const { files, top, sub } = prelude!;
    for (const f of files) await w.write(f.path, CONTENTS.find((c) => c.name === f.content)!.bytes);
    if (attrsTracked && top !== '') await w.write('.gitattributes', top);
    if (sub !== '') await w.write('d/.gitattributes', sub);
    addAll();
    if (tryGit(w, 'commit', '-q', '-m', 'c0')) {
      commits.push(w.git('rev-parse', 'HEAD').trim());
      // Checked out again, through git's conversion.
      for (const f of files) if (f.again) await w.remove(f.path);
      tryGit(w, 'checkout', '-q', '--', '.');
      if (settle) await settleGit(w);
    }
  }
  const points: RunLog['points'] = [];
  let gitReferenced = 0;
  let pending: { tree: Tree; at: number }[] = [];
  const touched = new Set<string>();
  const doScan = async (always: boolean, at: number, watched = false): Promise<void> => {
    // A watched scan (the daemon's) is told the paths a watcher saw touched since the last scan.
    const seen = new Set(touched);
    touched.clear();
    const r = await scan(w.session, { rewriteIndex: always ? 'always' : 'auto', ...(watched ? { changedPaths: async () => seen } : {}) });
    gitReferenced += r.gitReferenced;
    stats.scans++;
    if (r.watched !== undefined) stats.watched++;
    const now = await treeOf(w.root);
    if (r.tag === null) {
      // Nothing recorded: nothing may have changed since the last scan.
      const last = pending.at(-1);
      if (last) expect(now, `scan at op ${at} recorded nothing, but the tree changed since op ${last.at}`).toEqual(last.tree);
    } else {
      for (const p of pending) points.push({ tag: r.tag, tree: p.tree, at: p.at });
      pending = [];
    }
    pending.push({ tree: now, at });
  };
  await doScan(false, -1); // the baseline
  for (const [i, o] of ops.entries()) {
    // What a watcher would report: the files an operation names, the folders it made or removed;
    // for git and rule operations, everything.
    const dirsBefore = FOLDERS.map((d) => existsSync(w.at(d)));
    const named = 'path' in o ? [o.path] : 'from' in o ? [o.from, o.to] : [];
    const namedBefore = named.map((p) => lexists(w.at(p)));
    if (!['write', 'delete', 'rename', 'chmod', 'link', 'mkdir', 'touchOld', 'scan', 'scanThenPrune'].includes(o.op)) for (const p of [...TOUCHABLE, ...FOLDERS]) touched.add(p);
    switch (o.op) {
      case 'write':
        await w.remove(o.path);
        await w.write(o.path, CONTENTS.find((c) => c.name === o.content)!.bytes, o.mode);
        break;
      case 'delete':
        await w.remove(o.path);
        break;
      case 'rename':
        if (o.from !== o.to) {
          await w.remove(o.to);
          await mkdir(join(w.root, o.to, '..'), { recursive: true }).catch(() => {});
          await rename(w.at(o.from), w.at(o.to)).catch(() => {});
        }
        break;
      case 'chmod':
        await chmod(w.at(o.path), o.mode).catch(() => {});
        break;
      case 'link':
        await w.link(o.path, o.target);
        break;
      case 'mkdir':
        await mkdir(w.at(o.path), { recursive: true }).catch(() => {});
        break;
      case 'touchOld':
        await utimes(w.at(o.path), new Date(2020, 0, 1), new Date(2020, 0, 1)).catch(() => {});
        break;
      case 'attrs':
        if (o.file === '.gitattributes' && !attrsTracked) break;
        await w.remove(o.file);
        await w.write(o.file, o.text);
        tryGit(w, 'add', o.file);
        break;
      case 'commit':
        addAll();
        if (tryGit(w, 'commit', '-q', '-m', `c${commits.length}`)) {
          commits.push(w.git('rev-parse', 'HEAD').trim());
          if (o.branch && tryGit(w, 'branch', `b${branches.length}`)) branches.push(`b${branches.length}`);
        }
        break;
      case 'checkoutF':
        if (commits.length > 0) tryGit(w, 'checkout', '-q', '-f', commits[o.pick % commits.length] as string);
        break;
      case 'checkoutBranch':
        tryGit(w, 'checkout', '-q', ['main', ...branches][o.pick % (branches.length + 1)] as string);
        break;
      case 'resetHard':
        if (commits.length > 0) tryGit(w, 'reset', '-q', '--hard', commits[o.pick % commits.length] as string);
        break;
      case 'stash':
        tryGit(w, 'stash', '-q');
        break;
      case 'stashPop':
        tryGit(w, 'stash', 'pop', '-q');
        break;
      case 'discard':
        // `rm path; git checkout -- path`: the index's blob written again, through the attributes of now.
        await w.remove(o.path);
        tryGit(w, 'checkout', '-q', '--', o.path);
        break;
      case 'gitRm':
        tryGit(w, 'rm', '-q', '-f', o.path);
        break;
      case 'gitMv':
        if (o.from !== o.to) tryGit(w, 'mv', '-f', o.from, o.to);
        break;
      case 'untrack':
        tryGit(w, 'rm', '-q', '--cached', o.path);
        break;
      case 'resetMixed':
        if (commits.length > 0) tryGit(w, 'reset', '-q', '--mixed', commits[o.pick % commits.length] as string);
        break;
      case 'amend':
        addAll();
        if (tryGit(w, 'commit', '-q', '--amend', '-m', `c${commits.length} amended`)) commits.push(w.git('rev-parse', 'HEAD').trim());
        break;
      case 'gc':
        tryGit(w, 'gc', '-q');
        break;
      case 'scanThenPrune':
        // Only right after a scan: between scans, a blob git's index alone named (staged, or committed
        // and its reflog expired) that a later `gc --prune=now` takes is a documented residual (DESIGN
        // §10 "A git reference lasts while git's index names it" — Left).
        await doScan(o.always, i);
        tryGit(w, 'stash', 'clear');
        tryGit(w, 'reflog', 'expire', '--expire=now', '--all');
        tryGit(w, 'gc', '-q', '--prune=now');
        break;
      case 'settle':
        await settleGit(w);
        break;
      case 'config':
        if (o.autocrlf === 'unset') tryGit(w, 'config', '--unset', 'core.autocrlf');
        else tryGit(w, 'config', 'core.autocrlf', o.autocrlf);
        break;
      case 'info':
        await w.write('.git/info/attributes', o.text);
        break;
      case 'untracked':
        if (!attrsTracked) await w.write('.gitattributes', o.text);
        break;
      case 'scan':
        await doScan(o.always, i, o.watched);
        break;
    }
    FOLDERS.forEach((d, k) => existsSync(w.at(d)) !== dirsBefore[k] && touched.add(d));
    named.forEach((p, k) => (namedBefore[k] || lexists(w.at(p))) && touched.add(p));
  }
  await doScan(false, ops.length);
  return { points, gitReferenced };
}

/** Restores to every point (in the order `order` picks), checks the tree, undoes, checks the tree before. */
async function checkRestores(w: ScanWorld, log: RunLog, order: number[]): Promise<void> {
  const todo = [...log.points];
  for (const pick of order) {
    if (todo.length === 0) break;
    const [p] = todo.splice(pick % todo.length, 1);
    const before = await treeOf(w.root);
    const r = await restore(w.session, p!.tag, {});
    expect(await treeOf(w.root), `restore ${p!.tag} (the tree at the scan after op ${p!.at})`).toEqual(p!.tree);
    // Nothing to do (the tree is that point's already): nothing recorded, nothing to undo.
    if (r.undo === null) {
      expect(before).toEqual(p!.tree);
      continue;
    }
    await restore(w.session, r.undo, {});
    expect(await treeOf(w.root), `undo of restore ${p!.tag}`).toEqual(before);
  }
}

const RUNS = Number(process.env.CKPT_PROPERTY_RUNS ?? 4);

function variant(name: string, git: boolean, settle: boolean, rules = false): void {
  it(name, async () => {
    await fc.assert(
      fc.asyncProperty(preludeArb, opsArb(git, settle, rules), fc.array(fc.nat(), { minLength: 12, maxLength: 12 }), async (prelude, ops, order) => {
        const w = await makeScanWorld();
        try {
          const log = await runSequence(w, git, settle, git ? prelude : undefined, ops);
          stats.runs++;
          stats.points += log.points.length;
          stats.gitReferenced += log.gitReferenced;
          await checkRestores(w, log, order);
        } finally {
          await w.dirs.cleanup();
        }
      }),
      { numRuns: RUNS },
    );
    if (process.env.CKPT_PROPERTY_STATS) process.stderr.write(`${name} ${JSON.stringify(stats)}\n`);
    Object.assign(stats, { runs: 0, points: 0, gitReferenced: 0, scans: 0, watched: 0 });
  }, 600_000); // a pass takes seconds; shrinking a failure takes minutes
}

describe('scan + restore in a git work tree (model-based, real git)', () => {
  variant('a plain folder', false, false);
  variant('git, indexes settled (blobs referenced)', true, true);
  variant('git, raced (scans right after checkouts)', true, false);
  variant('git, settled, config and untracked rules changed after the baseline', true, true, true);
});

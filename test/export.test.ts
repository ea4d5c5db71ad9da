// `ckpt export SESSION TAG DIR` (issue 33): the tree a tag names, written into a fresh folder, equals
// the workspace as it was at that tag — checked against snapshots taken at each turn (paths, types,
// modes of files and folders, content, link targets), through the CLI, after the workspace folder is gone (what another
// machine sees), in a git work tree, and by a model-based property test of random changes.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportSession, openStore, type Session } from '../src/index.js';
import { runCli } from './helpers/cli.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { snapshotTree, treeDiff, type Tree } from './reliability/tree.js';

let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-export-');
});
afterEach(() => dirs.cleanup());

const w = (rel: string) => join(dirs.workspace, rel);
const exported = async (session: Session, tag: string): Promise<Tree> => {
  const out = join(dirs.base, `export-${tag}-${Math.random().toString(36).slice(2)}`);
  await exportSession(await openStore({ dir: dirs.store }), session.id, tag, out);
  return snapshotTree(out);
};

async function session(): Promise<Session> {
  const store = await openStore({ dir: dirs.store });
  return (await store.openWorkspace(dirs.workspace)).create({ id: 'export-session' });
}

describe('export', () => {
  it('writes each turn exactly as the workspace was, through the CLI too, and after the workspace is gone', async () => {
    await mkdir(w('src'));
    await writeFile(w('src/a.txt'), 'a1\n');
    await writeFile(w('keep.txt'), 'untouched\n');
    await symlink('src/a.txt', w('link'));
    const s = await session();
    const at: Tree[] = [];
    // Turn 1: an edit through capture/settle and a new executable file.
    at[1] = snapshotTree(dirs.workspace);
    await s.turn();
    await s.capture(['src/a.txt', 'run.sh']);
    await writeFile(w('src/a.txt'), 'a2\n');
    await writeFile(w('run.sh'), '#!/bin/sh\n');
    await chmod(w('run.sh'), 0o755);
    await s.settle(['src/a.txt', 'run.sh']);
    // Turn 2: shell-like changes found by a scan (delete, new folder, relinked symlink, mode change).
    at[2] = snapshotTree(dirs.workspace);
    await s.turn();
    await unlink(w('keep.txt'));
    await mkdir(w('docs'));
    await writeFile(w('docs/readme.md'), '# hi\n');
    await unlink(w('link'));
    await symlink('docs', w('link'));
    await chmod(w('run.sh'), 0o700);
    await s.scan({ tool: 'Bash' });
    at[3] = snapshotTree(dirs.workspace);
    await s.turn();
    await s.capture(['src']);
    await rm(w('src'), { recursive: true });
    await s.settle(['src']);
    const now = snapshotTree(dirs.workspace);

    for (const t of [1, 2, 3]) expect(treeDiff(await exported(s, String(t)), at[t]!), `turn ${t}`).toEqual([]);

    // The CLI, with a short prefix of the session id, text and JSON; a dry run writes nothing.
    const out = join(dirs.base, 'cli-out');
    const dry = await runCli(['--store', dirs.store, 'export', 'export-s', '2', out, '--dry-run', '--json'], { cwd: dirs.base });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json()).toMatchObject({ dryRun: true, session: 'export-session', tag: '2' });
    expect(dry.json().entries.map((e: { path: string }) => e.path)).toEqual([...at[2]!.keys()]);
    const cli = await runCli(['--store', dirs.store, 'export', 'export-s', '2', out], { cwd: dirs.base });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/exported tag 2 of session export-session/); // "exported 2 of session" read as a count
    expect(treeDiff(snapshotTree(out), at[2]!)).toEqual([]);
    // A folder that is not empty is refused, and left alone.
    const again = await runCli(['--store', dirs.store, 'export', 'export-session', '1', out, '--json'], { cwd: dirs.base });
    expect(again.code).not.toBe(0);
    expect(JSON.parse(again.stderr).error.code).toBe('INVALID_ARGUMENT');
    expect(treeDiff(snapshotTree(out), at[2]!)).toEqual([]);
    // The workspace is never touched; removing it (another machine sees no folder) changes nothing.
    expect(treeDiff(snapshotTree(dirs.workspace), now)).toEqual([]);
    await rm(dirs.workspace, { recursive: true });
    for (const t of [1, 2, 3]) expect(treeDiff(await exported(s, String(t)), at[t]!), `turn ${t} without the workspace`).toEqual([]);
  });

  it('a tag N.K names what restore N.K gives (another session\'s capture between the turn and it), folder modes included', async () => {
    await mkdir(w('d'));
    await writeFile(w('d/y'), 'y\n');
    await chmod(w('d'), 0o750);
    await writeFile(w('a'), 'one\n');
    const store = await openStore({ dir: dirs.store });
    const ws = await store.openWorkspace(dirs.workspace);
    const a = await ws.create({ id: 'export-a' });
    await a.turn();
    const atPrompt1 = snapshotTree(dirs.workspace);
    const b = await ws.create({ id: 'export-b' });
    await b.turn();
    await b.capture(['a']);
    await writeFile(w('a'), 'B\n');
    await b.settle(['a']);
    const beforeRestore = snapshotTree(dirs.workspace);
    const r = await a.restore('1', { force: true });
    expect(r.undo).toBe('1.1'); // the first capture of A's turn 1: tag 1 and 1.1 are one seq apart only on the timeline
    expect(treeDiff(snapshotTree(dirs.workspace), atPrompt1)).toEqual([]);
    const exportedTree = async (tag: string) => {
      const out = join(dirs.base, `export-a-${tag}`);
      await exportSession(store, a.id, tag, out);
      return snapshotTree(out);
    };
    expect(treeDiff(await exportedTree('1.1'), beforeRestore)).toEqual([]);
    expect(treeDiff(await exportedTree('1'), atPrompt1)).toEqual([]);
  });

  it('in a git work tree reads unchanged files from git objects, and says so when they are gone', async () => {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dirs.workspace, stdio: 'pipe' });
    git('init', '-q');
    await writeFile(w('tracked.txt'), 'in git\n');
    await writeFile(w('edited.txt'), 'before\n');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one');
    const s = await session();
    const before = snapshotTree(dirs.workspace);
    before.delete('.git');
    for (const p of [...before.keys()]) if (p.startsWith('.git/')) before.delete(p);
    await s.turn();
    await s.capture(['edited.txt']);
    await writeFile(w('edited.txt'), 'after\n');
    await s.settle(['edited.txt']);
    expect(treeDiff(await exported(s, '1'), before)).toEqual([]);
    await rm(w('.git'), { recursive: true });
    const out = join(dirs.base, 'no-git');
    const r = await exportSession(await openStore({ dir: dirs.store }), s.id, '1', out);
    // The edited file's before-image is in ckpt's store; the untouched tracked file only in git's.
    expect(r.skipped).toEqual([{ path: 'tracked.txt', why: 'git-object-missing' }]);
    expect(snapshotTree(out).get('edited.txt')).toBe(before.get('edited.txt'));
  });

  it('model: random changes, recorded by captures or scans; every turn exports as it was', async () => {
    const names = ['a', 'b', 'd/c', 'd/e'];
    const op = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), path: fc.constantFrom(...names), text: fc.string({ maxLength: 8 }), via: fc.constantFrom('capture', 'scan') }),
      fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom(...names), via: fc.constantFrom('capture', 'scan') }),
      fc.record({ kind: fc.constant('link' as const), path: fc.constantFrom('a', 'b'), target: fc.constantFrom('d', 'x', 'a'), via: fc.constantFrom('capture', 'scan') }),
      fc.record({ kind: fc.constant('chmod' as const), path: fc.constantFrom(...names), mode: fc.constantFrom(0o600, 0o644, 0o755), via: fc.constant('scan') }),
      fc.record({ kind: fc.constant('dirmode' as const), path: fc.constant('d'), mode: fc.constantFrom(0o700, 0o750, 0o755), via: fc.constant('scan') }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { maxLength: 4 }), { minLength: 1, maxLength: 4 }), async (turns) => {
        // A fresh folder per run: a new workspace, with its own baseline.
        const id = `model-${run++}`;
        const root = join(dirs.base, id);
        await mkdir(root);
        const w = (rel: string) => join(root, rel);
        const store = await openStore({ dir: dirs.store });
        const s = await (await store.openWorkspace(root)).create({ id });
        const at: Tree[] = [];
        for (const [i, ops] of turns.entries()) {
          at[i + 1] = snapshotTree(root);
          await s.turn();
          for (const o of ops) {
            const abs = w(o.path);
            if (o.kind === 'dirmode') {
              await mkdir(abs).catch(() => {});
              await chmod(abs, o.mode).catch(() => {});
              await s.scan({ tool: 'Bash' });
              continue;
            }
            if (o.via === 'capture') await s.capture([o.path]);
            await rm(abs, { recursive: true, force: true }).catch(() => {});
            if (o.kind === 'write') {
              await mkdir(join(abs, '..'), { recursive: true }).catch(() => {});
              await writeFile(abs, o.text).catch(() => {});
            } else if (o.kind === 'link') await symlink(o.target, abs).catch(() => {});
            else if (o.kind === 'chmod') {
              await mkdir(join(abs, '..'), { recursive: true }).catch(() => {});
              await writeFile(abs, 'm').catch(() => {});
              await chmod(abs, o.mode).catch(() => {});
            }
            if (o.via === 'capture') await s.settle([o.path]);
            else await s.scan({ tool: 'Bash' });
          }
        }
        for (let t = 1; t <= turns.length; t++) expect(treeDiff(await exported(s, String(t)), at[t]!), `turn ${t}`).toEqual([]);
      }),
      { numRuns: Number(process.env.CKPT_PROPERTY_RUNS ?? 10) },
    );
  });
});

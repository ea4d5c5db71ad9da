// The deterministic benchmark workspace: `files` source-like files in top folders of 20 sub-folders
// of 100 files each (100,000 files = 50×20×100, ~0.83 GB), sizes 200 B–30 KB skewed towards small
// files. Everything about file i (path, size, content) is a pure function of (seed, i), so any file
// can be put back to its pristine content without a copy. Trees are cached by their parameters.
import { fork } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GenJob } from './gen-worker.js';
import { createPrng } from './prng.js';
import { sourceText } from './source-text.js';

/** Bump when the generator's output changes, so cached trees are not reused. */
export const GENERATOR_VERSION = 2;
const FILES_PER_FOLDER = 100;
const SUBFOLDERS = 20;
const MIN_SIZE = 200;
const MAX_SIZE = 30 * 1024;
/** Skew of the size draw (size = min + range × u^SKEW): mean ≈ 200 + 30,520 / (SKEW + 1) ≈ 8.3 KB. */
const SKEW = 2.77;
const EXTS = ['ts', 'ts', 'ts', 'ts', 'ts', 'tsx', 'js', 'mjs'];

export interface TreeSpec {
  files: number;
  seed: number;
}

export interface Tree extends TreeSpec {
  /** The folder holding the cache entry (manifest, workspace, cached git-aware repo). */
  base: string;
  /** The workspace root. */
  root: string;
  bytes: number;
  /** Workspace-relative path of file i. */
  relPath(i: number): string;
  size(i: number): number;
  content(i: number): Buffer;
}

export function treeKey(spec: TreeSpec): string {
  return `v${GENERATOR_VERSION}-s${spec.seed}-n${spec.files}`;
}

function makeTree(spec: TreeSpec, base: string, bytes: number): Tree {
  const relPath = (i: number): string => {
    const leaf = Math.floor(i / FILES_PER_FOLDER);
    const top = Math.floor(leaf / SUBFOLDERS);
    const sub = leaf % SUBFOLDERS;
    const r = createPrng(spec.seed ^ 0x5a17, i);
    const ext = r.pick(EXTS);
    const k = String(i % FILES_PER_FOLDER).padStart(3, '0');
    return `pkg-${String(top).padStart(2, '0')}/mod-${String(sub).padStart(2, '0')}/file-${k}.${ext}`;
  };
  const size = (i: number): number => {
    const r = createPrng(spec.seed ^ 0x512e, i);
    return MIN_SIZE + Math.floor((MAX_SIZE - MIN_SIZE) * Math.pow(r.next(), SKEW));
  };
  return {
    ...spec,
    base,
    root: path.join(base, 'ws'),
    bytes,
    relPath,
    size,
    content: (i) => sourceText(spec.seed, i, size(i)),
  };
}

/** Writes every file, split over one child process per core (each running gen-worker.ts). */
async function writeAll(tree: Tree, onProgress: (done: number) => void): Promise<number> {
  const dirs = new Set<string>();
  for (let i = 0; i < tree.files; i += FILES_PER_FOLDER) dirs.add(path.dirname(tree.relPath(i)));
  for (const d of dirs) await fsp.mkdir(path.join(tree.root, d), { recursive: true });
  const files: [string, number][] = Array.from({ length: tree.files }, (_, i) => [tree.relPath(i), tree.size(i)]);
  const parts = Math.max(1, Math.min(os.availableParallelism(), 8));
  const script = fileURLToPath(new URL(`./gen-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  let done = 0;
  let reported = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: parts }, (_, part) => {
      const job: GenJob = { root: tree.root, seed: tree.seed, part, of: parts, files };
      const child = fork(script, [], { execArgv: process.execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      child.send(job);
      child.on('message', (m: { done: number; bytes?: number }) => {
        done += m.done;
        if (m.bytes) bytes += m.bytes;
        if (done - reported >= 10_000) onProgress((reported = done));
      });
      return new Promise<void>((resolve, reject) => {
        child.on('error', reject);
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tree generator part ${part} exited with ${code}`))));
      });
    }),
  );
  if (done !== tree.files) throw new Error(`tree generator wrote ${done} of ${tree.files} files`);
  return bytes;
}

/**
 * The tree for `spec` under `cacheDir` (`<cacheDir>/ckpt-bench-tree-<key>`): reused when a complete
 * one is there, generated otherwise.
 */
export async function ensureTree(spec: TreeSpec, cacheDir: string, log: (msg: string) => void): Promise<{ tree: Tree; reused: boolean }> {
  const base = path.join(cacheDir, `ckpt-bench-tree-${treeKey(spec)}`);
  const manifestPath = path.join(base, 'manifest.json');
  if (existsSync(manifestPath)) {
    try {
      const m = JSON.parse(await fsp.readFile(manifestPath, 'utf8')) as { key?: string; bytes?: number; complete?: boolean };
      if (m.complete && m.key === treeKey(spec) && typeof m.bytes === 'number') {
        return { tree: makeTree(spec, base, m.bytes), reused: true };
      }
    } catch {}
  }
  await fsp.rm(base, { recursive: true, force: true });
  await fsp.mkdir(base, { recursive: true });
  const tree = makeTree(spec, base, 0);
  log(`generating ${spec.files.toLocaleString('en-US')} files in ${tree.root} …`);
  const t0 = Date.now();
  const bytes = await writeAll(tree, (done) => log(`  ${done.toLocaleString('en-US')} / ${spec.files.toLocaleString('en-US')} files`));
  log(`generated ${(bytes / 1e9).toFixed(3)} GB in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await fsp.writeFile(manifestPath, JSON.stringify({ key: treeKey(spec), ...spec, bytes, complete: true }) + '\n');
  return { tree: { ...tree, bytes }, reused: false };
}

/** Puts files back to their pristine content (the benchmark edits a known set of them); returns how many differed. */
export async function resetFiles(tree: Tree, indices: Iterable<number>): Promise<number> {
  let rewritten = 0;
  for (const i of indices) {
    const file = path.join(tree.root, tree.relPath(i));
    const want = tree.content(i);
    const have = await fsp.readFile(file).catch(() => undefined);
    if (have && have.equals(want)) continue;
    await fsp.writeFile(file, want);
    rewritten++;
  }
  return rewritten;
}

// A scan that looks only at the paths a file watcher saw touched (DESIGN §10 "Daemon"): the daemon
// keeps, per workspace, the set of paths touched since its last scan, and this module turns that set
// into exactly the changes a full stat scan would record — same comparisons with what ckpt last knew
// (owner records newer than the scan index, else the index), same content reading and storing, same
// single capture + settle. A touched folder stands for its whole subtree (a moved-in or moved-out
// folder raises one event), so its present files are listed and its former files taken from the index.
//
// It declines (returns undefined, and the caller runs the full scan) whenever it could differ: no
// index yet (the baseline), folders an earlier cut-short scan never reached, ignore rules changed
// (a rule file touched, or the root's rule sources differ from the index's), a git blob the index
// references that git's index no longer names, a hard-linked file, a path that cannot be stat'ed
// (the full walk reports it as unreadable), or too many paths touched. It never rewrites the scan
// index: the owner records written by the capture carry the changes, as a full scan that re-read few
// paths does.
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import type { FileImage } from '../format/event.js';
import type { SessionHandle } from '../session/session-handle.js';
import { loadGitIndex, withUntrackedAttributes, type GitIndex } from '../workspace/git-index.js';
import { gitReferencesNamed } from './git-carried.js';
import { openGitObjects, type GitObjects } from '../workspace/git-objects.js';
import { findGitDirs } from '../workspace/git-repo.js';
import { createIgnoreRules, IGNORE_FILE_NAMES, type IgnoreRules } from '../workspace/ignore-rules.js';
import { rootRulesText } from '../workspace/walk.js';
import { compare, dirImage, imageOfSlot, newerOwnerImages, notRacy, type Known, type SkippedList } from './known.js';
import type { Change } from './scan-compare.js';
import { KIND_DIR, KIND_FILE, KIND_GONE, KIND_SYMLINK, ScanIndex } from './scan-index.js';
import { loadIndexCached } from './scan-persist.js';
import { recordChanges } from './scan-record.js';
import { createScanPack } from './scan-pack.js';
import type { ScanOptions, ScanResult } from './scan-types.js';
import { readAndStore } from './store-content.js';
import { contentPass } from './content-pass.js';

/** Beyond this many paths to look at, the full scan (which can also rewrite the index) is the better tool. */
export const MAX_WATCHED_CANDIDATES = 4096;
const RACY_MS = 2_000;
const RULE_FILES: ReadonlySet<string> = new Set(IGNORE_FILE_NAMES);

/** Thrown inside to give up on the watched scan. */
class Decline extends Error {}

/**
 * Scans only `touched` (workspace-relative paths; a folder stands for its subtree). Must run under the
 * workspace's scan lock. Undefined when the result could differ from a full scan's: run that instead.
 */
export async function scanChanged(session: SessionHandle, touched: ReadonlySet<string>, options: ScanOptions, t0: number): Promise<ScanResult | undefined> {
  const { ctx } = session;
  const root = ctx.workspace.root;
  const maxBytes = ctx.options.maxBlobBytes;
  const startMs = Date.now();
  const prev = (await loadIndexCached(session, 'stat')).index;
  if (!prev || prev.unbaselined.length > 0) return undefined;
  const rules = createIgnoreRules({ root, storeDir: ctx.dir, extra: options.ignore });
  if (prev.rules.get('') !== rootRulesText(rules)) return undefined;
  const racyBefore = prev.timeMs - (options.racyMs ?? RACY_MS);
  // git's index changed since the scan index was written and no longer names a git blob the index
  // references: the full scan reads those files (git-carried.ts) — git may prune the blob now.
  if (!gitReferencesNamed(root, prev, racyBefore)) return undefined;
  const owners = await newerOwnerImages(session, prev.timeMs);

  let candidates: string[];
  const probe = createProbe(root);
  try {
    candidates = expand(touched, prev, owners, rules, probe, options.knownFilesIn ?? []);
  } catch (err) {
    if (err instanceof Decline) return undefined;
    throw err;
  }

  const knownOf = (path: string, p: number): Known | undefined => {
    const o = owners.get(path);
    if (o) return { image: o };
    return p >= 0 && prev.kind[p] !== KIND_DIR ? imageOfSlot(prev, p, path) : undefined;
  };

  // ---- stat each candidate as the walk would, keeping what it would keep ----
  const next = new ScanIndex(candidates.length + 16, startMs);
  const work: number[] = [];
  const workPrev: number[] = [];
  const workAbs: string[] = [];
  const skipped: SkippedList = [];
  const changes: Change[] = [];
  const gone = (path: string, p: number): void => {
    const known = knownOf(path, p);
    if (known && known.image.state !== 'absent') changes.push({ before: known, after: { path, state: 'absent' }, change: 'deleted' });
  };
  let scanned = 0;
  const leaveOut = new Set(options.leaveOut);
  /** Folders made since ckpt last looked, recorded by this scan. */
  const made = new Set<string>();
  for (const path of candidates) {
    if (leaveOut.has(path)) continue;
    const slot = prev.slotOf(path);
    const st = probe.lstat(path);
    if (st === 'unreadable') return undefined;
    // Folders removed or replaced are recorded by the full scan only: a touched path that was a folder,
    // or whose parent is no folder ckpt knows (the index's, an owner record's, or one made meanwhile
    // and recorded just above: parents sort first), falls back to it.
    const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    const parentSlot = parent === '' ? 0 : prev.slotOf(parent);
    const knownFolder = (parentSlot >= 0 && prev.kind[parentSlot] === KIND_DIR) || owners.get(parent)?.state === 'dir';
    if (parent !== '' && !made.has(parent) && !knownFolder) return undefined;
    // Its folder gone (moved or removed by hand, not among the touched paths): the full scan records it.
    if (parent !== '' && !probe.isDir(parent)) return undefined;
    if ((slot >= 0 && prev.kind[slot] === KIND_DIR) || owners.get(path)?.state === 'dir') return undefined;
    if (st !== undefined && st.isDirectory()) {
      // A folder made where ckpt knew nothing (or a deletion): created, with its mode, as the full scan
      // records it; its subtree is among the candidates (expand). A Bash `mkdir` used to cost a full scan.
      const known = knownOf(path, slot);
      if (slot >= 0 || (known && known.image.state !== 'absent')) return undefined;
      made.add(path);
      changes.push({ before: known ?? { image: { path, state: 'absent' } }, after: dirImage(path, st.mode), change: 'created' });
      continue;
    }
    if (st === undefined) {
      gone(path, slot);
      continue;
    }
    // A socket, FIFO or device: the full scan records it as a path it cannot store (scan-walk.ts).
    if (!st.isFile() && !st.isSymbolicLink() && !st.isDirectory()) return undefined;
    // A file with more names (hard links): a write through one changes the others, which no watcher
    // event names; the full scan sees them all by stat (a probe: the other name kept its old record).
    if (st.isFile() && st.nlink > 1) return undefined;
    scanned++;
    const kind = st.isFile() ? KIND_FILE : KIND_SYMLINK;
    const stat = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode };
    if (slot >= 0 && !owners.has(path) && prev.statEquals(slot, stat) && prev.kind[slot] !== KIND_DIR && notRacy(prev, slot, racyBefore)) continue;
    const i = next.push(path, kind, stat);
    work.push(i);
    workPrev.push(slot);
    workAbs.push(`${root}/${path}`);
  }

  // ---- content of new and changed paths (as the full scan: symlinks, size cap, git references, then read) ----
  let gitIndex: GitIndex | undefined;
  let gitLoaded = false;
  const git = (): GitIndex | undefined => {
    if (!gitLoaded) {
      gitLoaded = true;
      gitIndex = options.git !== false ? loadGitIndex(root) : undefined;
    }
    return gitIndex;
  };
  let objects: GitObjects | undefined | null = null;
  const gitObjects = (): GitObjects | undefined => {
    if (objects === null) {
      const dir = git()?.objectsGitdir ?? findGitDirs(root)?.commondir;
      objects = dir !== undefined ? openGitObjects(dir) : undefined;
    }
    return objects;
  };
  // Untracked .gitattributes convert what lies below them (withUntrackedAttributes): those the last
  // full scan saw (its index, or the owner records since) and those among the touched paths.
  let gitSeen: GitIndex | undefined;
  const gitForContent = (): GitIndex | undefined => {
    const g = git();
    if (!g || gitSeen) return gitSeen ?? g;
    const attributeFiles = [...prev.paths, ...owners.keys(), ...candidates].filter((p) => p.endsWith('/.gitattributes'));
    return (gitSeen = withUntrackedAttributes(g, attributeFiles));
  };
  const { toRead, gitReferenced, gitDropped } = contentPass({ next, work, workPrev, workAbs, prev, owners, maxBytes, skipped, git: gitForContent, gitObjects });
  // A reference git's index no longer names: only the full scan rewrites the index that holds it.
  if (gitDropped > 0) return undefined;
  // The content read goes into one pack, committed before the capture (scan-pack.ts).
  const pack = createScanPack(ctx);
  try {
    const read = await readAndStore({ pack, next, work, workPrev, workAbs, toRead, prev, pool: undefined, maxBytes, skipped, onProgress: options.onProgress });

    // ---- compare with what ckpt last knew ----
    const recordedBlobs = new Set<string>();
    for (let w = 0; w < work.length; w++) {
      const i = work[w] as number;
      if (next.kind[i] === KIND_GONE) continue;
      const path = next.paths[i] as string;
      const known = knownOf(path, workPrev[w] as number) ?? { image: { path, state: 'absent' } as FileImage };
      const now = imageOfSlot(next, i, path);
      const change = compare(known, now, read.gitSha1.get(i));
      if (change === 'created' && now.image.state === 'skipped') continue;
      // An after-state known only as git's blob (a mode-only change of a file matching git's index)
      // carries it, as in the full scan (scan-compare.ts): recording copies its content id from git.
      if (change) changes.push({ before: known, after: now.image, ...(now.gitOid !== undefined ? { afterGitOid: now.gitOid } : {}), change });
      // Touched, read, unchanged (an agent's write that ckpt settled): its content is the known image's.
      else if (now.image.state === 'file' && now.image.blob !== undefined && known.image.state === 'file' && known.image.blob === now.image.blob) recordedBlobs.add(now.image.blob);
    }

    const warnings: string[] = [];
    const recorded = await recordChanges({ session, changes, gitObjects, tool: options.tool ?? 'scan', pack, warnings, recordedBlobs, gitSeeds: read.gitSeeds });
    return {
      tag: recorded.tag,
      ...(recorded.seq !== undefined ? { seq: recorded.seq } : {}),
      files: recorded.files,
      scanned,
      dirs: made.size,
      hashed: read.hashed,
      gitReferenced,
      stored: read.stored + recorded.stored,
      skipped,
      watched: candidates.length,
      ...(warnings.length > 0 ? { warnings } : {}),
      ms: Math.round(performance.now() - t0),
    };
  } finally {
    await pack.abort(); // a no-op once committed
  }
}

/** The file-level paths to look at: touched paths, the present subtree of touched folders, and their former content. */
function expand(touched: ReadonlySet<string>, prev: ScanIndex, owners: ReadonlyMap<string, FileImage>, rules: IgnoreRules, probe: Probe, knownFilesIn: readonly string[]): string[] {
  const out = new Set<string>();
  const add = (path: string): void => {
    if (RULE_FILES.has(path.slice(path.lastIndexOf('/') + 1))) throw new Decline('rule file');
    out.add(path);
    if (out.size > MAX_WATCHED_CANDIDATES) throw new Decline('too many');
  };
  for (const dir of knownFilesIn) addKnownFiles(prev, owners, rules, probe, dir, add);
  // Touched paths that are (or were) folders, or are gone: what was recorded below them is looked at too.
  const folders: string[] = [];
  for (const raw of touched) {
    const path = raw.replace(/\/+$/, '');
    if (path === '' || path.startsWith('/') || path.split('/').some((s) => s === '' || s === '.' || s === '..')) continue;
    const st = probe.lstat(path);
    if (st === 'unreadable') throw new Decline('unreadable');
    const isDir = st !== undefined && st.isDirectory();
    // Hard-linked, maybe to a name ckpt records (an ignored build output linked to a source): see below.
    if (st !== undefined && st.isFile() && st.nlink > 1) throw new Decline('hard link');
    // A rule file applies even where its own rules ignore it (`*` in a folder's .gitignore), as git
    // reads it: its edit changes what is ignored, which only the full scan works out (a probe).
    if (RULE_FILES.has(path.slice(path.lastIndexOf('/') + 1))) throw new Decline('rule file');
    if (rules.isIgnoredPath(path, isDir)) {
      // git reads attributes whatever its ignore rules say; only the full scan's walk notes an ignored
      // one (scan-walk.ts), so that what lies below it is not referenced.
      if (path === '.gitattributes' || path.endsWith('/.gitattributes')) throw new Decline('ignored attributes');
      // As in the full scan: an ignored path ckpt knows (a tool captured it by name) that is gone was
      // deleted (found by the watched-scan property test under load, then every run with its example).
      if (st === undefined && (prev.slotOf(path) >= 0 || owners.has(path))) add(path);
      if (st === undefined || isDir) addGoneIgnored(prev, owners, probe, path, add);
      continue;
    }
    add(path);
    const s = prev.slotOf(path);
    if (isDir || st === undefined || (s >= 0 && prev.kind[s] === KIND_DIR)) folders.push(path);
    if (isDir) listTree(probe.root, path, rules, add);
  }
  if (folders.length > 0) {
    for (const dir of prev.rules.keys()) {
      if (dir !== '' && folders.some((f) => dir === f || dir.startsWith(`${f}/`))) throw new Decline('rule folder');
    }
    for (const f of folders) {
      // The index has entries below a folder only if it has the folder: its block lists them.
      const s = prev.slotOf(f);
      if (s >= 0 && prev.kind[s] === KIND_DIR) addRecordedSubtree(prev, s, `${f}/`, add);
      const prefix = `${f}/`;
      for (const path of owners.keys()) if (path.startsWith(prefix) && !rules.isIgnoredPath(path)) add(path);
      addGoneIgnored(prev, owners, probe, f, add);
    }
  }
  return [...out].sort();
}

/**
 * A folder moved away, removed or replaced (one event: its name): the files below it that ckpt knows
 * while their names are ignored — a tool wrote them by name: the index carries them, or an owner
 * record names them — and that are gone are looked at too, as the full scan's deletions (a probe: a
 * tool's file in an ignored `build/` outlived the folder moved away, and `restore N` made it again).
 */
function addGoneIgnored(prev: ScanIndex, owners: ReadonlyMap<string, FileImage>, probe: Probe, dir: string, add: (path: string) => void): void {
  const prefix = `${dir}/`;
  const gone = (path: string) => path.startsWith(prefix) && probe.lstat(path) === undefined;
  for (const [slot, why] of prev.why) if (why === 'ignored' && gone(prev.paths[slot] as string)) add(prev.paths[slot] as string);
  for (const [path, image] of owners) if (image.state !== 'absent' && gone(path)) add(path);
}

/**
 * The files and links ckpt knows directly in `dir` (the index's block of it, owner records), not its
 * rule files (those would turn every such look into the full scan; the next one sees them); a folder
 * ckpt knows there that is gone declines (the full scan records it and what it held).
 */
function addKnownFiles(prev: ScanIndex, owners: ReadonlyMap<string, FileImage>, rules: IgnoreRules, probe: Probe, dir: string, add: (path: string) => void): void {
  const prefix = dir === '' ? '' : `${dir}/`;
  const direct = (path: string) => path.startsWith(prefix) && !path.slice(prefix.length).includes('/');
  const file = (path: string) => direct(path) && !RULE_FILES.has(path.slice(prefix.length)) && !rules.isIgnoredPath(path);
  // A folder ckpt knows there that is gone (removed or moved by hand): only the full scan records folders.
  const folder = (path: string) => {
    if ((owners.get(path)?.state ?? 'dir') === 'dir' && !rules.isIgnoredPath(path, true) && !probe.isDir(path)) throw new Decline('folder gone');
  };
  // The root's block is the index's first (its length kept apart); a folder's, through its slot.
  const d = dir === '' ? -1 : prev.slotOf(dir);
  if (dir === '' || (d >= 0 && prev.kind[d] === KIND_DIR)) {
    const first = dir === '' ? 0 : (prev.size[d] as number);
    const n = dir === '' ? prev.rootChildren : (prev.mtime[d] as number);
    if (!(first >= 0 && n >= 0 && first + n <= prev.count)) throw new Decline('index folder block');
    for (let j = first; j < first + n; j++) {
      const path = prev.paths[j] as string;
      if (prev.kind[j] === KIND_DIR) folder(path);
      else if (file(path)) add(path);
    }
  }
  for (const [path, image] of owners) {
    if (image.state === 'dir' && direct(path)) folder(path);
    else if (image.state !== 'dir' && file(path)) add(path);
  }
}

/** Every file entry the index records below folder slot `d` (through the folders' child blocks). */
function addRecordedSubtree(prev: ScanIndex, d: number, prefix: string, add: (path: string) => void): void {
  const first = prev.size[d] as number;
  const n = prev.mtime[d] as number;
  if (!(first >= 0 && n >= 0 && first + n <= prev.count)) throw new Decline('index folder block');
  for (let j = first; j < first + n; j++) {
    const path = prev.paths[j] as string;
    if (!path.startsWith(prefix)) throw new Decline('index folder block');
    if (prev.kind[j] === KIND_DIR) addRecordedSubtree(prev, j, `${path}/`, add);
    else add(path);
  }
}

/** Every file, link and folder below `dir` that the walk would visit (ignored ones left out). */
function listTree(root: string, dir: string, rules: IgnoreRules, add: (path: string) => void): void {
  let entries;
  try {
    entries = readdirSync(`${root}/${dir}`, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return; // gone meanwhile: its paths read as absent
    throw new Decline('unreadable folder');
  }
  for (const e of entries) {
    const path = `${dir}/${e.name}`;
    const isDir = e.isDirectory();
    // A rule file its own rules ignore still applies (add declines for it): the folder's first look.
    if (rules.isIgnoredPath(path, isDir) && !RULE_FILES.has(e.name)) continue;
    add(path);
    if (isDir) listTree(root, path, rules, add);
  }
}

interface Probe {
  readonly root: string;
  /** lstat of a workspace path whose every ancestor is a real folder; undefined when absent (or under a file/link). */
  lstat(path: string): Stats | undefined | 'unreadable';
  /** Whether `dir` and every folder above it are real folders now. */
  isDir(dir: string): boolean;
}

function createProbe(root: string): Probe {
  const dirs = new Map<string, boolean>();
  const stat = (path: string): Stats | undefined | 'unreadable' => {
    try {
      return lstatSync(`${root}/${path}`, { throwIfNoEntry: false });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOTDIR' || code === 'ENOENT' ? undefined : 'unreadable';
    }
  };
  const realDir = (dir: string): boolean => {
    let ok = dirs.get(dir);
    if (ok === undefined) {
      const k = dir.lastIndexOf('/');
      const st = k > 0 && !realDir(dir.slice(0, k)) ? undefined : stat(dir);
      ok = st !== undefined && st !== 'unreadable' && st.isDirectory();
      dirs.set(dir, ok);
    }
    return ok;
  };
  return {
    root,
    isDir: realDir,
    lstat(path) {
      const k = path.lastIndexOf('/');
      if (k > 0 && !realDir(path.slice(0, k))) return undefined;
      return stat(path);
    },
  };
}


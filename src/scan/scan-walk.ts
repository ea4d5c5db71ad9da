// The walk of a scan (the hot loop: no promises, no per-entry objects beyond the stat): every path is
// lstat'ed once and entered into the next scan index; a path whose stat matches the previous index
// (and is neither racily clean nor newer in the owner records) keeps its content from there, every
// other one becomes a work item whose content is read (or referenced from git) afterwards. A baseline
// in a git work tree matches each regular file against git's index right here (its stat numbers are
// at hand), so a clean tree produces no work items at all.
import type { FileImage } from '../format/event.js';
import type { IgnoreRules } from '../workspace/ignore-rules.js';
import { UNREADABLE, type ListPool } from '../workspace/list-dir.js';
import { walkWorkspace, type WalkResult } from '../workspace/walk.js';
import { notRacy, type SkippedList } from './known.js';
import { withUntrackedAttributes, type GitIndex } from '../workspace/git-index.js';
import type { GitObjects } from '../workspace/git-objects.js';
import { HASH_GIT, HASH_NONE, KIND_DIR, KIND_FILE, KIND_SKIPPED, KIND_SYMLINK, ScanIndex } from './scan-index.js';

export interface WalkPhaseInput {
  root: string;
  rules: IgnoreRules;
  prev: ScanIndex | undefined;
  /** Owner-index images newer than `prev`: their paths are always re-read. */
  owners: ReadonlyMap<string, FileImage>;
  /** Wall-clock start of the scan (the next index's time). */
  startMs: number;
  /** Entries whose inode changed after this (ms) are not trusted even when their stat matches. */
  racyBefore: number;
  deadline: number | undefined;
  /** Entries after which a worker thread lists folders too (Infinity: never). */
  parallelAfter: number;
  makePool: () => ListPool | undefined;
  /** Holds the pool made, so the caller can close it. */
  resources: { pool?: ListPool };
  /**
   * Git's index, for a baseline: a regular file (up to `maxBytes`) whose lstat matches its entry (and
   * is not racily clean there) references git's blob instead of becoming a work item.
   */
  git?: GitIndex | undefined;
  /** Git's object store: an entry whose blob is not in it (a broken alternate) is read instead. */
  gitObjects?: GitObjects | undefined;
  maxBytes?: number;
}

export interface WalkPhase {
  next: ScanIndex;
  /** 1 for each previous-index slot the walk saw. */
  seenPrev: Uint8Array;
  /** Slots of `next` whose content must be read, with their previous-index slot (or -1) and absolute path. */
  work: number[];
  workPrev: number[];
  workAbs: string[];
  skipped: SkippedList;
  /** Files and symlinks seen. */
  scanned: number;
  /** Owner-record paths the walk saw. */
  ownerSeen: Set<string>;
  /** Folder slots of `next` with their previous-index slot (or -1): folders are compared like files. */
  dirSlots: number[];
  dirPrev: number[];
  /** Files referenced from git's index (not work items). */
  gitReferenced: number;
  /** Git references copied from the previous index by stat: pairs of slots (`next`, previous index). */
  gitCarried: number[];
  /** Every `.gitattributes` file the walk saw (git-index.ts withUntrackedAttributes). */
  attributeFiles: string[];
  walk: WalkResult;
}

export async function walkPhase(input: WalkPhaseInput): Promise<WalkPhase> {
  const { root, rules, prev, owners, startMs, racyBefore, parallelAfter, makePool, resources } = input;
  // Sized for the previous index, or on a baseline for git's entries and their folders (the columns
  // are not regrown and copied while the walk runs).
  const gitCount = input.git?.table.count;
  const next = new ScanIndex((prev?.count ?? (gitCount !== undefined ? Math.ceil(gitCount * 1.1) : 1024)) + 256, startMs);
  const seenPrev = new Uint8Array(prev?.count ?? 0);
  const work: number[] = [];
  const workPrev: number[] = [];
  const workAbs: string[] = [];
  const skipped: SkippedList = [];
  let scanned = 0;
  const ownerSeen = new Set<string>();
  const dirSlots: number[] = [];
  const dirPrev: number[] = [];
  const gitTable = input.git?.table;
  const gitIndexMtimeMs = input.git?.indexMtimeMs ?? 0;
  const gitConversion = input.git?.conversion;
  // Referenced files whose conversion only their blob's size rules out (line endings): slots and ids.
  const sizeSlots: number[] = [];
  const sizeIds: Uint8Array[] = [];
  const gitObjects = input.gitObjects;
  const maxBytes = input.maxBytes ?? Infinity;
  let gitReferenced = 0;
  const gitCarried: number[] = [];
  const attributeFiles: string[] = [];
  // An ASCII-only git index is matched by name within the folder being listed (no map of every path).
  const gitByFolder = gitTable?.ascii === true;
  let gitNames: Map<string, number> | undefined;

  // An unchanged folder lists its entries in the order the previous index recorded them (a folder's
  // children are one block of slots): the next slot of the block is checked first, then the block,
  // and the path map (built lazily) only for large or unknown blocks. A file carried while its name
  // is ignored (scan-compare.ts) sits after every block, so a miss looks for it among those — missed,
  // its name un-ignored was recorded both "created" and "deleted" by one scan (a seed of the
  // watched-scan property test: `b.txt` ignored, then un-ignored, beside files ckpt knew). It is
  // known only where the rules changed: elsewhere its name is ignored still, and the walk tests a
  // name against the rules only when it is not known. (A miss used to build the map of every path
  // once one file was carried, and every scan has misses: each ignored name of a listed folder.)
  let blockStart = 0;
  let blockEnd = -1;
  let cursor = -1;
  let childStart = 0;
  const carried = prev ? carriedFiles(prev) : undefined;
  const bySlotMap = (rel: string, rulesChanged: boolean): number => {
    const s = prev!.slotOf(rel);
    return s >= 0 && !rulesChanged && carried?.get(rel) === s ? -1 : s;
  };
  const knownSlot = (rel: string, rulesChanged: boolean): number => {
    if (blockEnd < 0) return bySlotMap(rel, rulesChanged);
    const expected = cursor + 1;
    if (expected < blockEnd && prev!.paths[expected] === rel) return (cursor = expected);
    if (blockEnd - blockStart > 256) return bySlotMap(rel, rulesChanged);
    for (let j = blockStart; j < blockEnd; j++) if (prev!.paths[j] === rel) return (cursor = j);
    return rulesChanged ? (carried?.get(rel) ?? -1) : -1;
  };
  const dirPrevSlot: number[] = [];
  // For folders that cannot be listed (rare): every name ckpt knows, by folder, made on first need.
  let namesByDir: Map<string, string[]> | undefined;
  const knownNames = (rel: string): string[] => {
    if (!namesByDir) {
      namesByDir = new Map();
      const add = (path: string): void => {
        const cut = path.lastIndexOf('/');
        const dir = cut < 0 ? '' : path.slice(0, cut);
        const list = namesByDir!.get(dir);
        if (list) list.push(path.slice(cut + 1));
        else namesByDir!.set(dir, [path.slice(cut + 1)]);
      };
      for (let j = 0; j < (prev?.count ?? 0); j++) add(prev!.paths[j] as string);
      for (const path of owners.keys()) if (!prev || prev.slotOf(path) < 0) add(path);
    }
    return namesByDir.get(rel) ?? [];
  };
  const st = { size: 0, mtimeMs: 0, ctimeMs: 0, ino: 0, mode: 0 };
  let walk: WalkResult;
  try {
    walk = await walkWorkspace(
      {
        root,
        rules,
        previousRules: prev?.rules,
        deadline: input.deadline,
        parallel: parallelAfter === Infinity ? undefined : { after: parallelAfter, create: makePool },
      },
      {
        known: prev ? knownSlot : () => -1,
        knownNames,
        enterDir(rel, token) {
          childStart = next.count;
          if (gitByFolder) gitNames = gitTable!.folderNames(rel);
          if (!prev) return;
          const p = token < 0 ? -1 : (dirPrevSlot[token] as number);
          const first = rel === '' ? 0 : p >= 0 && prev.kind[p] === KIND_DIR ? (prev.size[p] as number) : -1;
          const n = rel === '' ? prev.rootChildren : first >= 0 ? (prev.mtime[p] as number) : -1;
          if (first >= 0 && n >= 0 && first + n <= prev.count) {
            blockStart = first;
            blockEnd = first + n;
          } else blockEnd = -1;
          cursor = blockStart - 1;
        },
        leaveDir(token) {
          if (token < 0) next.rootChildren = next.count - childStart;
          else {
            next.size[token] = childStart;
            next.mtime[token] = next.count - childStart;
          }
        },
        dir(rel, slot, mode) {
          // Seen whatever it was: a file or symlink that became a folder is compared (a type change).
          if (slot >= 0) seenPrev[slot] = 1;
          if (owners.size > 0 && owners.has(rel)) ownerSeen.add(rel);
          const d = next.push(slot >= 0 ? (prev!.paths[slot] as string) : rel, KIND_DIR, undefined);
          next.flags[d] = 0;
          next.size[d] = -1;
          next.mode[d] = mode; // folder modes are recorded (issue 26): compared, not stat-trusted
          dirPrevSlot[d] = slot;
          dirSlots.push(d);
          dirPrev.push(slot);
          return d;
        },
        entry(rel, abs, stats, o, slot, name) {
          const size = stats[o] as number;
          const type = (stats[o + 4] as number) & 0o170000;
          const kind = size === UNREADABLE ? -1 : type === 0o100000 ? KIND_FILE : type === 0o120000 ? KIND_SYMLINK : -1;
          if (kind < 0) {
            // Unreadable, or a socket, FIFO or device: nothing ckpt can record or restore, but a path that
            // is there (as a tool's capture records it): a file that takes its place later is not "created"
            // (a restore to before would delete it), and one that gives way to it is not "deleted".
            const why = size === UNREADABLE ? 'unreadable' : 'not-regular';
            if (slot >= 0) seenPrev[slot] = 1;
            // Seen, also when a newer owner record knows it (else it would be taken for gone as well).
            if (owners.size > 0 && owners.has(rel)) ownerSeen.add(rel);
            const i = next.push(rel, KIND_SKIPPED, undefined);
            next.why.set(i, why);
            skipped.push({ path: rel, why });
            work.push(i);
            workPrev.push(slot);
            workAbs.push(abs);
            return;
          }
          st.size = size;
          st.mtimeMs = stats[o + 1] as number;
          st.ctimeMs = stats[o + 2] as number;
          st.ino = stats[o + 3] as number;
          st.mode = stats[o + 4] as number;
          scanned++;
          if (slot >= 0) seenPrev[slot] = 1;
          // The previous index's string for a known path (equal to rel): rel, just built, then dies young
          // instead of being copied by the scavenger into the next index (30,000 survivors less per scan).
          const i = next.push(slot >= 0 ? (prev!.paths[slot] as string) : rel, kind, st);
          if (name === '.gitattributes' && kind === KIND_FILE) attributeFiles.push(rel);
          if (gitTable !== undefined && kind === KIND_FILE && size <= maxBytes) {
            const j = gitNames !== undefined ? (gitNames.get(name) ?? -1) : gitTable.slotOf(rel);
            const converted = j >= 0 && gitTable.matches(j, size, st.mtimeMs, st.ctimeMs, st.ino, st.mode, gitIndexMtimeMs) ? gitConversion?.(rel) : 'any';
            if (converted !== 'any' && gitObjects?.has(gitTable.bytes, gitTable.oidAt(j)) === true) {
              next.setHashBytes(i, HASH_GIT, gitTable.bytes, gitTable.oidAt(j), 20);
              gitReferenced++;
              if (converted === 'size') {
                sizeSlots.push(i);
                sizeIds.push(gitTable.bytes.subarray(gitTable.oidAt(j), gitTable.oidAt(j) + 20));
              }
              return;
            }
          }
          const owned = owners.size > 0 && owners.has(rel);
          if (owned) ownerSeen.add(rel);
          if (slot >= 0 && !owned && prev!.statEquals(slot, st) && prev!.kind[slot] !== KIND_DIR && notRacy(prev!, slot, racyBefore)) {
            next.copyContent(i, prev!, slot);
            if (prev!.hashKind[slot] === HASH_GIT) gitCarried.push(i, slot);
            if (prev!.kind[slot] === KIND_SKIPPED) skipped.push({ path: rel, why: prev!.why.get(slot) ?? 'skipped', bytes: size });
            return;
          }
          work.push(i);
          workPrev.push(slot);
          workAbs.push(abs);
        },
      },
    );
  } catch (err) {
    resources.pool?.close();
    throw err;
  }
  for (const u of walk.unreadable) skipped.push(u);
  // git reads attributes from the work tree whatever its ignore rules say: an ignored .gitattributes
  // converts a checkout below it like any other.
  for (const f of walk.ignoredFiles) if (f === '.gitattributes' || f.endsWith('/.gitattributes')) attributeFiles.push(f);
  // References the walk made before it knew better are read after all (a baseline: nothing before).
  const unreference = (i: number): void => {
    next.hashKind[i] = HASH_NONE;
    gitReferenced--;
    work.push(i);
    workPrev.push(-1);
    workAbs.push(`${root}/${next.paths[i] as string}`);
  };
  // Line endings converted (on checkout or on add): the file is not its blob's size.
  if (sizeSlots.length > 0) {
    const sizes = gitObjects!.objectSizes(sizeIds);
    sizeSlots.forEach((i, k) => {
      if (sizes[k] !== next.size[i]) unreference(i);
    });
  }
  // An untracked .gitattributes below the root converts the checkout of what lies below it too, and
  // the walk may have referenced those files before it came to that name.
  const conversion = input.git && gitReferenced > 0 ? withUntrackedAttributes(input.git, attributeFiles).conversion : undefined;
  if (conversion && conversion !== gitConversion) {
    for (let i = 0; i < next.count; i++) if (next.hashKind[i] === HASH_GIT && conversion(next.paths[i] as string) === 'any') unreference(i);
  }
  return { next, seenPrev, work, workPrev, workAbs, skipped, scanned, ownerSeen, dirSlots, dirPrev, gitReferenced, gitCarried, attributeFiles, walk };
}

/** The files the index carries while their names are ignored, by path (none: undefined). */
function carriedFiles(index: ScanIndex): Map<string, number> | undefined {
  let out: Map<string, number> | undefined;
  for (const [slot, why] of index.why) if (why === 'ignored') (out ??= new Map()).set(index.paths[slot] as string, slot);
  return out;
}

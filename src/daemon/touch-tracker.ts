// The set of workspace paths touched since the last scan, kept by watching every folder of the
// workspace (DESIGN §10 "Daemon", watched scans). One inotify watch per folder through fs.watch:
// events reach the loop without debouncing, so `take()` — which first lets the loop deliver what the
// kernel has queued — sees every change made before the request that asked for the scan.
//
// Anything that makes the set untrustworthy makes `take()` answer undefined once (the caller runs a
// full scan, which re-establishes the truth): an event without a name, a watch error, a folder that
// could not be watched (inotify limits), more touched paths than the cap, or a sign that the kernel's
// event queue may have overflowed (libuv drops that notice silently): an event loop stalled long
// enough, or more events since the last take than half that queue holds (the queue is the process's,
// shared by every workspace it watches) — a daemon a little behind
// a burst (a busy machine, 300 writes to each of 100 files) lost the one write that mattered, with no
// stall at all (a probe). Folders made meanwhile are still watched, and the take that asks for the full
// scan first watches every folder that has no watch yet (an overflow may have dropped its creation).
import { lstatSync, readdirSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { relative, sep } from 'node:path';
import { DEFAULT_IGNORED_DIRS } from '../workspace/ignore-rules.js';
import { lstatQuiet } from '../workspace/changed-at.js';

export interface TouchTracker {
  readonly root: string;
  /** Folders watched. */
  readonly watchedDirs: number;
  /**
   * The paths touched since the previous take (workspace-relative; a folder stands for its subtree),
   * after the events already queued were delivered; undefined when they cannot be trusted.
   */
  take(): Promise<Set<string> | undefined>;
  /** Marks the set untrustworthy (a scan that took it failed): the next take answers undefined. */
  invalidate(): void;
  /**
   * Puts paths a take handed out back into the set (a scan that took them declined and hands over to
   * a full scan): until that scan has run, another scan's set holds them too. The answer takes them
   * out again once that scan has run: those not touched since (else a path the watched scan always
   * declines — a file with two names — made every later scan a full one, a probe).
   */
  putBack(paths: Iterable<string>): () => void;
  close(): void;
}

export interface TouchTrackerOptions {
  root: string;
  /** The store folder, when it lies inside the workspace: not watched (its writes are not the workspace's). */
  storeDir?: string;
  /** More touched paths than this: the set is dropped and the next scan is a full one (default 10,000). */
  maxTouched?: number;
  /** A loop stall longer than this may have overflowed the kernel queue (default 2000 ms). */
  stallMs?: number;
  /** More events than this since the last take (this process's, all workspaces) may have overflowed it (default: half the kernel's queue). */
  maxEvents?: number;
  /** The watches of a whole tree are made in slices of this long, the loop served between them (default 10 ms). */
  sliceMs?: number;
}

/** Half of inotify's queue (`max_queued_events`, 16,384 by default): beyond it an overflow is possible. */
function defaultMaxEvents(): number {
  try {
    const n = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    if (Number.isInteger(n) && n > 0) return Math.max(256, Math.floor(n / 2));
  } catch {}
  return 8192;
}

/**
 * Events delivered to every tracker of this process: libuv reads all of a process's watches through
 * one inotify instance, whose one queue a burst in another workspace overflows too (a probe: a build
 * writing 40,000 files in workspace B dropped a hand edit in A, whose tracker had counted nothing).
 */
const delivered = { events: 0 };

/**
 * Starts watching. A large tree's watches are made in slices (a 30,000-folder tree took 1.85 s in one
 * go, and every other hook the daemon served waited); a take waits until every folder has its watch.
 */
export function createTouchTracker(options: TouchTrackerOptions): TouchTracker {
  const { root } = options;
  const sliceMs = options.sliceMs ?? 10;
  const maxTouched = options.maxTouched ?? 10_000;
  const stallMs = options.stallMs ?? 2000;
  const maxEvents = options.maxEvents ?? defaultMaxEvents();
  /** `delivered.events` at the last take. */
  let eventsAtTake = delivered.events;
  const storeRel = options.storeDir ? toPosix(relative(root, options.storeDir)) : undefined;
  const watchers = new Map<string, { w: FSWatcher; ino: number }>();
  /** Touched paths, each with the count of touches at its last one (putBack's answer compares them). */
  let touched = new Map<string, number>();
  let touches = 0;
  // What changed before the watches existed is unknown: the first take asks for a full scan.
  let lost = true;
  // Lost since (an overflow may have dropped a folder's creation with it): the watches are made whole
  // at the next take, before the full scan it asks for.
  let resyncDue = false;
  let closed = false;

  const touch = (path: string): void => {
    if (lost) return;
    touched.set(path, ++touches);
    if (touched.size > maxTouched) lose();
  };
  const lose = (): void => {
    lost = true;
    resyncDue = true;
    touched = new Map();
  };

  /** Watches `dir` itself (not yet watched); false when it cannot be. */
  function watchOne(dir: string): boolean {
    const abs = dir === '' ? root : `${root}/${dir}`;
    let w: FSWatcher;
    let ino: number;
    try {
      ino = lstatSync(abs).ino;
      w = watch(abs, { persistent: false }, (type, name) => onEvent(dir, name === null ? null : String(name), type === 'rename'));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') lose(); // ENOSPC (watch limit), EACCES: changes there would go unseen
      return false;
    }
    w.on('error', () => {
      w.close();
      if (watchers.get(dir)?.w === w) watchers.delete(dir);
      lose();
    });
    watchers.set(dir, { w, ino });
    return true;
  }

  /** The watchable folders in `dir`, listed (after its watch exists: whatever appears later raises an event). */
  function subfolders(dir: string): string[] {
    let entries;
    try {
      entries = readdirSync(dir === '' ? root : `${root}/${dir}`, { withFileTypes: true });
    } catch {
      return [];
    }
    const out: string[] = [];
    for (const e of entries) {
      const path = dir === '' ? e.name : `${dir}/${e.name}`;
      if (e.isDirectory() && watchable(path, e.name)) out.push(path);
    }
    return out;
  }

  /** Watches `dir` and every folder below it at once (a folder that just appeared: small, and its events matter now). */
  function watchTree(dir: string): void {
    if (closed || watchers.has(dir) || !watchOne(dir)) return;
    for (const sub of subfolders(dir)) watchTree(sub);
  }

  // Folders still to visit by a whole-tree build or a resync: each is watched when it has no watch,
  // and its subfolders are queued. Worked through in slices of `sliceMs`, the loop served between; a
  // take waits until the queue is empty (a full scan run while folders were still being watched could
  // pass a folder before its watch, and what changed there in between would be in no set).
  const queue: string[] = [];
  let slice: NodeJS.Immediate | undefined;
  const waiting: (() => void)[] = [];
  const built = (): Promise<void> => (queue.length === 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve)));
  function build(dir: string): void {
    queue.push(dir);
    if (!slice) work();
  }
  function work(): void {
    slice = undefined;
    const end = performance.now() + sliceMs;
    while (queue.length > 0 && !closed) {
      const dir = queue.pop()!;
      if (!watchers.has(dir) && !watchOne(dir)) continue;
      queue.push(...subfolders(dir));
      if (performance.now() >= end) break;
    }
    if (closed) queue.length = 0;
    if (queue.length > 0) slice = setImmediate(work);
    else for (const resolve of waiting.splice(0)) resolve();
  }

  /** Folders never watched: the always-ignored ones and the store. */
  const watchable = (path: string, name: string): boolean => !DEFAULT_IGNORED_DIRS.has(name) && path !== storeRel;

  function maybeWatch(path: string, name: string): void {
    if (watchable(path, name)) watchTree(path);
  }

  function onEvent(dir: string, name: string | null, renamed: boolean): void {
    if (closed) return;
    if (name === null) return lose();
    // Past the cap the set is lost, but a folder made now is still watched: returning here left every
    // folder a burst made unwatched for good, and each later watched scan missed their edits (a probe).
    if (++delivered.events - eventsAtTake > maxEvents) lose();
    const path = dir === '' ? name : `${dir}/${name}`;
    if (path === storeRel || (storeRel !== undefined && path.startsWith(`${storeRel}/`))) return;
    touch(path);
    // A folder that appeared (created, moved in) is watched from now on; one that went away is
    // forgotten. A watch follows its folder's inode and dies with it, so a name that was created,
    // deleted or moved (`rename`) is watched anew — comparing inodes is not enough, since a folder
    // made right after one was removed often gets the same inode number.
    let ino: number | undefined;
    try {
      const st = lstatSync(`${root}/${path}`, { throwIfNoEntry: false });
      if (st?.isDirectory()) ino = st.ino;
    } catch {}
    const current = watchers.get(path);
    if (current && (renamed || current.ino !== ino)) unwatchTree(path);
    if (ino !== undefined) maybeWatch(path, name);
  }

  function unwatchTree(path: string): void {
    const prefix = `${path}/`;
    for (const [dir, { w }] of watchers) {
      if (dir === path || dir.startsWith(prefix)) {
        w.close();
        watchers.delete(dir);
      }
    }
  }

  // A stalled loop cannot read inotify; a long stall may have overflowed its queue unnoticed.
  let lastTick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - lastTick > stallMs) lose();
    lastTick = now;
  }, 100);
  ticker.unref();

  build('');

  return {
    root,
    get watchedDirs() {
      return watchers.size;
    },
    async take() {
      await built();
      // Let the loop run its poll phase: inotify events queued before this request are delivered.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      if (performance.now() - lastTick > stallMs) lose();
      // The root itself replaced (moved away, a copy put in its place): its watch follows the old
      // folder and would see nothing more. Everything is watched anew; this take is a full scan.
      const rootIno = lstatQuiet(root)?.ino;
      if (!closed && rootIno !== watchers.get('')?.ino) {
        for (const { w } of watchers.values()) w.close();
        watchers.clear();
        lose();
        if (rootIno !== undefined) {
          build('');
          await built();
        }
      }
      if (delivered.events - eventsAtTake > maxEvents) lose();
      eventsAtTake = delivered.events;
      if (lost || closed) {
        lost = false;
        touched = new Map();
        // Cleared before the resync: a folder it still cannot watch (the watch limit) loses the set
        // again and leaves the resync due, so every take asks for a full scan until all are watched
        // (it was cleared after: the take after next trusted a set with folders unwatched, a probe).
        if (resyncDue && !closed) {
          resyncDue = false;
          build('');
          await built();
        }
        return undefined;
      }
      const out = new Set(touched.keys());
      touched = new Map();
      return out;
    },
    invalidate: lose,
    putBack(paths) {
      const put = new Map<string, number>();
      for (const path of paths) {
        touch(path);
        const at = touched.get(path);
        if (at !== undefined) put.set(path, at);
      }
      return () => {
        for (const [path, at] of put) if (touched.get(path) === at) touched.delete(path);
      };
    },
    close() {
      closed = true;
      clearInterval(ticker);
      if (slice) clearImmediate(slice);
      queue.length = 0;
      for (const resolve of waiting.splice(0)) resolve();
      for (const { w } of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

function toPosix(p: string): string | undefined {
  if (p === '') return '';
  if (p.startsWith('..')) return undefined;
  return sep === '/' ? p : p.split(sep).join('/');
}

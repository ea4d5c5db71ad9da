// Folder listings with lstat numbers, for the scan walker (walk.ts). Node's lstatSync costs a few µs
// per call (the syscall, a path copy, a Stats object with four Dates), which dominates an incremental
// scan; on a multi-core machine one worker thread lists and stats some folders while the main thread
// does others and compares. Results are plain numbers (STAT_FIELDS per name), so only a joined name
// string and one transferred buffer cross threads. Without a worker, listDir() runs the same code inline.
import { closeSync, constants, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { newWorker } from '../storage/worker-thread.js';

/** size, mtimeMs, ctimeMs, ino, mode — or size = MISSING (gone since the listing) / UNREADABLE. */
export const STAT_FIELDS = 5;
export const MISSING = -1;
export const UNREADABLE = -2;

export interface DirListing {
  names: string[];
  stats: Float64Array;
  /** errno code when the folder could not be listed (then names is empty). */
  error?: string;
}

const LSTAT_OPTIONS = { throwIfNoEntry: false } as const;

/** Lists `dirAbs` and lstats every entry (nothing followed). */
export function listDir(dirAbs: string): DirListing {
  let names: string[];
  try {
    names = readdirSync(dirAbs);
  } catch (err) {
    return { names: [], stats: new Float64Array(0), error: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
  const stats = new Float64Array(names.length * STAT_FIELDS);
  const prefix = dirAbs.endsWith('/') ? dirAbs : `${dirAbs}/`;
  for (let i = 0, o = 0; i < names.length; i++, o += STAT_FIELDS) {
    let st;
    try {
      st = lstatSync(prefix + (names[i] as string), LSTAT_OPTIONS);
    } catch {
      stats[o] = UNREADABLE;
      continue;
    }
    if (st === undefined) {
      // Listed but not found by its name: a name that is not valid UTF-8 (decoded with U+FFFD). It
      // cannot be recorded or restored, so it is reported (unreadable), never taken as gone.
      stats[o] = (names[i] as string).includes('\uFFFD') ? UNREADABLE : MISSING;
      continue;
    }
    stats[o] = st.size;
    stats[o + 1] = st.mtimeMs;
    stats[o + 2] = st.ctimeMs;
    stats[o + 3] = st.ino;
    stats[o + 4] = st.mode;
  }
  return { names, stats };
}

/**
 * The lstat numbers of `names` in a folder that cannot be listed, found by name: names that are not
 * there are left out. Undefined when any lookup fails otherwise (the folder may not be searched either).
 */
export function statNames(dirAbs: string, names: readonly string[]): DirListing | undefined {
  const found: string[] = [];
  const stats: number[] = [];
  for (const name of names) {
    let st;
    try {
      st = lstatSync(`${dirAbs}/${name}`, LSTAT_OPTIONS);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      return undefined;
    }
    if (st === undefined) continue;
    found.push(name);
    stats.push(st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode);
  }
  return { names: found, stats: Float64Array.from(stats) };
}

/** Contents of a batch of files read on the worker: file i is `data[offsets[i] .. offsets[i] + lengths[i])`. */
export interface ReadBatch {
  data: Uint8Array;
  offsets: Float64Array;
  /** Bytes read, or READ_GONE (missing / replaced by a symlink) or READ_FAILED (see `errors[i]`). */
  lengths: Float64Array;
  errors: (string | null)[];
}
export const READ_GONE = -1;
export const READ_FAILED = -2;

/**
 * Reads regular files without following a symlink swapped in; each read goes until EOF (a file that
 * grew is read whole; callers compare the length with the size they stat'ed).
 */
export function readFilesSync(paths: readonly string[], sizes: ArrayLike<number>): ReadBatch {
  const n = paths.length;
  let total = 0;
  for (let i = 0; i < n; i++) total += (sizes[i] as number) + 1;
  let data = new Uint8Array(total);
  const offsets = new Float64Array(n);
  const lengths = new Float64Array(n);
  const errors: (string | null)[] = new Array<string | null>(n).fill(null);
  let at = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = at;
    let fd: number;
    try {
      fd = openSync(paths[i] as string, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      lengths[i] = code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' ? READ_GONE : READ_FAILED;
      errors[i] = code;
      continue;
    }
    try {
      let got = 0;
      for (;;) {
        if (at + got === data.length) {
          const bigger = new Uint8Array(data.length * 2 + 65536);
          bigger.set(data.subarray(0, at + got));
          data = bigger;
        }
        const r = readSync(fd, data, at + got, data.length - at - got, null);
        if (r === 0) break;
        got += r;
      }
      lengths[i] = got;
      at += got;
    } catch (err) {
      lengths[i] = READ_FAILED;
      errors[i] = (err as NodeJS.ErrnoException).code ?? String(err);
    } finally {
      closeSync(fd);
    }
  }
  return { data, offsets, lengths, errors };
}

// Plain JS evaluated as the worker (the same loops as listDir and readBatch), independent of how ckpt
// was loaded.
const WORKER_SOURCE = `
const { closeSync, constants, lstatSync, openSync, readdirSync, readSync } = require('node:fs');
const { parentPort } = require('node:worker_threads');
const opts = { throwIfNoEntry: false };
// The same loop as readFilesSync.
function readBatch(paths, sizes) {
  const n = paths.length;
  let total = 0;
  for (let i = 0; i < n; i++) total += sizes[i] + 1;
  let data = new Uint8Array(total);
  const offsets = new Float64Array(n), lengths = new Float64Array(n), errors = new Array(n).fill(null);
  let at = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = at;
    let fd;
    try { fd = openSync(paths[i], constants.O_RDONLY | constants.O_NOFOLLOW); } catch (err) {
      const code = (err && err.code) || String(err);
      lengths[i] = code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' ? -1 : -2;
      errors[i] = code;
      continue;
    }
    try {
      let got = 0;
      for (;;) {
        if (at + got === data.length) { const bigger = new Uint8Array(data.length * 2 + 65536); bigger.set(data.subarray(0, at + got)); data = bigger; }
        const r = readSync(fd, data, at + got, data.length - at - got, null);
        if (r === 0) break;
        got += r;
      }
      lengths[i] = got;
      at += got;
    } catch (err) { lengths[i] = -2; errors[i] = (err && err.code) || String(err); } finally { closeSync(fd); }
  }
  return { data, offsets, lengths, errors };
}
parentPort.on('message', ({ id, dir, read, sizes }) => {
  if (read !== undefined) {
    const r = readBatch(read.split('\\0'), sizes);
    parentPort.postMessage({ id, batch: r }, [r.data.buffer, r.offsets.buffer, r.lengths.buffer]);
    return;
  }
  let names;
  try { names = readdirSync(dir); } catch (err) { parentPort.postMessage({ id, error: String(err && err.code || err) }); return; }
  const stats = new Float64Array(names.length * 5);
  const prefix = dir.endsWith('/') ? dir : dir + '/';
  for (let i = 0, o = 0; i < names.length; i++, o += 5) {
    let st;
    try { st = lstatSync(prefix + names[i], opts); } catch { stats[o] = -2; continue; }
    if (st === undefined) { stats[o] = names[i].includes('\\uFFFD') ? -2 : -1; continue; }
    stats[o] = st.size; stats[o + 1] = st.mtimeMs; stats[o + 2] = st.ctimeMs; stats[o + 3] = st.ino; stats[o + 4] = st.mode;
  }
  parentPort.postMessage({ id, names: names.join('\\0'), count: names.length, stats }, [stats.buffer]);
});
`;

export interface ListPool {
  /** Lists a folder on the worker; a dead worker's requests are done inline. */
  list(dirAbs: string): Promise<DirListing>;
  /** Reads files on the worker (see readFilesSync). */
  read(paths: readonly string[], sizes: ArrayLike<number>): Promise<ReadBatch>;
  close(): void;
}

/** A one-worker pool, or undefined when worker threads are not available. */
export function createListPool(): ListPool | undefined {
  let worker: Worker;
  try {
    worker = newWorker(WORKER_SOURCE);
  } catch {
    return undefined;
  }
  worker.unref();
  const waiting = new Map<number, { redo: () => unknown; resolve: (v: never) => void }>();
  let nextId = 0;
  let dead = false;
  worker.on('message', (m: { id: number; names?: string; count?: number; stats?: Float64Array; error?: string; batch?: ReadBatch }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (!w) return;
    const resolve = w.resolve as (v: unknown) => void;
    if (m.batch) resolve(m.batch);
    else if (m.error !== undefined) resolve({ names: [], stats: new Float64Array(0), error: m.error });
    else resolve({ names: m.count ? (m.names ?? '').split('\0') : [], stats: m.stats ?? new Float64Array(0) });
  });
  const failAll = (): void => {
    dead = true;
    for (const w of waiting.values()) (w.resolve as (v: unknown) => void)(w.redo());
    waiting.clear();
  };
  const request = <T>(message: Record<string, unknown>, redo: () => T): Promise<T> => {
    if (dead) return Promise.resolve(redo());
    const id = nextId++;
    return new Promise<T>((resolve) => {
      waiting.set(id, { redo, resolve: resolve as (v: never) => void });
      worker.postMessage({ id, ...message });
    });
  };
  worker.on('error', failAll);
  worker.on('exit', failAll);
  return {
    list: (dir) => request({ dir }, () => listDir(dir)),
    read: (paths, sizes) => request({ read: paths.join('\0'), sizes: Float64Array.from(sizes) }, () => readFilesSync(paths, sizes)),
    close() {
      if (dead) return;
      dead = true;
      worker.removeAllListeners('exit');
      void worker.terminate();
    },
  };
}

// Parallel lstat for scans of large trees. Node's lstatSync costs a few µs per call (the syscall, the
// path copy, a Stats object with four Dates), which dominates an incremental scan; on a multi-core
// machine one worker thread stats every other chunk of paths while the main thread walks folders and
// stats the rest. Results are plain numbers (STAT_FIELDS per path) so nothing but two buffers crosses
// threads. Without worker threads everything runs inline, with the same results.
import { lstatSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** size, mtimeMs, ctimeMs, ino, mode — or size = MISSING (gone) / UNREADABLE (lstat failed: errno in mode slot). */
export const STAT_FIELDS = 5;
export const MISSING = -1;
export const UNREADABLE = -2;

// Plain JS evaluated as the worker, independent of how the main program was loaded.
const WORKER_SOURCE = `
const { lstatSync } = require('node:fs');
const { parentPort } = require('node:worker_threads');
const opts = { throwIfNoEntry: false };
parentPort.on('message', ({ id, paths }) => {
  const list = paths.split('\\0');
  const out = new Float64Array(list.length * 5);
  for (let i = 0, o = 0; i < list.length; i++, o += 5) {
    let st;
    try { st = lstatSync(list[i], opts); } catch (err) { out[o] = -2; out[o + 4] = 0; continue; }
    if (st === undefined) { out[o] = -1; continue; }
    out[o] = st.size; out[o + 1] = st.mtimeMs; out[o + 2] = st.ctimeMs; out[o + 3] = st.ino; out[o + 4] = st.mode;
  }
  parentPort.postMessage({ id, out }, [out.buffer]);
});
`;

const LSTAT_OPTIONS = { throwIfNoEntry: false } as const;

/** lstat of `paths[from..to)` into `out` (STAT_FIELDS per path, at index `(i - base) * STAT_FIELDS`). */
export function statInto(paths: readonly string[], from: number, to: number, out: Float64Array, base = 0): void {
  for (let i = from; i < to; i++) {
    const o = (i - base) * STAT_FIELDS;
    let st;
    try {
      st = lstatSync(paths[i] as string, LSTAT_OPTIONS);
    } catch {
      out[o] = UNREADABLE;
      continue;
    }
    if (st === undefined) {
      out[o] = MISSING;
      continue;
    }
    out[o] = st.size;
    out[o + 1] = st.mtimeMs;
    out[o + 2] = st.ctimeMs;
    out[o + 3] = st.ino;
    out[o + 4] = st.mode;
  }
}

export interface StatPool {
  /** Queues `paths[from..to)`; results land in `out` at `from * STAT_FIELDS` once flush() resolves. */
  submit(paths: readonly string[], from: number, to: number): void;
  /** Waits for every submitted chunk, copying results into `out`. */
  flush(out: Float64Array): Promise<void>;
  close(): void;
}

/** A one-worker pool, or undefined when worker threads are not available. */
export function createStatPool(): StatPool | undefined {
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, { eval: true });
  } catch {
    return undefined;
  }
  worker.unref();
  const waiting = new Map<number, { from: number; resolve: (out: Float64Array) => void; reject: (err: Error) => void }>();
  const done: Promise<void>[] = [];
  const results: { from: number; out: Float64Array }[] = [];
  let nextId = 0;
  let failed: Error | undefined;
  worker.on('message', ({ id, out }: { id: number; out: Float64Array }) => {
    const w = waiting.get(id);
    waiting.delete(id);
    w?.resolve(out);
  });
  const failAll = (err: Error) => {
    failed ??= err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('error', failAll);
  worker.on('exit', () => failAll(new Error('stat worker exited')));
  const pending: { paths: readonly string[]; from: number; to: number }[] = [];

  return {
    submit(paths, from, to) {
      pending.push({ paths, from, to });
      const id = nextId++;
      done.push(
        new Promise<Float64Array>((resolve, reject) => {
          waiting.set(id, { from, resolve, reject });
          if (failed) reject(failed);
          else worker.postMessage({ id, paths: paths.slice(from, to).join('\0') });
        }).then(
          (out) => void results.push({ from, out }),
          // A dead worker is not fatal: its chunks are redone inline at flush().
          () => undefined,
        ),
      );
    },
    async flush(out) {
      await Promise.all(done);
      const got = new Set<number>();
      for (const r of results) {
        out.set(r.out, r.from * STAT_FIELDS);
        got.add(r.from);
      }
      for (const p of pending) if (!got.has(p.from)) statInto(p.paths, p.from, p.to, out);
    },
    close() {
      void worker.terminate();
    },
  };
}

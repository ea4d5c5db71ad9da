// Worker threads made on demand (the bulk compressor, the folder lister). node:worker_threads is
// loaded when the first one is made, not when the bundle is: a hook process that never starts a
// worker does not pay for loading it (with node:http, ~10 ms of a hook process's ~190 ms).
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';

const requireBuiltin = createRequire(import.meta.url);

/** A worker running `source` (plain JS, evaluated as CommonJS). */
export function newWorker(source: string): Worker {
  const { Worker: WorkerClass } = requireBuiltin('node:worker_threads') as typeof import('node:worker_threads');
  return new WorkerClass(source, { eval: true });
}

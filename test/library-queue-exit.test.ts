// The store's own after-call queue (session/after-call.ts createLibraryQueue) waits for a quiet
// moment, and its waits keep no process alive: a process that ends without closing its store (a CLI
// command, a hook recording in-process) runs the queued blob-store copy as it ends, at once — not
// after the 50 ms quiet period, and never skipped.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStore } from '../src/index.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
let dirs: TempDirs;
beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-queue-exit-');
});
afterEach(() => dirs.cleanup());

function run(): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repo, 'test', 'fixtures', 'capture-no-close.ts'), dirs.store, dirs.workspace], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })));
}

it("a process ending without closing its store runs the queued copy as it ends, without waiting out the quiet period", async () => {
  const r = await run();
  expect(r.code, r.err).toBe(0);
  const { blob, msToEnd } = JSON.parse(r.out) as { blob: string; msToEnd: number };
  const store = await openStore({ dir: dirs.store });
  try {
    expect(await store.ctx.blobs.has(blob)).toBe(true);
  } finally {
    await store.close();
  }
  // The process is about to end right after the answer (the queue's timer holds nothing open); with a
  // timer that kept it alive it first got there once the 50 ms quiet period and the copy had passed.
  expect(msToEnd).toBeLessThan(40);
});

// The capture-vs-GC race (DESIGN §5) with real processes: another process captures content that
// matches GC candidates while GC plans and sweeps. A put of existing content freshens it before the
// capture references it; GC moves a candidate aside and checks its mtime then, putting it back when
// it moved — so every blob a capture references survives.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODEC_IDS, encodeBlob } from '../src/format/blob-header.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/store.js';
import { applyGc, planGc, runGc, takeInventory } from '../src/gc/index.js';
import { verify } from '../src/gc/verify.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { ageStore } from './fixtures/gc-helpers.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/gc-capture.ts', import.meta.url));
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let dirs: TempDirs;
let store: Store;

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-gc-race-');
  store = await openStore({ dir: dirs.store, retention: false });
});
afterEach(() => dirs.cleanup());

function captureInChild(id: string, count: number, prefix: string): { done: Promise<void>; ready: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, dirs.store, dirs.workspace, id, String(count), prefix], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CKPT_RETENTION: 'off' },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  let stdout = '';
  const ready = new Promise<void>((resolve) =>
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('ready')) resolve();
    }),
  );
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`gc-capture exited ${code}: ${stderr}`))));
  });
  return { done, ready };
}

async function putAged(prefix: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await store.ctx.blobs.put(Buffer.from(`${prefix}-${i}`))).id);
  await ageStore(dirs.store);
  return ids;
}

/** Many unreferenced, hour-old loose blobs written directly (fast): `${prefix}-${i}` for i < count. */
async function writeAged(prefix: string, count: number): Promise<void> {
  const one = async (i: number): Promise<void> => {
    const raw = Buffer.from(`${prefix}-${i}`);
    const id = sha(raw.toString());
    const record = encodeBlob(raw.length, CODEC_IDS.raw, raw);
    // A shared store's objects go through its backend; a folder's are plain files (no fsync: fast).
    if (store.shared) return void (await store.ctx.backend.create(`blobs/${id.slice(0, 2)}/${id.slice(2)}`, record));
    await mkdir(join(dirs.store, 'blobs', id.slice(0, 2)), { recursive: true });
    await writeFile(join(dirs.store, 'blobs', id.slice(0, 2), id.slice(2)), record);
  };
  for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => one(i + j)));
  await ageStore(dirs.store);
}

/** Every blob the session's log references can be read back intact. */
async function assertSessionReadable(id: string, count: number, prefix: string): Promise<void> {
  const ws = await store.openWorkspace(dirs.workspace);
  const events = await (await ws.get(id)).events();
  // The Write captures (each file was made during the turn: the user's capture of it comes first, no blob).
  const captured = events.filter((e) => e.type === 'capture' && e.tool === 'Write').flatMap((e) => e.files as { blob: string }[]);
  expect(captured).toHaveLength(count);
  for (let i = 0; i < count; i++) {
    expect(captured[i]!.blob).toBe(sha(`${prefix}-${i}`));
    expect((await store.ctx.blobs.get(captured[i]!.blob)).toString()).toBe(`${prefix}-${i}`);
  }
}

describe('capture vs gc across processes', () => {
  it('a blob a capture reuses between plan and sweep survives (freshened: the age gate protects it)', async () => {
    const ids = await putAged('reused', 5);
    const plan = planGc(await takeInventory(store.ctx));
    expect(plan.loose.map((c) => c.id).sort()).toEqual([...ids].sort());
    await captureInChild('capturer', 5, 'reused').done;
    const result = await applyGc(store.ctx, plan);
    expect(result).toMatchObject({ deleted: 0, rescued: 5 });
    await assertSessionReadable('capturer', 5, 'reused');
    expect((await verify(store.ctx)).problems).toEqual([]);
  });

  it('gc sweeping while another process captures the same content never loses a referenced blob', async () => {
    // 600 candidates; the other process captures 30 of them (spread over the sweep order, which is
    // by id) while collectors run back to back: a sweep takes about as long as the captures.
    // A shared store's sweep costs round trips per blob (database and S3): fewer candidates, same race.
    const count = store.shared ? 150 : 600;
    const captured = store.shared ? 10 : 30;
    await writeAged('race', count);
    const child = captureInChild('racer', captured, 'race');
    await child.ready;
    let finished = false;
    void child.done.then(
      () => (finished = true),
      () => (finished = true),
    );
    let deleted = 0;
    let rescued = 0;
    do {
      const { result } = await runGc(store.ctx);
      deleted += result.deleted;
      rescued += result.rescued;
    } while (!finished);
    await child.done;
    await assertSessionReadable('racer', captured, 'race');
    expect((await verify(store.ctx)).problems).toEqual([]);
    expect(deleted).toBeGreaterThanOrEqual(count - captured);
    expect(deleted + rescued).toBeGreaterThanOrEqual(count - captured);
  });
});

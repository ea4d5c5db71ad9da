import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CkptError } from '../../errors.js';
import type { StoreBackend } from '../backend.js';
import { createBlobStore } from '../blob-store.js';
import { createFsBackend } from '../fs/fs-backend.js';
import { createPackCompressor } from './pack-compressor.js';

let dir: string;
const sha = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');
const content = (i: number): Buffer => Buffer.from(`line ${i % 300}\n`.repeat(20 + (i % 50)));

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(tmpdir(), 'ckpt-pack-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('pack compressor', () => {
  it('gives the same results on a worker thread as inline', async () => {
    const inputs = [Buffer.alloc(0), Buffer.from('tiny'), content(1), Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(3000)))];
    const batch = Buffer.concat(inputs);
    const lengths = inputs.map((b) => b.length);
    const worker = createPackCompressor({ threads: 1 });
    const inline = createPackCompressor({ threads: 0 });
    const [a, b] = await Promise.all([worker.run(batch, lengths), inline.run(batch, lengths)]);
    await worker.close();
    expect(a.map((c) => c.codec)).toEqual([0, 0, 1, 0]);
    expect(a.map((c) => Buffer.from(c.payload).toString('hex'))).toEqual(b.map((c) => Buffer.from(c.payload).toString('hex')));
  });
});

describe('pack writer', () => {
  it('handles concurrent adds with duplicates and a caller reusing its buffer', async () => {
    const store = createBlobStore({ backend: createFsBackend({ dir }) });
    const writer = store.createPackWriter();
    const results = await Promise.all(Array.from({ length: 600 }, (_, i) => writer.add(content(i))));
    expect(results.filter((r) => r.created)).toHaveLength(300);
    const reused = Buffer.from('reused buffer, first content '.repeat(10));
    const r = await writer.add(reused);
    reused.fill(0x41);
    const { count } = await writer.commit();
    expect(count).toBe(301);
    await expect(writer.add(content(1))).rejects.toThrow(expect.objectContaining({ code: 'INTERNAL' }));
    expect((await store.get(r.id)).toString()).toBe('reused buffer, first content '.repeat(10));
    for (let i = 0; i < 300; i += 7) expect((await store.get(sha(content(i)))).equals(content(i))).toBe(true);
  });

  it('hands large writers to worker threads and reads everything back', async () => {
    const store = createBlobStore({ backend: createFsBackend({ dir }), threads: 2 });
    const writer = store.createPackWriter();
    const big = (i: number): Buffer => Buffer.from(`chunk ${i}: ${'const x = [1, 2, 3].map((n) => n * 2);\n'.repeat(20_000)}`);
    for (let i = 0; i < 8; i++) await writer.add(big(i));
    const { count, bytes } = await writer.commit();
    expect(count).toBe(8);
    expect(bytes).toBeLessThan(big(0).length);
    for (let i = 0; i < 8; i++) expect((await store.get(sha(big(i)))).equals(big(i))).toBe(true);
  });

  it('addMany hashes on the workers, takes the buffer over and deduplicates (within the writer and against loose blobs)', async () => {
    const store = createBlobStore({ backend: createFsBackend({ dir }), threads: 2 });
    const loose = await store.put(content(3));
    const writer = store.createPackWriter();
    const big = (i: number): Buffer => Buffer.from(`chunk ${i}: ${'let y = compute(x) + 1;\n'.repeat(30_000)}`);
    const inputs = [big(0), content(3), Buffer.from('tiny'), big(1), content(4), content(4), Buffer.alloc(0), big(0)];
    const gap = 5;
    const offsets: number[] = [];
    let at = 0;
    for (const b of inputs) {
      offsets.push(at);
      at += b.length + gap;
    }
    const lengths = inputs.map((b) => b.length);
    const all = await Promise.all([0, 1].map(() => {
      const data = new Uint8Array(at);
      inputs.forEach((b, k) => data.set(b, offsets[k] as number));
      return writer.addMany(data, offsets, lengths);
    }));
    for (const results of all) expect(results.map((r) => r.id)).toEqual(inputs.map(sha));
    const created = all.flat().filter((r) => r.created).map((r) => r.id);
    expect(new Set(created).size).toBe(created.length);
    expect(created.sort()).toEqual([...new Set(inputs.map(sha))].filter((id) => id !== loose.id).sort());
    const { count } = await writer.commit();
    expect(count).toBe(5);
    for (const b of inputs) expect((await store.get(sha(b))).equals(b)).toBe(true);
  });

  it('surfaces a failed append at commit and abort leaves no pack behind', async () => {
    const fsb = createFsBackend({ dir });
    let failAppends = false;
    const flaky: StoreBackend = {
      ...fsb,
      append: async (key, data) => {
        if (failAppends) throw new CkptError('IO', 'disk full', { retryable: true });
        return fsb.append(key, data);
      },
    };
    const store = createBlobStore({ backend: flaky, threads: 0 });
    const writer = store.createPackWriter();
    for (let i = 0; i < 50; i++) await writer.add(content(i));
    failAppends = true;
    await expect(writer.commit()).rejects.toThrow(expect.objectContaining({ code: 'IO' }));
    await writer.abort();
    expect(await fs.readdir(path.join(dir, 'packs')).catch(() => [])).toEqual([]);
    await expect(store.get(sha(content(1)))).rejects.toThrow(expect.objectContaining({ code: 'BLOB_NOT_FOUND' }));
  });

  // Found by the fault suite (gc-repack, an error at the packs folder's fsync): the index write failed
  // after its rename, abort removed the pack but left the index — an index without its pack.
  it('abort after an index write that failed once the index was in place leaves neither index nor pack', async () => {
    const fsb = createFsBackend({ dir });
    const flaky: StoreBackend = {
      ...fsb,
      write: async (key, data, opts) => {
        await fsb.write(key, data, opts);
        if (key.endsWith('.idx')) throw new CkptError('IO', 'fsync of the folder failed', { errno: 'EIO' });
      },
    };
    const store = createBlobStore({ backend: flaky, threads: 0 });
    const writer = store.createPackWriter();
    for (let i = 0; i < 50; i++) await writer.add(content(i));
    await expect(writer.commit()).rejects.toThrow(expect.objectContaining({ code: 'IO' }));
    await writer.abort();
    expect(await fs.readdir(path.join(dir, 'packs')).catch(() => [])).toEqual([]);
    await expect(store.get(sha(content(1)))).rejects.toThrow(expect.objectContaining({ code: 'BLOB_NOT_FOUND' }));
  });
});

import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBlobStore, looseKey, type BlobStore } from './blob-store.js';
import { createFsBackend } from './fs/fs-backend.js';

let dir: string;
let store: BlobStore;

const sha = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');
const text = (i: number): Buffer =>
  Buffer.from(`// file ${i}\nexport const value${i} = ${i};\n${'export function f(x: number) { return x * 2; }\n'.repeat(1 + (i % 7))}`);
const open = (options: Parameters<typeof createBlobStore>[0] extends infer O ? Omit<O, 'backend'> : never = {}): BlobStore =>
  createBlobStore({ backend: createFsBackend({ dir }), ...options });
/** Commits a pack of its own holding `text(i)` for each `i`: the paths of the pack's two files. */
const packOf = async (...texts: number[]): Promise<{ data: string; index: string }> => {
  const writer = store.createPackWriter();
  for (const i of texts) await writer.add(text(i));
  const { pack } = await writer.commit();
  return { data: path.join(dir, 'packs', `${pack}.pack`), index: path.join(dir, 'packs', `${pack}.idx`) };
};
const old = new Date(Date.now() - 3_600_000);
const code = (c: string) => expect.objectContaining({ code: c });

async function filesUnder(sub: string): Promise<string[]> {
  const out = await fs.readdir(path.join(dir, sub), { recursive: true, withFileTypes: true }).catch(() => []);
  return out.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(tmpdir(), 'ckpt-blob-'));
  store = open();
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('blob store: loose blobs', () => {
  it('round-trips content of every shape, compressing where it pays', async () => {
    for (const data of [Buffer.alloc(0), Buffer.from('x'), text(3), Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(5000)))]) {
      const r = await store.put(data);
      expect(r).toMatchObject({ id: sha(data), bytes: data.length, created: true });
      expect((await store.get(r.id)).equals(data)).toBe(true);
      expect(await store.info(r.id)).toMatchObject({ where: 'loose', stored: r.stored });
    }
    const big = Buffer.from('abc'.repeat(100_000));
    expect((await store.put(big)).stored).toBeLessThan(big.length / 10);
  });

  it('dedups: same content, same id, one file, created:false, mtime freshened', async () => {
    const a = await store.put(text(1));
    const file = path.join(dir, looseKey(a.id));
    await fs.utimes(file, old, old);
    const b = await store.put(Buffer.from(text(1)));
    expect(b).toMatchObject({ id: a.id, created: false, stored: a.stored });
    expect((await fs.stat(file)).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect(await filesUnder('blobs')).toHaveLength(1);
  });

  it('detects a flipped byte (BLOB_CORRUPT), a missing blob, a bad id and the size cap', async () => {
    const { id } = await store.put(text(2));
    const file = path.join(dir, looseKey(id));
    const bytes = await fs.readFile(file);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] as number) ^ 0x01;
    await fs.writeFile(file, bytes);
    await expect(store.get(id)).rejects.toThrow(code('BLOB_CORRUPT'));
    expect((await store.verifyBlob(id)).ok).toBe(false);
    await fs.writeFile(file, Buffer.from('CKB\x01\x09garbage'));
    await expect(store.get(id)).rejects.toThrow(code('BLOB_CORRUPT'));

    const missing = sha(Buffer.from('never stored'));
    await expect(store.get(missing)).rejects.toThrow(expect.objectContaining({ code: 'BLOB_NOT_FOUND', data: { blob: missing } }));
    expect(await store.has(missing)).toBe(false);
    await expect(store.get('ABC')).rejects.toThrow(code('INVALID_ARGUMENT'));

    const small = open({ maxBlobBytes: 10 });
    await expect(small.put(Buffer.alloc(11))).rejects.toThrow(
      expect.objectContaining({ code: 'BLOB_TOO_LARGE', data: { bytes: 11, max: 10 } }),
    );
    await expect(small.createPackWriter().add(Buffer.alloc(11))).rejects.toThrow(code('BLOB_TOO_LARGE'));
  });

  it('treats a symlinked loose blob file as missing, and a put replaces it', async () => {
    const data = text(4);
    const { id } = await store.put(data);
    const file = path.join(dir, looseKey(id));
    const elsewhere = path.join(dir, 'elsewhere');
    await fs.copyFile(file, elsewhere);
    await fs.rm(file);
    await fs.symlink(elsewhere, file);
    await expect(store.get(id)).rejects.toThrow(code('BLOB_NOT_FOUND'));
    expect(await store.has(id)).toBe(false);
    expect((await store.put(data)).created).toBe(true);
    expect((await fs.lstat(file)).isFile()).toBe(true);
    expect((await store.get(id)).equals(data)).toBe(true);
  });
});

describe('blob store: packs', () => {
  it('writes 2,000 blobs into a few files, all readable, listed and verified', async () => {
    const writer = store.createPackWriter();
    const ids: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const r = await writer.add(text(i));
      expect(r.created).toBe(true);
      ids.push(r.id);
    }
    expect((await writer.add(text(7))).created).toBe(false); // dedup within the writer
    const done = await writer.commit();
    expect(done).toMatchObject({ count: 2000, packs: [done.pack] });
    expect((await filesUnder('packs')).length).toBe(2);
    expect(await filesUnder('blobs')).toHaveLength(0);
    for (const [i, id] of ids.entries()) expect((await store.get(id)).equals(text(i))).toBe(true);
    expect(await store.info(ids[0] as string)).toMatchObject({ where: 'pack', pack: done.pack });

    const listed = [];
    for await (const b of store.listBlobs()) listed.push(b);
    expect(listed).toHaveLength(2000);
    expect(listed.every((b) => b.where === 'pack' && b.pack === done.pack)).toBe(true);
    expect(await store.verifyBlob(ids[5] as string)).toMatchObject({ ok: true, copies: [{ where: 'pack', ok: true }] });
  });

  it('rotates packs past the size limit and compresses inline with threads: 0', async () => {
    const writer = open({ maxPackBytes: 4096, threads: 0 }).createPackWriter();
    for (let i = 0; i < 200; i++) await writer.add(text(i));
    const done = await writer.commit();
    expect(done.packs.length).toBeGreaterThan(3);
    expect(done.count).toBe(200);
    const fresh = open();
    for (let i = 0; i < 200; i += 17) expect((await fresh.get(sha(text(i)))).equals(text(i))).toBe(true);
  });

  it('dedups between packs and loose blobs, freshening the pack', async () => {
    const loose = await store.put(text(1));
    const writer = store.createPackWriter();
    expect(await writer.add(text(1))).toMatchObject({ id: loose.id, created: false });
    expect((await writer.add(text(2))).created).toBe(true);
    // Loose puts keep working while a pack is open.
    expect((await store.put(text(3))).created).toBe(true);
    const { pack } = await writer.commit();
    for (const f of await filesUnder('packs')) await fs.utimes(f, old, old);

    const other = open();
    expect(await other.put(text(2))).toMatchObject({ created: false });
    expect(await filesUnder('blobs')).toHaveLength(2);
    const st = await fs.stat(path.join(dir, `packs/${pack}.idx`));
    expect(st.mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect((await other.info(sha(text(2))))?.mtimeMs).toBeGreaterThan(Date.now() - 60_000);
  });

  it('fails closed on a flipped byte inside a pack', async () => {
    const writer = store.createPackWriter();
    const a = await writer.add(text(10));
    const b = await writer.add(text(11));
    const { pack } = await writer.commit();
    const packFile = path.join(dir, `packs/${pack}.pack`);
    const bytes = await fs.readFile(packFile);
    const loc = (await store.info(a.id)) && (await open().info(a.id));
    expect(loc?.where).toBe('pack');
    bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 0x10; // inside the last record
    await fs.writeFile(packFile, bytes);
    const fresh = open();
    const results = await Promise.allSettled([fresh.get(a.id), fresh.get(b.id)]);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual([
      'BLOB_CORRUPT',
    ]);
  });

  it('reads through packs held open (openReads) as get does, and reports damage as get does', async () => {
    const first = await packOf(20, 21, 22);
    const second = await packOf(23);
    const reader = open();
    const reads = reader.openReads();
    for (const i of [20, 23, 21]) expect((await reader.get(sha(text(i)), reads)).equals(text(i))).toBe(true);
    // A flipped byte in a held pack (the same file, rewritten in place): BLOB_CORRUPT, as without it.
    const bytes = await fs.readFile(first.data);
    bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 0x10; // inside the last record (22)
    await fs.writeFile(first.data, bytes);
    await expect(reader.get(sha(text(22)), reads)).rejects.toThrow(code('BLOB_CORRUPT'));
    expect((await reader.get(sha(text(20)), reads)).equals(text(20))).toBe(true);
    // Removed since it was opened: what the held pack holds still reads (verified by its hash).
    await fs.rm(second.data);
    expect((await reader.get(sha(text(23)), reads)).equals(text(23))).toBe(true);
    reads.close();
    await expect(reader.get(sha(text(23)), reads)).rejects.toThrow(code('BLOB_NOT_FOUND'));
  });

  it('reads a packed blob through held packs without looking for its loose name; a loose repair in front of a damaged packed copy still wins', async () => {
    const { data } = await packOf(30, 31);
    const backend = createFsBackend({ dir });
    const looseReads: string[] = [];
    const counted = { ...backend, read: (key: string) => (key.startsWith('blobs/') && looseReads.push(key), backend.read(key)) } as typeof backend;
    const reader = createBlobStore({ backend: counted });
    let reads = reader.openReads();
    expect((await reader.get(sha(text(30)), reads)).equals(text(30))).toBe(true);
    expect(looseReads).toEqual([]);
    reads.close();
    // The packed copy of 31 damaged, a good loose copy written in front of it (as put repairs).
    const bytes = await fs.readFile(data);
    bytes[bytes.length - 2] = (bytes[bytes.length - 2] as number) ^ 0x10;
    await fs.writeFile(data, bytes);
    expect((await store.put(text(31))).created).toBe(true);
    reads = reader.openReads();
    expect((await reader.get(sha(text(31)), reads)).equals(text(31))).toBe(true);
    expect(looseReads).toEqual([looseKey(sha(text(31)))]);
    expect((await reader.get(sha(text(30)), reads)).equals(text(30))).toBe(true);
    reads.close();
  });

  it('rewritePack drops dead blobs and keeps live ones readable', async () => {
    const writer = store.createPackWriter();
    const ids = [];
    for (let i = 0; i < 50; i++) ids.push((await writer.add(text(100 + i))).id);
    const { pack } = await writer.commit();
    const live = new Set(ids.filter((_, i) => i % 3 === 0));
    const reader = open();
    await reader.get(ids[1] as string); // loads the old index into another instance's cache

    const r = await store.rewritePack(pack as string, (id) => live.has(id));
    expect(r).toMatchObject({ kept: live.size, dropped: 50 - live.size, skipped: false });
    expect(r.bytesFreed).toBeGreaterThan(0);
    expect(r.pack).not.toBe(pack);
    expect((await filesUnder('packs')).map((f) => path.basename(f)).sort()).toEqual([`${r.pack}.idx`, `${r.pack}.pack`]);
    for (const [i, id] of ids.entries()) {
      if (live.has(id)) expect((await reader.get(id)).equals(text(100 + i))).toBe(true);
      else await expect(reader.get(id)).rejects.toThrow(code('BLOB_NOT_FOUND'));
    }
    // The writer's instance still caches the old index: a dropped blob must be stored again, not "found".
    const dropped = ids.findIndex((id) => !live.has(id));
    const again = await reader.put(text(100 + dropped));
    expect(again.created).toBe(true);
    expect((await reader.get(again.id)).equals(text(100 + dropped))).toBe(true);
    await store.removeLoose(again.id);

    const none = await store.rewritePack(r.pack as string, () => false);
    expect(none).toMatchObject({ pack: undefined, kept: 0 });
    expect(await filesUnder('packs')).toHaveLength(0);
  });

  it('a second store instance sees a pack committed after it loaded its cache', async () => {
    const other = open();
    const first = await store.createPackWriter().commit(); // nothing added: no pack
    expect(first).toMatchObject({ pack: undefined, count: 0 });
    await packOf(1);
    expect(await other.has(sha(text(1)))).toBe(true); // cache loaded now
    await packOf(2);
    expect((await other.get(sha(text(2)))).equals(text(2))).toBe(true);
  });

  it('abort removes the uncommitted pack; loose and packed copies are both listed', async () => {
    const writer = store.createPackWriter();
    await writer.add(text(1));
    await writer.add(Buffer.alloc(3 * 1024 * 1024, 7)); // a full batch: reaches the pack before abort
    await writer.abort();
    await writer.abort();
    expect(await filesUnder('packs')).toHaveLength(0);
    await expect(store.get(sha(text(1)))).rejects.toThrow(code('BLOB_NOT_FOUND'));

    await packOf(5);
    await store.put(text(6));
    const listed = [];
    for await (const b of store.listBlobs()) listed.push(b);
    expect(listed.map((b) => b.where).sort()).toEqual(['loose', 'pack']);
    await store.removeLoose(sha(text(6)));
    expect(await store.has(sha(text(6)))).toBe(false);
  });
});

describe('blob store: damage (issue 10 item 8)', () => {
  it('a corrupt loose blob is replaced by the next put of the same content', async () => {
    const data = text(11);
    const { id } = await store.put(data);
    const file = path.join(dir, looseKey(id));
    const bytes = await fs.readFile(file);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    await fs.writeFile(file, bytes);
    await expect(store.get(id)).rejects.toThrow(code('BLOB_CORRUPT'));
    expect(await store.put(data)).toMatchObject({ id, created: true });
    expect((await store.get(id)).equals(data)).toBe(true);
    expect(await store.put(data)).toMatchObject({ id, created: false });
  });

  it('a corrupt packed copy gets a good loose copy in front of it on the next put', async () => {
    const file = (await packOf(12)).data;
    const bytes = await fs.readFile(file);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    await fs.writeFile(file, bytes);
    await expect(open().get(sha(text(12)))).rejects.toThrow(code('BLOB_CORRUPT'));
    await store.put(text(12));
    expect((await open().get(sha(text(12)))).equals(text(12))).toBe(true);
  });

  it('a deleted or corrupt pack index reads as BLOB_CORRUPT, not BLOB_NOT_FOUND', async () => {
    const idx = (await packOf(13)).index;
    const good = await fs.readFile(idx);
    await fs.writeFile(idx, good.subarray(0, 20));
    await expect(open().get(sha(text(13)))).rejects.toThrow(code('BLOB_CORRUPT'));
    await fs.rm(idx);
    await expect(open().get(sha(text(13)))).rejects.toThrow(code('BLOB_CORRUPT'));
    await fs.writeFile(idx, good);
    expect((await open().get(sha(text(13)))).equals(text(13))).toBe(true);
  });
});

// GC on real temp stores: what it keeps (everything live sessions, owner and scan indexes
// reference), what it frees (what a removed session alone used), the grace period, packs, leftovers,
// dry runs, idempotence, and failing closed on an unreadable log.
import { mkdir, readdir, readFile, rm, writeFile, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store, type Workspace } from '../src/store.js';
import { applyGc, planGc, runGc, takeInventory } from '../src/gc/index.js';
import { verify } from '../src/gc/verify.js';
import { HASH_SHA256, KIND_FILE, ScanIndex } from '../src/scan/scan-index.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';
import { ageStore, blobIds, edit } from './fixtures/gc-helpers.js';
import { createHash } from 'node:crypto';

let dirs: TempDirs;
let store: Store;
let ws: Workspace;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

beforeEach(async () => {
  dirs = await makeTempDirs('ckpt-gc-');
  store = await openStore({ dir: dirs.store, retention: false });
  ws = await store.openWorkspace(dirs.workspace);
});
afterEach(() => dirs.cleanup());

describe('gc', () => {
  it('keeps everything a live session references, frees what a removed session alone used, and a second gc frees nothing', async () => {
    // `drop` works before `keep` begins: no history of `keep` reaches its captures (removed-sessions.ts).
    const drop = await ws.create({ id: 'drop' });
    await drop.turn();
    await edit(drop, dirs.workspace, 'b.txt', 'only in drop', 'b after drop');
    await edit(drop, dirs.workspace, 'c.txt', 'shared content', 'c after drop'); // shared with keep
    await new Promise((r) => setTimeout(r, 5));
    const keep = await ws.create({ id: 'keep' });
    await keep.turn();
    await edit(keep, dirs.workspace, 'a.txt', 'shared content', 'a after keep');
    await ws.remove('drop');
    // owners.json still names b.txt's after-state written by `drop`: a later scan may use it.
    await ageStore(dirs.store);

    const before = await blobIds(store);
    const { plan, result } = await runGc(store.ctx);
    expect(plan.referenced).toContain(sha('shared content'));
    expect(result.deleted).toBe(1);
    expect(plan.loose.map((c) => c.id)).toEqual([sha('only in drop')]);
    const after = await blobIds(store);
    expect([...before].filter((id) => !after.has(id))).toEqual([sha('only in drop')]);
    for (const id of [sha('shared content'), sha('a after keep'), sha('b after drop'), sha('c after drop')]) {
      expect((await store.ctx.blobs.get(id)).length).toBeGreaterThan(0);
    }
    expect(result.bytesFreed).toBeGreaterThan(0);
    expect(result.kept).toBe(after.size);
    expect((await verify(store.ctx)).ok).toBe(true);

    const again = await runGc(store.ctx);
    expect(again.result).toMatchObject({ deleted: 0, bytesFreed: 0, kept: after.size });
  });

  it('never deletes an unreferenced blob younger than the grace period; --grace 0s does', async () => {
    const s = await ws.create({ id: 's' });
    await s.turn();
    await edit(s, dirs.workspace, 'a.txt', 'young', 'young after');
    await ws.remove('s');
    const young = await runGc(store.ctx);
    expect(young.result.deleted).toBe(0);
    expect(young.plan.young.count).toBeGreaterThan(0);
    expect((await runGc(store.ctx, { graceMs: 60_000 })).result.deleted).toBe(0);
    const now = await runGc(store.ctx, { graceMs: 0, now: Date.now() + 1 });
    expect(now.result.deleted).toBe(young.plan.young.count);
  });

  it('a dry run deletes nothing and predicts the real run', async () => {
    const s = await ws.create({ id: 's' });
    await s.turn();
    await edit(s, dirs.workspace, 'a.txt', 'one', 'two');
    await ws.remove('s');
    await ageStore(dirs.store);
    const before = await blobIds(store);
    const dry = await runGc(store.ctx, { dryRun: true });
    // The captured 'one' goes; the settled 'two' stays: the owner index names it as the present state.
    expect(dry.result).toMatchObject({ dryRun: true, deleted: 1 });
    expect(await blobIds(store)).toEqual(before);
    const real = await runGc(store.ctx);
    expect(real.result.deleted).toBe(dry.result.deleted);
    expect(real.result.bytesFreed).toBe(dry.result.bytesFreed);
  });

  it('an unreadable session log aborts the sweep with a clear error and deletes nothing', async () => {
    const gone = await ws.create({ id: 'gone' });
    await edit(gone, dirs.workspace, 'b.txt', 'garbage', 'garbage 2');
    await new Promise((r) => setTimeout(r, 5));
    const s = await ws.create({ id: 'broken' });
    await s.turn();
    await edit(s, dirs.workspace, 'a.txt', 'x', 'y');
    await ws.remove('gone');
    await ageStore(dirs.store);
    const before = await blobIds(store);
    const plan = planGc(await takeInventory(store.ctx));
    expect(plan.deleteCount).toBe(1);
    await appendFile(join(dirs.store, 'workspaces', ws.id, 'sessions', 'broken', 'events.jsonl'), 'not json\n{"v":1}\n');
    // Both planning and applying a plan made earlier re-read every log.
    await expect(runGc(store.ctx)).rejects.toMatchObject({ code: 'LOG_CORRUPT', message: expect.stringContaining('broken') });
    await expect(applyGc(store.ctx, plan)).rejects.toMatchObject({ code: 'LOG_CORRUPT' });
    expect(await blobIds(store)).toEqual(before);
  });

  it('a plan applied late does not delete a blob that became referenced since', async () => {
    const s = await ws.create({ id: 's' });
    await edit(s, dirs.workspace, 'a.txt', 'reused later', 'after');
    await ws.remove('s');
    await ageStore(dirs.store);
    const plan = planGc(await takeInventory(store.ctx));
    expect(plan.loose.map((c) => c.id)).toContain(sha('reused later'));
    const t = await ws.create({ id: 't' });
    await edit(t, dirs.workspace, 'b.txt', 'reused later', 'other');
    const r = await applyGc(store.ctx, plan);
    expect(r.rescued).toBeGreaterThanOrEqual(1);
    expect((await store.ctx.blobs.get(sha('reused later'))).toString()).toBe('reused later');
    expect((await verify(store.ctx)).ok).toBe(true);
  });

  it('rewrites packs without their dead blobs and keeps the live ones readable', async () => {
    const writer = store.ctx.blobs.createPackWriter({ threads: 0 });
    for (const c of ['packed live', 'packed dead 1', 'packed dead 2']) await writer.add(Buffer.from(c));
    const { pack } = await writer.commit();
    const s = await ws.create({ id: 's' });
    await writeFile(join(dirs.workspace, 'p.txt'), 'packed live');
    await s.capture(['p.txt']); // its put finds the packed copy: no loose copy
    expect((await store.ctx.blobs.info(sha('packed live')))?.where).toBe('pack');
    await ageStore(dirs.store);
    const { plan, result } = await runGc(store.ctx);
    expect(plan.packs).toEqual([expect.objectContaining({ pack, dead: expect.arrayContaining([sha('packed dead 1'), sha('packed dead 2')]) })]);
    expect(result).toMatchObject({ deleted: 2, packsRewritten: 1 });
    expect((await store.ctx.blobs.get(sha('packed live'))).toString()).toBe('packed live');
    expect(await store.ctx.blobs.has(sha('packed dead 1'))).toBe(false);
    expect((await readdir(join(dirs.store, 'packs'))).some((n) => n.startsWith(pack!))).toBe(false);
    expect((await runGc(store.ctx, { graceMs: 0, now: Date.now() + 1 })).result.deleted).toBe(0);
    expect((await verify(store.ctx)).ok).toBe(true);
  });

  it('leaves a pack that was freshened since the plan alone', async () => {
    const writer = store.ctx.blobs.createPackWriter({ threads: 0 });
    for (const c of ['p1', 'p2']) await writer.add(Buffer.from(c));
    await writer.commit();
    await ageStore(dirs.store);
    const plan = planGc(await takeInventory(store.ctx));
    expect(plan.packs[0]?.dead).toHaveLength(2);
    // Another process reuses p1 between plan and apply.
    const other = await openStore({ dir: dirs.store, retention: false });
    await other.ctx.blobs.put(Buffer.from('p1'));
    const r = await applyGc(store.ctx, plan);
    expect(r).toMatchObject({ deleted: 0, rescued: 2 });
    expect((await store.ctx.blobs.get(sha('p1'))).toString()).toBe('p1');
  });

  it('keeps blobs named by the scan index and the owner index', async () => {
    const viaScan = await store.ctx.blobs.put(Buffer.from('scan baseline'));
    const index = new ScanIndex(4, Date.now());
    const slot = index.push('baseline.txt', KIND_FILE, { size: 13, mtimeMs: 1, ctimeMs: 1, ino: 1, mode: 0o100644 });
    index.setHash(slot, HASH_SHA256, viaScan.id);
    await mkdir(join(dirs.store, 'workspaces', ws.id), { recursive: true });
    await writeFile(join(dirs.store, 'workspaces', ws.id, 'scan-index.bin'), index.encode());
    const s = await ws.create({ id: 's' });
    await s.turn({ scan: false }); // else the capture looks first (a session before its first prompt)
    await edit(s, dirs.workspace, 'o.txt', 'captured', 'owned after-state');
    await ws.remove('s');
    const owners = JSON.parse(await readFile(join(dirs.store, 'workspaces', ws.id, 'owners.json'), 'utf8'));
    expect(owners['o.txt'].state).toBe(sha('owned after-state'));
    await ageStore(dirs.store);
    const { plan } = await runGc(store.ctx);
    expect(plan.loose.map((c) => c.id)).toEqual([sha('captured')]);
    expect(await store.ctx.blobs.has(viaScan.id)).toBe(true);
    expect(await store.ctx.blobs.has(sha('owned after-state'))).toBe(true);
  });

  it('refuses to collect when a scan index cannot be decoded', async () => {
    await mkdir(join(dirs.store, 'workspaces', ws.id), { recursive: true });
    await writeFile(join(dirs.store, 'workspaces', ws.id, 'scan-index.bin'), Buffer.concat([Buffer.from('CKSI'), Buffer.alloc(60)]));
    await expect(runGc(store.ctx)).rejects.toThrow(/scan index/);
  });

  it('never deletes a pack whose index is missing while a referenced blob is missing (issue 10 item 8)', async () => {
    const writer = store.ctx.blobs.createPackWriter({ threads: 0 });
    await writer.add(Buffer.from('only in the pack'));
    const { pack } = await writer.commit();
    const s = await ws.create({ id: 's' });
    await writeFile(join(dirs.workspace, 'p.txt'), 'only in the pack');
    await s.capture(['p.txt']); // referenced, stored only in the pack
    await rm(join(dirs.store, 'packs', `${pack}.idx`));
    await ageStore(dirs.store, 48 * 3_600_000);
    const { plan, result } = await runGc(store.ctx);
    expect(plan.missing).toEqual([sha('only in the pack')]);
    expect(plan.orphans).toEqual([]);
    expect(result.orphansRemoved).toBe(0);
    expect(await readdir(join(dirs.store, 'packs'))).toEqual([`${pack}.pack`]);
  });

  it('removes leftover temp and staging files and partial packs older than their grace', async () => {
    await store.ctx.blobs.put(Buffer.from('something'));
    const aa = (await readdir(join(dirs.store, 'blobs')))[0]!;
    const temp = join(dirs.store, 'blobs', aa, '.abc.ckpt-tmp-0123456789ab');
    await writeFile(temp, 'half a blob');
    await mkdir(join(dirs.store, 'tmp'), { recursive: true });
    await writeFile(join(dirs.store, 'tmp', 'staged'), 'staged');
    await mkdir(join(dirs.store, 'packs'), { recursive: true });
    await writeFile(join(dirs.store, 'packs', 'zzzz-partial.pack'), 'CKP\u0001 partial');
    const fresh = await runGc(store.ctx);
    expect(fresh.result.orphansRemoved).toBe(0);
    await ageStore(dirs.store);
    await ageStore(dirs.store, 3_600_000, [join('blobs', aa)]);
    // The partial pack is an hour old: too young for the one-day default, old enough for a shorter one.
    const first = await runGc(store.ctx);
    expect(first.plan.orphans.map((o) => o.kind).sort()).toEqual(['staging', 'temp']);
    expect(first.result.orphansRemoved).toBe(2);
    const second = await runGc(store.ctx, { partialPackGraceMs: 30 * 60_000 });
    expect(second.result.orphansRemoved).toBe(1);
    expect(await readdir(join(dirs.store, 'packs'))).toEqual([]);
    expect((await readdir(join(dirs.store, 'blobs', aa))).filter((n) => n.includes('ckpt-tmp'))).toEqual([]);
  });
});

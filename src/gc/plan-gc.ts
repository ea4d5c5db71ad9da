// GC planning (DESIGN §5, §8): `takeInventory()` reads the store (every log, owner and scan index,
// every blob copy, every leftover) and `planGc()` turns an inventory into a plan — pure, no I/O, a
// plain JSON-able object that can be printed, dry-run or applied. What counts as live: live-set.ts.
import type { StoreContext } from '../context.js';
import type { ListedBlob } from '../storage/blob-store.js';
import { formatDuration } from '../format/duration.js';
import { collectLiveSet, type CollectOptions, type LiveSet } from './live-set.js';
import { findOrphans, PARTIAL_PACK_GRACE_MS, type OrphanFile } from './orphans.js';
import { quarantinedId, quarantinedPack } from './sweep-loose.js';

export const DEFAULT_GRACE_MS = 15 * 60_000;

export interface GcInventory {
  /** When the inventory was taken (ms since the epoch). */
  takenAt: number;
  live: LiveSet;
  /** Every blob copy: loose files and packed entries (a blob may have both). */
  blobs: ListedBlob[];
  orphans: OrphanFile[];
}

export interface GcOptions {
  /** Nothing younger than this is deleted (default 15 min). */
  graceMs?: number;
  /** Minimum age of a partial pack before it is removed (default a day, never less than the grace). */
  partialPackGraceMs?: number;
  /** "Now" for the age gate (default: the inventory's time). */
  now?: number;
}

export interface LooseCandidate {
  id: string;
  stored: number;
  mtimeMs: number;
}

export interface PackCandidate {
  pack: string;
  /** The pack's mtime when planned: a later change means a blob in it was reused, and the pack is left alone. */
  mtimeMs: number;
  dead: string[];
  deadBytes: number;
  /** Entries the rewritten pack keeps. */
  kept: number;
}

export interface GcPlan {
  at: string;
  graceMs: number;
  grace: string;
  /** Copies last changed before this instant are old enough to delete. */
  cutoffMs: number;
  /** Every live blob id (sorted). */
  referenced: string[];
  /** Blob copies in the store. */
  copies: number;
  loose: LooseCandidate[];
  packs: PackCandidate[];
  /** Unreferenced copies kept because they are younger than the grace period. */
  young: { count: number; bytes: number };
  orphans: OrphanFile[];
  /** Blob copies the plan deletes. */
  deleteCount: number;
  /** Bytes the plan frees (blob records and orphans; a rewritten pack also saves index bytes). */
  bytesToFree: number;
  /** Blob copies that stay. */
  kept: number;
  /** Referenced blobs with no copy in the store (verify reports them; GC cannot help). */
  missing: string[];
}

/** Reads everything a plan needs. Throws LOG_CORRUPT (before anything is decided) on an unreadable log. */
export async function takeInventory(ctx: Pick<StoreContext, 'backend' | 'blobs' | 'dir'>, options: CollectOptions = {}): Promise<GcInventory> {
  const takenAt = Date.now();
  // Blobs are listed *after* the logs are read: a blob put after the listing is not a candidate at all,
  // and one put before it that a newer event references was freshened by its put (the age gate).
  const live = await collectLiveSet(ctx, options);
  const blobs: ListedBlob[] = [];
  for await (const b of ctx.blobs.listBlobs()) blobs.push(b);
  const orphans = await findOrphans(ctx);
  return { takenAt, live, blobs, orphans };
}

/** Pure: what a GC would delete, given an inventory. */
export function planGc(inventory: GcInventory, options: GcOptions = {}): GcPlan {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const now = options.now ?? inventory.takenAt;
  const cutoffMs = now - graceMs;
  const live = inventory.live.ids;
  const loose: LooseCandidate[] = [];
  const packs = new Map<string, PackCandidate>();
  const young = { count: 0, bytes: 0 };
  const present = new Set<string>();
  for (const b of inventory.blobs) {
    present.add(b.id);
    if (b.where === 'pack' && b.pack && !packs.has(b.pack)) packs.set(b.pack, { pack: b.pack, mtimeMs: b.mtimeMs, dead: [], deadBytes: 0, kept: 0 });
    const pack = b.where === 'pack' && b.pack ? packs.get(b.pack) : undefined;
    if (live.has(b.id)) {
      if (pack) pack.kept++;
      continue;
    }
    if (b.mtimeMs >= cutoffMs) {
      young.count++;
      young.bytes += b.stored;
      if (pack) pack.kept++;
    } else if (pack) {
      pack.dead.push(b.id);
      pack.deadBytes += b.stored;
    } else if (b.where === 'loose') {
      loose.push({ id: b.id, stored: b.stored, mtimeMs: b.mtimeMs });
    }
  }
  const partialCutoff = now - Math.max(graceMs, options.partialPackGraceMs ?? PARTIAL_PACK_GRACE_MS);
  // A live blob left in quarantine by a crashed collector is listed whatever its age: it goes back.
  // So is a quarantined pack (a rewrite that crashed): it goes back if its index is still there.
  const relink = (o: OrphanFile): boolean => live.has(quarantinedId(o.quarantineOf) ?? '') || quarantinedPack(o.quarantineOf) !== undefined;
  const missing = [...live].filter((id) => !present.has(id)).sort();
  // A pack without its index may be a complete pack whose index was lost: while any referenced blob
  // is missing, it may be in there, so no such pack is deleted (verify reports the missing blobs).
  const orphans = inventory.orphans.filter(
    (o) => (o.kind !== 'partial-pack' || missing.length === 0) && (relink(o) || o.mtimeMs < (o.kind === 'partial-pack' ? partialCutoff : cutoffMs)),
  );
  const packList = [...packs.values()].filter((p) => p.dead.length > 0);
  const deleteCount = loose.length + packList.reduce((n, p) => n + p.dead.length, 0);
  const bytesToFree =
    loose.reduce((n, c) => n + c.stored, 0) + packList.reduce((n, p) => n + p.deadBytes, 0) + orphans.reduce((n, o) => n + (relink(o) ? 0 : o.bytes), 0);
  return {
    at: new Date(now).toISOString(),
    graceMs,
    grace: formatDuration(graceMs),
    cutoffMs,
    referenced: [...live].sort(),
    copies: inventory.blobs.length,
    loose,
    packs: packList,
    young,
    orphans,
    deleteCount,
    bytesToFree,
    kept: inventory.blobs.length - deleteCount,
    missing,
  };
}

/** A few lines for people: what the plan keeps and frees. */
export function describeGcPlan(plan: GcPlan): string {
  const lines = [
    `${plan.referenced.length} referenced blob(s), ${plan.copies} cop${plan.copies === 1 ? 'y' : 'ies'} in the store (grace ${plan.grace})`,
    `would delete ${plan.deleteCount} blob cop${plan.deleteCount === 1 ? 'y' : 'ies'} (${plan.loose.length} loose, ${plan.packs.reduce((n, p) => n + p.dead.length, 0)} packed in ${plan.packs.length} pack(s)) and ${plan.orphans.length} leftover file(s): ${formatBytes(plan.bytesToFree)}`,
  ];
  if (plan.young.count > 0) lines.push(`keeping ${plan.young.count} unreferenced blob(s) younger than ${plan.grace} (${formatBytes(plan.young.bytes)})`);
  if (plan.missing.length > 0) lines.push(`${plan.missing.length} referenced blob(s) are missing — run 'ckpt verify'`);
  return lines.join('\n');
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}

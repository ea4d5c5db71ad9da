// Leftovers a crash can strand in the store (DESIGN §3 `tmp/`, §4): temp files of atomic writes
// (`.<name>.ckpt-tmp-<hex>` beside their target, hidden from the backend's listings), anything under
// `tmp/`, and partial packs (a `.pack` whose `.idx` — the commit point — was never written). GC
// removes those older than its grace period; partial packs only past a longer age, since a slow bulk
// writer may legitimately go a while between appends to the pack it is filling. The driver's own
// temp files and quarantined objects come from backend.leftovers().
import type { StoreContext } from '../context.js';

export type OrphanKind = 'temp' | 'staging' | 'partial-pack';

export interface OrphanFile {
  kind: OrphanKind;
  /** Store-relative path with `/` separators. */
  key: string;
  bytes: number;
  mtimeMs: number;
  /** For a blob a collector quarantined and then crashed: the key it was taken from. */
  quarantineOf?: string;
}

/** Default minimum age of a partial pack before it is removed (a day). */
export const PARTIAL_PACK_GRACE_MS = 24 * 3_600_000;

/** Every leftover of the store, whatever its age (the plan decides what is old enough). */
export async function findOrphans(ctx: Pick<StoreContext, 'backend'>): Promise<OrphanFile[]> {
  const { backend } = ctx;
  const out: OrphanFile[] = [];
  for (const key of await backend.list('tmp')) {
    const st = await backend.stat(key);
    if (st) out.push({ kind: 'staging', key, bytes: st.size, mtimeMs: st.mtimeMs });
  }
  const names = new Set(await backend.children('packs'));
  for (const name of names) {
    if (!name.endsWith('.pack') || names.has(`${name.slice(0, -'.pack'.length)}.idx`)) continue;
    const st = await backend.stat(`packs/${name}`);
    if (st) out.push({ kind: 'partial-pack', key: `packs/${name}`, bytes: st.size, mtimeMs: st.mtimeMs });
  }
  for (const l of await backend.leftovers()) out.push({ kind: 'temp', ...l });
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Removes one orphan if it is still there and still older than `cutoffMs`; the bytes freed (0 when kept). */
export async function removeOrphan(ctx: Pick<StoreContext, 'backend'>, orphan: OrphanFile, cutoffMs: number): Promise<number> {
  if (orphan.kind !== 'temp') {
    const st = await ctx.backend.stat(orphan.key);
    if (!st || st.mtimeMs >= cutoffMs) return 0;
    // A partial pack whose index appeared meanwhile was committed: it is a pack now, not an orphan.
    if (orphan.kind === 'partial-pack' && (await ctx.backend.stat(`${orphan.key.slice(0, -'.pack'.length)}.idx`))) return 0;
    await ctx.backend.remove(orphan.key);
    return st.size;
  }
  return ctx.backend.removeLeftover(orphan.key, cutoffMs);
}

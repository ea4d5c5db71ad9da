// Leftovers a crash can strand in the store (DESIGN §3 `tmp/`, §4): temp files of atomic writes
// (`.<name>.ckpt-tmp-<hex>` beside their target, hidden from the backend's listings), anything under
// `tmp/`, and partial packs (a `.pack` whose `.idx` — the commit point — was never written). GC
// removes those older than its grace period; partial packs only past a longer age, since a slow bulk
// writer may legitimately go a while between appends to the pack it is filling.
//
// The fs driver's temp files are invisible through the StoreBackend contract (list/children skip
// them), so they are found with a direct walk of the store folder when the driver is `fs`.
import { lstat, readdir, unlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { StoreContext } from '../context.js';
import { toCkptError } from '../errors.js';

export type OrphanKind = 'temp' | 'staging' | 'partial-pack';

export interface OrphanFile {
  kind: OrphanKind;
  /** Store-relative path with `/` separators. */
  key: string;
  bytes: number;
  mtimeMs: number;
}

const TEMP_MARK = '.ckpt-tmp-';
/** Default minimum age of a partial pack before it is removed (a day). */
export const PARTIAL_PACK_GRACE_MS = 24 * 3_600_000;

const isMissing = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException | undefined)?.code ?? '');

/** Every leftover of the store, whatever its age (the plan decides what is old enough). */
export async function findOrphans(ctx: Pick<StoreContext, 'backend' | 'dir'>): Promise<OrphanFile[]> {
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
  if (backend.kind === 'fs') await walkTemp(ctx.dir, ctx.dir, out);
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

async function walkTemp(root: string, dir: string, out: OrphanFile[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) return;
    throw toCkptError(err, `list ${dir}`);
  }
  for (const e of entries) {
    const abs = join(dir, e.name);
    if (e.isDirectory() && !e.name.endsWith('.ckpt-lock')) await walkTemp(root, abs, out);
    else if (e.isFile() && e.name.includes(TEMP_MARK)) {
      try {
        const st = await lstat(abs);
        out.push({ kind: 'temp', key: relative(root, abs).split(sep).join('/'), bytes: st.size, mtimeMs: st.mtimeMs });
      } catch (err) {
        if (!isMissing(err)) throw toCkptError(err, `stat ${abs}`);
      }
    }
  }
}

/** Removes one orphan if it is still there and still older than `cutoffMs`; the bytes freed (0 when kept). */
export async function removeOrphan(ctx: Pick<StoreContext, 'backend' | 'dir'>, orphan: OrphanFile, cutoffMs: number): Promise<number> {
  if (orphan.kind !== 'temp') {
    const st = await ctx.backend.stat(orphan.key);
    if (!st || st.mtimeMs >= cutoffMs) return 0;
    // A partial pack whose index appeared meanwhile was committed: it is a pack now, not an orphan.
    if (orphan.kind === 'partial-pack' && (await ctx.backend.stat(`${orphan.key.slice(0, -'.pack'.length)}.idx`))) return 0;
    await ctx.backend.remove(orphan.key);
    return st.size;
  }
  const abs = join(ctx.dir, ...orphan.key.split('/'));
  try {
    const st = await lstat(abs);
    if (!st.isFile() || st.mtimeMs >= cutoffMs) return 0;
    await unlink(abs);
    return st.size;
  } catch (err) {
    if (isMissing(err)) return 0;
    throw toCkptError(err, `remove ${orphan.key}`);
  }
}

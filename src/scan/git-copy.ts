// Copying git blobs into ckpt's store (DESIGN §10 "Scans"): the before-content of files a scan finds
// changed or deleted whose previous state was a reference to git's blob. Many at once (a checkout,
// a pull) go into one pack — one fsync for all, not one per blob; a few become loose blobs. Every
// copied blob is durable before this returns, so the capture that references them may be appended.
import type { WorkspaceContext } from '../context.js';
import { toCkptError } from '../errors.js';
import type { GitObjects } from '../workspace/git-objects.js';
import { PACK_THRESHOLD } from './store-content.js';

export interface GitCopy {
  /** Git blob id -> ckpt blob id and size, for every blob read and stored. */
  copied: Map<string, { blob: string; bytes: number }>;
  /** Blobs read but over the size cap. */
  tooLarge: Set<string>;
  /** Blobs newly written. */
  stored: number;
}

export async function copyGitBlobs(ctx: WorkspaceContext, objects: GitObjects | undefined, oids: Iterable<string>): Promise<GitCopy> {
  const out: GitCopy = { copied: new Map(), tooLarge: new Set(), stored: 0 };
  const unique = [...new Set(oids)];
  if (!objects || unique.length === 0) return out;
  const maxBytes = ctx.options.maxBlobBytes;
  const writer = unique.length >= PACK_THRESHOLD ? ctx.blobs.createPackWriter() : undefined;
  try {
    for (const oid of unique) {
      const data = await objects.readBlob(oid);
      if (!data) continue;
      if (data.length > maxBytes) {
        out.tooLarge.add(oid);
        continue;
      }
      const r = writer ? await writer.add(data) : await ctx.blobs.put(data);
      if (r.created) out.stored++;
      out.copied.set(oid, { blob: r.id, bytes: data.length });
    }
    await writer?.commit();
  } catch (err) {
    await writer?.abort();
    throw toCkptError(err, 'copying git blobs into the store');
  }
  return out;
}

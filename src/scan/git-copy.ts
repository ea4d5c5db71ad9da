// Copying git blobs into ckpt's store (DESIGN §10 "Scans"): the before-content of files a scan finds
// changed or deleted whose previous state was a reference to git's blob. Many at once (a checkout,
// a pull) go into the scan's pack in batches — read from git's packs with each pack file opened once
// per batch, then hashed and compressed on the pack writer's threads while the next batch is read —
// and are durable once the scan commits its pack; a few become loose blobs, durable on return.
import type { WorkspaceContext } from '../context.js';
import { toCkptError } from '../errors.js';
import type { GitObjects } from '../workspace/git-objects.js';
import type { ScanPack } from './scan-pack.js';
import { PACK_THRESHOLD } from './store-content.js';

/** Blobs read from git per batch handed to the pack writer, and batches in flight on it. */
const BATCH_BLOBS = 64;
const IN_FLIGHT = 4;

export interface GitCopy {
  /** Git blob id -> ckpt blob id and size, for every blob read and stored. */
  copied: Map<string, { blob: string; bytes: number }>;
  /** Blobs read but over the size cap. */
  tooLarge: Set<string>;
  /** Blobs newly written. */
  stored: number;
}

/**
 * Copies blobs `oids` out of git's object store. `seeds` is content the scan just read, by git blob
 * id: a delta chain that passes through one of them is rebuilt from it (GitObjects.seedBlob).
 */
export async function copyGitBlobs(ctx: WorkspaceContext, objects: GitObjects | undefined, oids: Iterable<string>, pack: ScanPack, seeds?: ReadonlyMap<string, Buffer>): Promise<GitCopy> {
  const out: GitCopy = { copied: new Map(), tooLarge: new Set(), stored: 0 };
  const unique = [...new Set(oids)];
  if (!objects || unique.length === 0) return out;
  for (const [oid, data] of seeds ?? []) objects.seedBlob(oid, data);
  const maxBytes = ctx.options.maxBlobBytes;
  const inFlight: Promise<void>[] = [];
  try {
    for (let from = 0; from < unique.length; from += BATCH_BLOBS) {
      const ids = unique.slice(from, from + BATCH_BLOBS);
      const blobs = objects.readBlobs(ids);
      const take: { oid: string; data: Buffer }[] = [];
      blobs.forEach((data, k) => {
        if (!data) return;
        if (data.length > maxBytes) out.tooLarge.add(ids[k] as string);
        else take.push({ oid: ids[k] as string, data });
      });
      if (take.length === 0) continue;
      if (unique.length < PACK_THRESHOLD) {
        await Promise.all(
          take.map(async ({ oid, data }) => {
            const r = await ctx.blobs.put(data);
            if (r.created) out.stored++;
            out.copied.set(oid, { blob: r.id, bytes: data.length });
          }),
        );
        continue;
      }
      // One buffer per batch: the writer takes it over (it is transferred to a worker thread).
      const lengths = take.map((t) => t.data.length);
      const offsets: number[] = [];
      const buf = new Uint8Array(lengths.reduce((a, b) => a + b, 0));
      let at = 0;
      for (const t of take) {
        offsets.push(at);
        buf.set(t.data, at);
        at += t.data.length;
      }
      const job = pack
        .writer()
        .addMany(buf, offsets, lengths)
        .then((results) => {
          results.forEach((r, k) => {
            if (r.created) out.stored++;
            out.copied.set(take[k]!.oid, { blob: r.id, bytes: r.bytes });
          });
        });
      job.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
      inFlight.push(job);
      if (inFlight.length >= IN_FLIGHT) await inFlight.shift();
    }
    await Promise.all(inFlight.splice(0));
  } catch (err) {
    await Promise.allSettled(inFlight);
    throw toCkptError(err, 'copying git blobs into the store');
  }
  return out;
}

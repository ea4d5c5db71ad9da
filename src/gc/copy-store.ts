// `ckpt store copy FROM TO` (issue 17): moves a store between drivers (a folder ↔ a shared store)
// through the backend contract only, then proves the copy: every object's bytes re-read from the
// destination and compared by sha256, and the destination's own `verify` (blobs re-hashed, logs
// parsed, references resolved). The source is held under its GC lock so no collector deletes
// underneath; blobs and pack files go first and pack indexes (the commit points) after them, logs
// and metadata last, so a destination interrupted midway is never one whose logs name missing blobs.
import { createHash } from 'node:crypto';
import { CkptError } from '../errors.js';
import type { StoreContext } from '../context.js';
import { workspaceIdOf } from '../workspace/workspace-id.js';
import { GC_LOCK } from './apply-gc.js';
import { verify, type VerifyProblem } from './verify.js';

export type CopyProblem = VerifyProblem | { kind: 'copy_mismatch'; key: string; message: string };

export interface CopyStoreResult {
  objects: number;
  bytes: number;
  /**
   * True when every object reads back identical and the destination passes `verify` — an interrupted
   * restore aside (`restore_interrupted`, listed in `problems`): the copy holds it as the source does,
   * and the next command that opens the session finishes it (a probe: a faithful copy failed BLOB_CORRUPT).
   */
  verified: boolean;
  problems: CopyProblem[];
}

export interface CopyStoreOptions {
  onProgress?: (p: { phase: 'copy' | 'check'; done: number; total: number }) => void;
  /**
   * Workspace ids hash the machine id in a shared store only (workspace-id.ts), so a copy between a
   * folder and a shared store re-keys the workspaces of this machine (`machine`): local → shared
   * adds the machine, shared → local drops it for this machine's workspaces (others keep theirs).
   */
  rekey?: { fromShared: boolean; toShared: boolean; machine: string };
}

/** Bytes moved per read/append when an object is large (packs): bounded memory. */
const CHUNK = 8 * 1024 * 1024;

type Ctx = Pick<StoreContext, 'backend' | 'blobs'>;

const rank = (key: string): number => (key.startsWith('blobs/') ? 0 : key.startsWith('packs/') ? (key.endsWith('.idx') ? 2 : 1) : 3);

export async function copyStore(from: Ctx, to: Ctx, options: CopyStoreOptions = {}): Promise<CopyStoreResult> {
  const progress = options.onProgress ?? (() => {});
  const existing = (await to.backend.list('')).filter((k) => k !== 'store.json');
  if (existing.length > 0) {
    throw new CkptError('INVALID_ARGUMENT', `the destination store is not empty (${existing.length} objects, e.g. ${existing[0]}): copy into a new store`, {
      objects: existing.length,
    });
  }
  return from.backend.withLock(
    GC_LOCK,
    async () => {
      const keys = (await from.backend.list('')).filter((k) => k !== 'store.json');
      const renamed = await workspaceRenames(from, options.rekey);
      const target = (key: string): string => {
        const m = /^workspaces\/([^/]+)\/(.*)$/.exec(key);
        const r = m && renamed.get(m[1]!);
        return r ? `workspaces/${r.id}/${m[2]}` : key;
      };
      keys.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
      const digests = new Map<string, string>();
      let bytes = 0;
      let done = 0;
      for (const key of keys) {
        progress({ phase: 'copy', done: done++, total: keys.length });
        const st = await from.backend.stat(key);
        if (!st) continue; // removed since the listing (a session removed meanwhile)
        const h = createHash('sha256');
        const dest = target(key);
        if (st.size <= CHUNK) {
          let data = await from.backend.read(key);
          if (!data) continue;
          if (dest !== key && key.endsWith('/workspace.json')) data = rewriteWorkspaceJson(data, renamed.get(key.split('/')[1]!)!.machine);
          h.update(data);
          await to.backend.write(dest, data);
          bytes += data.length;
        } else {
          await to.backend.remove(dest);
          for (let off = 0; off < st.size; off += CHUNK) {
            const part = (await from.backend.readRange(key, off, CHUNK)) ?? Buffer.alloc(0);
            if (part.length === 0) break;
            h.update(part);
            await to.backend.append(dest, part);
            bytes += part.length;
          }
        }
        digests.set(dest, h.digest('hex'));
      }
      progress({ phase: 'copy', done, total: keys.length });
      const problems: CopyProblem[] = [];
      done = 0;
      for (const [key, digest] of digests) {
        progress({ phase: 'check', done: done++, total: digests.size });
        const back = await to.backend.read(key);
        const got = back && createHash('sha256').update(back).digest('hex');
        if (got !== digest) problems.push({ kind: 'copy_mismatch', key, message: `${key}: the copy differs from the source` });
      }
      const checked = await verify(to);
      problems.push(...checked.problems);
      return { objects: digests.size, bytes, verified: problems.every((p) => p.kind === 'restore_interrupted'), problems };
    },
    { timeoutMs: 60_000 },
  );
}

/** New ids (and machine) of the workspaces a copy re-keys; see CopyStoreOptions.rekey. */
async function workspaceRenames(from: Ctx, rekey: CopyStoreOptions['rekey']): Promise<Map<string, { id: string; machine?: string }>> {
  const out = new Map<string, { id: string; machine?: string }>();
  if (!rekey || rekey.fromShared === rekey.toShared) return out;
  for (const id of await from.backend.children('workspaces')) {
    const raw = await from.backend.read(`workspaces/${id}/workspace.json`);
    if (!raw) continue;
    let info: { root?: unknown; machine?: unknown };
    try {
      info = JSON.parse(raw.toString('utf8')) as typeof info;
    } catch {
      throw new CkptError('LOG_CORRUPT', `workspaces/${id}/workspace.json is not valid JSON`, { file: `workspaces/${id}/workspace.json` });
    }
    if (typeof info.root !== 'string') continue;
    if (rekey.toShared) out.set(id, { id: workspaceIdOf(info.root, rekey.machine), machine: rekey.machine });
    else if (info.machine === rekey.machine) out.set(id, { id: workspaceIdOf(info.root) });
  }
  return out;
}

function rewriteWorkspaceJson(raw: Buffer, machine: string | undefined): Buffer {
  const { machine: _old, ...rest } = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  return Buffer.from(`${JSON.stringify({ ...rest, ...(machine ? { machine } : {}) })}\n`);
}

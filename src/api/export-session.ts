// Exporting a session's tag from any workspace of the store (issue 33): the session is found by id (or
// a unique prefix) across every workspace — this machine's or another's — and opened read-only: its
// log, the workspace's scan and owner indexes and the blobs are only read; its folder is never touched.
// A tag of a fork made from another workspace's session, at or before its fork point, names a tree of
// that other workspace: it is exported from the original there (the fork's folder never held it).
import type { WorkspaceContext } from '../context.js';
import { CkptError, isCkptError } from '../errors.js';
import { applyExport, planExport, type ExportPlan, type ExportResult } from '../restore/export-tree.js';
import { findSession } from '../session/find-session.js';
import { resolveTagSeq } from '../session/positions.js';
import { createSessionStore } from '../session/session-store.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { Store } from '../store.js';

export interface ExportOptions {
  /** Only look in this workspace (id). */
  workspace?: string;
  /** Return the plan without writing anything. */
  dryRun?: boolean;
}

export type { ExportEntry, ExportPlan, ExportResult } from '../restore/export-tree.js';

/** Materialises tag `tag` of session `ref` into `dir` (new or empty), or only plans it (`dryRun`). */
export async function exportSession(store: Store, ref: string, tag: string, dir: string, options: { workspace?: string; dryRun: true }): Promise<ExportPlan & { workspace: string }>;
export async function exportSession(store: Store, ref: string, tag: string, dir: string, options?: ExportOptions): Promise<ExportResult & { workspace: string }>;
export async function exportSession(store: Store, ref: string, tag: string, dir: string, options: ExportOptions = {}): Promise<(ExportPlan | ExportResult) & { workspace: string }> {
  const { session, workspace } = await treeOwner(store, await findAnywhere(store, ref, options.workspace), tag);
  const plan = await planExport(session, tag);
  if (options.dryRun) return { ...plan, workspace };
  return { ...(await applyExport(session, plan, dir)), workspace };
}

/**
 * The session whose workspace holds the tree `tag` names: the session itself, or — for a tag at or
 * before the fork point of a fork made from another workspace's session — that session, in its
 * workspace (tags up to the fork point name the same events in both), and so on up such forks.
 */
async function treeOwner(store: Store, found: { session: SessionHandle; workspace: string }, tag: string): Promise<{ session: SessionHandle; workspace: string }> {
  for (let seen = 0; seen < 64; seen++) {
    const from = (await found.session.metadata()).forkedFrom;
    if (from?.workspace === undefined || resolveTagSeq(await found.session.events(), tag) > from.seq) return found;
    found = await findAnywhere(store, from.session, from.workspace);
  }
  return found;
}

async function findAnywhere(store: Store, ref: string, only?: string): Promise<{ session: SessionHandle; workspace: string }> {
  const workspaces = (await store.listWorkspaces()).filter((w) => only === undefined || w.id === only);
  if (only !== undefined && workspaces.length === 0) throw new CkptError('NOT_FOUND', `no workspace ${JSON.stringify(only)} in the store ${store.dir}`, { workspace: only });
  const found: { session: SessionHandle; workspace: string }[] = [];
  for (const w of workspaces) {
    const ctx: WorkspaceContext = { ...store.ctx, workspace: { id: w.id, root: w.root, key: `workspaces/${w.id}` } };
    try {
      found.push({ session: await findSession(createSessionStore(ctx), ref), workspace: w.id });
    } catch (err) {
      if (!isCkptError(err, 'SESSION_NOT_FOUND')) throw err;
    }
  }
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw new CkptError('SESSION_NOT_FOUND', `no session ${JSON.stringify(ref)} in any workspace of the store ${store.dir}`, { session: ref });
  throw new CkptError('INVALID_ARGUMENT', `session ${JSON.stringify(ref)} matches sessions in several workspaces; add --workspace WID`, {
    session: ref,
    candidates: found.map((f) => ({ session: f.session.id, workspace: f.workspace })),
  });
}

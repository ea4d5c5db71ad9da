// Recording what a scan found changed (DESIGN §2 "Capture"): before-images — content known only to
// git is copied into ckpt's store first — then ONE capture (tool = the caller's, reason `scan`)
// followed by its settle (after-images) in one session transaction, and the owner records.
import type { WorkspaceContext } from '../context.js';
import type { FileImage } from '../format/event.js';
import { appendCapture } from '../capture/capture.js';
import { recordOwnership } from '../capture/owner-index.js';
import type { SessionHandle } from '../session/session-handle.js';
import { afterCommit } from '../session/warnings.js';
import type { GitIndex } from '../workspace/git-index.js';
import { findGitDirs, readGitBlob } from '../workspace/git-repo.js';
import type { Change } from './scan-compare.js';
import type { ScanChange } from './scan-types.js';

export interface RecordInput {
  session: SessionHandle;
  changes: Change[];
  gitIndex: GitIndex | undefined;
  tool: string;
  /** Where failures of cache writes after the capture was recorded go. */
  warnings: string[];
}

export interface RecordResult {
  tag: string | null;
  seq?: number;
  files: ScanChange[];
  /** Blobs newly written (git content copied into the store). */
  stored: number;
}

export async function recordChanges(input: RecordInput): Promise<RecordResult> {
  const { session, changes, gitIndex } = input;
  const ctx: WorkspaceContext = session.ctx;
  const root = ctx.workspace.root;
  const maxBytes = ctx.options.maxBlobBytes;
  let stored = 0;
  const files: ScanChange[] = [];
  const before: FileImage[] = [];
  const after: FileImage[] = [];
  if (changes.length > 0) {
    changes.sort((a, b) => (a.after.path < b.after.path ? -1 : a.after.path > b.after.path ? 1 : 0));
    const gitDirs = changes.some((c) => c.before.gitOid !== undefined || c.afterGitOid !== undefined) ? (gitIndex?.objectsGitdir ?? findGitDirs(root)?.commondir) : undefined;
    for (const c of changes) {
      let image = c.before.image;
      if (c.before.gitOid !== undefined) {
        const data = gitDirs ? await readGitBlob(gitDirs, c.before.gitOid) : undefined;
        if (data && data.length <= maxBytes) {
          const r = await ctx.blobs.put(data);
          if (r.created) stored++;
          image = { ...image, blob: r.id, bytes: data.length };
        } else {
          image = { path: image.path, state: 'skipped', why: data ? 'too-large' : 'git-object-missing' };
        }
      }
      // An after-state known only as a git blob (a mode-only change of a file matching git's index):
      // its sha256 id is recorded like any other, else the settle would not say what the file holds.
      let now = c.after;
      if (c.afterGitOid !== undefined && now.state === 'file' && now.blob === undefined) {
        if (c.afterGitOid === c.before.gitOid && image.state === 'file' && image.blob) now = { ...now, blob: image.blob };
        else {
          const data = gitDirs ? await readGitBlob(gitDirs, c.afterGitOid) : undefined;
          if (data && data.length <= maxBytes) {
            const r = await ctx.blobs.put(data);
            if (r.created) stored++;
            now = { ...now, blob: r.id };
          }
        }
      }
      before.push(image);
      after.push(now);
      files.push({ ...now, change: c.change });
    }
  }

  let tag: string | null = null;
  let seq: number | undefined;
  if (files.length > 0) {
    const { tool } = input;
    const { event } = await appendCapture(session, before, { tool, reason: 'scan', after, warnings: input.warnings });
    ({ tag, seq } = event);
    await afterCommit(input.warnings, 'owner index not updated', () => recordOwnership(session, after));
  }

  return { tag, ...(seq !== undefined ? { seq } : {}), files, stored };
}

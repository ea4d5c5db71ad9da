// Recording what a scan found changed (DESIGN §2 "Capture"): before-images — content known only to
// git is copied into ckpt's store first, and the scan's pack committed — then ONE capture (tool =
// the caller's, reason `scan`) followed by its settle (after-images, small new content inline) in one
// session transaction, and the owner records.
import type { WorkspaceContext } from '../context.js';
import type { FileImage } from '../format/event.js';
import { appendCapture } from '../capture/capture.js';
import { recordOwnershipAfter } from '../capture/owner-index.js';
import { inlineOf } from '../format/inline-blobs.js';
import type { SessionHandle } from '../session/session-handle.js';
import type { GitObjects } from '../workspace/git-objects.js';
import { copyGitBlobs } from './git-copy.js';
import type { Change } from './scan-compare.js';
import type { ScanPack } from './scan-pack.js';
import type { ScanChange } from './scan-types.js';

export interface RecordInput {
  session: SessionHandle;
  changes: Change[];
  /** Git's object store (made on first use): the before-content of files known by git blob id. */
  gitObjects: () => GitObjects | undefined;
  tool: string;
  /** The scan's pack (the content it read, git blobs copied now): committed here, before the capture. */
  pack: ScanPack;
  /** Where failures of cache writes after the capture was recorded go. */
  warnings: string[];
  /** Content the scan read whose git blob id it knows (store-content.ts gitSeeds): shortens git reads. */
  gitSeeds?: ReadonlyMap<string, Buffer>;
  /** Content read that earlier events record already (stored, or inline in that event): not stored again. */
  recordedBlobs?: ReadonlySet<string>;
}

export interface RecordResult {
  tag: string | null;
  seq?: number;
  files: ScanChange[];
  /** Blobs newly written (git content copied into the store). */
  stored: number;
  /** Paths whose before-content was a git blob that could not be read: recorded `skipped`, reported loudly. */
  lost: { path: string; why: string; bytes?: number }[];
}

/** The before- and after-images of `changes`, in path order: content known only to git copied into the store first. */
export interface ResolvedChanges {
  before: FileImage[];
  after: FileImage[];
  files: ScanChange[];
  stored: number;
  lost: RecordResult['lost'];
}

export async function resolveChanges(input: Pick<RecordInput, 'session' | 'changes' | 'gitObjects' | 'pack' | 'gitSeeds'>): Promise<ResolvedChanges> {
  const { session, changes } = input;
  const ctx: WorkspaceContext = session.ctx;
  const out: ResolvedChanges = { before: [], after: [], files: [], stored: 0, lost: [] };
  const { before, after, files, lost } = out;
  if (changes.length === 0) return out;
  changes.sort((a, b) => (a.after.path < b.after.path ? -1 : a.after.path > b.after.path ? 1 : 0));
  const gitOids = changes.flatMap((c) => (c.before.gitOid !== undefined ? [c.before.gitOid] : []));
  const needsGit = gitOids.length > 0 || changes.some((c) => c.afterGitOid !== undefined);
  const objects = needsGit ? input.gitObjects() : undefined;
  const git = await copyGitBlobs(ctx, objects, gitOids, input.pack, input.gitSeeds);
  out.stored += git.stored;
  for (const c of changes) {
    let image = c.before.image;
    if (c.before.gitOid !== undefined) {
      const copy = git.copied.get(c.before.gitOid);
      if (copy) {
        image = { ...image, blob: copy.blob, bytes: copy.bytes };
      } else {
        // The content before this change lived only in git and is gone: a restore must leave the path
        // alone (never delete it as if it had been absent), and the user must hear about it.
        const data = git.tooLarge.has(c.before.gitOid);
        const why = data ? 'too-large' : 'git-object-missing';
        image = { path: image.path, state: 'skipped', why, ...(image.bytes !== undefined ? { bytes: image.bytes } : {}) };
        lost.push({
          path: image.path,
          why: data ? why : `${why}: git blob ${c.before.gitOid} ${objects ? `is in none of ${objects.dirs.join(', ')}` : 'cannot be read: no git folder found'}`,
          ...(image.bytes !== undefined ? { bytes: image.bytes } : {}),
        });
      }
    }
    // An after-state known only as a git blob (a mode-only change of a file matching git's index):
    // its sha256 id is recorded like any other, else the settle would not say what the file holds.
    let now = c.after;
    if (c.afterGitOid !== undefined && now.state === 'file' && now.blob === undefined) {
      if (c.afterGitOid === c.before.gitOid && image.state === 'file' && image.blob) now = { ...now, blob: image.blob };
      else {
        const data = objects ? await objects.readBlob(c.afterGitOid) : undefined;
        if (data && data.length <= ctx.options.maxBlobBytes) {
          const r = await ctx.blobs.put(data);
          if (r.created) out.stored++;
          now = { ...now, blob: r.id };
        }
      }
    }
    before.push(image);
    after.push(now);
    files.push({ ...now, change: c.change });
  }
  return out;
}

export async function recordChanges(input: RecordInput): Promise<RecordResult> {
  const { session } = input;
  const { before, after, files, stored, lost } = await resolveChanges(input);

  // Every blob of the scan's pack is durable before anything that references it is recorded.
  await input.pack.commit();
  let tag: string | null = null;
  let seq: number | undefined;
  const { loose } = input.pack;
  // Content the settle will not carry (read, but no change of it recorded: the index may name it) is
  // stored now, as a pack's would be — unless an earlier event records it already.
  const afterInline = files.length > 0 ? inlineOf(loose.inline(), after) : undefined;
  await loose.spill((id) => !afterInline?.[id] && !input.recordedBlobs?.has(id));
  if (files.length > 0) {
    const { tool } = input;
    const { event } = await appendCapture(session, before, { tool, reason: 'scan', after, warnings: input.warnings, ...(afterInline ? { afterInline } : {}) });
    ({ tag, seq } = event);
    // As after a settle: the store copy of the content the settle carries, then the owner index (settle.ts).
    await recordOwnershipAfter(session, after, input.warnings, afterInline ? () => loose.spill((id) => afterInline[id] !== undefined) : undefined);
  }

  return { tag, ...(seq !== undefined ? { seq } : {}), files, stored, lost };
}

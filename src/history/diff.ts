// `ckpt diff FROM [TO]` (DESIGN §9): what changed between two points of a session (TO defaults to the
// present workspace). The state of a path at a position is the before-image of its earliest capture
// after that position; paths with no capture between FROM and TO did not change. Line counts and the
// unified patch come from the `diff` package with an edit-length cap and a timeout, so huge inputs
// stay bounded; binary content is reported as binary.
import { join } from 'node:path';
import { formatPatch, structuredPatch } from 'diff';
import type { CaptureEvent, EventBase, FileImage } from '../format/event.js';
import { lookCapture } from '../restore/restore.js';
import { withLookContent, type DiffLook } from './diff-look.js';
import type { BlobStore } from '../storage/blob-store.js';
import { inlineRecords } from '../format/inline-blobs.js';
import { withInlineBlobs } from '../storage/inline-store.js';
import { imagesAt, resolveTagSeq } from '../session/positions.js';
import { isStoredPath } from '../format/stored-path.js';
import { WHY } from '../restore/plan-restore.js';
import { readPresent } from '../restore/present.js';
import { readNoFollow, sha256 } from '../workspace/read-image.js';
import { recordUnlessPresent } from './last-record.js';
import { timelinePosition, type WorkspaceTimeline } from '../session/workspace-timeline.js';

export interface DiffChange {
  path: string;
  status: 'A' | 'M' | 'D';
  added: number;
  removed: number;
  binary?: true;
  /** The line counts were given up on (input too large or too slow to diff). */
  truncated?: true;
  /** Permission bits changed (a file, or a folder, at both ends), as octal strings: `{from: "644", to: "755"}`. */
  mode?: { from: string; to: string };
  /** The kind of entry changed (a symlink became a file, or the reverse). */
  type?: { from: 'file' | 'symlink'; to: 'file' | 'symlink' };
  /**
   * A folder (at both ends for a mode change, else at the end it exists): made (`A`) or removed (`D`)
   * since FROM, or its mode changed (`M`). Its files are paths of their own.
   */
  dir?: true;
  /** A symbolic link at either end: its target there (a link's "content" is its target). */
  link?: { from?: string; to?: string };
  /**
   * The present differs from what ckpt last recorded of the path, and no capture recorded that yet (a
   * hand edit since the last prompt, a killed tool call's write): found by the diff's look (to the present only).
   */
  unrecorded?: true;
}

export interface DiffResult {
  from: string;
  to: string | null;
  changes: DiffChange[];
  /** Paths whose image at either end could not be recorded. */
  skipped: { path: string; why: string }[];
  patch?: string;
}

export interface DiffInput {
  events: readonly EventBase[];
  from: string;
  to?: string;
  blobs: BlobStore;
  root: string;
  maxBytes: number;
  patch?: boolean;
  /**
   * Every session's captures merged into this one's (session/workspace-timeline.ts): the diff then
   * covers what other sessions of the workspace changed in between. Default: this session's only.
   */
  timeline?: WorkspaceTimeline;
  /** What ckpt last recorded of a path (any session's): a past tag's side when no capture follows it (as `cat`). */
  lastRecord?: (rel: string) => Promise<FileImage | undefined>;
  /**
   * To the present only: what changed unrecorded since ckpt last looked (history/diff-look.ts), as a
   * capture after every other — the paths `restore FROM` would put back or refuse although no capture names them.
   */
  look?: DiffLook;
}

const MAX_TEXT_BYTES = 4 * 1024 * 1024;
const DIFF_LIMITS = { maxEditLength: 20_000, timeout: 2_000 };

export async function diffSession(input: DiffInput): Promise<DiffResult> {
  const { events } = input;
  // A capture's content may be inline in its event only (format/inline-blobs.ts).
  const blobs = withLookContent(withInlineBlobs(input.blobs, inlineRecords([...events, ...(input.timeline?.sources ?? [])])), input.look?.content);
  const at = (tag: string) => (input.timeline ? timelinePosition(events, tag) : resolveTagSeq(events, tag));
  const fromSeq = at(input.from);
  const toSeq = input.to === undefined ? Infinity : at(input.to);
  // Symmetric: FROM after TO gives the reverse of `diff TO FROM` (what changes going back).
  const lo = Math.min(fromSeq, toSeq);
  const hi = Math.max(fromSeq, toSeq);
  const recordedCaptures = input.timeline?.captures ?? events.filter((e): e is CaptureEvent => e.type === 'capture');
  const look = input.to === undefined ? input.look : undefined;
  const unrecorded = new Set(look?.files.map((f) => f.path));
  const captures = look ? [...recordedCaptures, lookCapture(look.files)] : recordedCaptures;
  const changed = new Set<string>();
  for (const c of captures) if (c.seq > lo && c.seq <= hi) for (const f of c.files) changed.add(f.path);

  const result: DiffResult = { from: input.from, to: input.to ?? null, changes: [], skipped: [] };
  const patches: string[] = [];
  // The present side is read the way a restore reads it: through real folders only (a captured
  // folder replaced by a symlink to elsewhere is `symlinked-parent`, never followed). Below a folder
  // since replaced by a file nothing can be: absent, as the restore planner takes it (its files `D`);
  // so is a path below a symlink that a capture in range recorded (the restore replaces that link
  // and plans the path back: a preview probe found diff skipping it meanwhile).
  const present = async (path: string): Promise<FileImage> => {
    const now = await readPresent(input.root, path, input.maxBytes);
    if (now.state !== 'skipped' || now.at === undefined) return now;
    return now.why === WHY.parentNotDirectory || changed.has(now.at) ? { path, state: 'absent' } : now;
  };
  const recorded = recordUnlessPresent(events, input.blobs, input.lastRecord);
  const atFrom = fromSeq === Infinity ? new Map<string, FileImage>() : imagesAt(captures, fromSeq);
  const atToMap = toSeq === Infinity ? new Map<string, FileImage>() : imagesAt(captures, toSeq);
  for (const path of [...changed].sort()) {
    if (!isStoredPath(path)) {
      result.skipped.push({ path, why: 'invalid-path' }); // the decoder refuses these; never read
      continue;
    }
    // The state at a position is the earliest image after it; none after it: the path is as ckpt last
    // recorded it — as it is now, unless it changed unrecorded since (then a past tag's side is the
    // record, as `cat` answers; the present side is the present).
    // The present is read (and hashed) once per path, whichever side needs it.
    let now: Promise<FileImage> | undefined;
    const presentOnce = () => (now ??= present(path));
    const since = async (seq: number) => (seq === Infinity ? undefined : await recorded(path, await presentOnce()));
    const fromImage = atFrom.get(path) ?? (await since(fromSeq));
    const toImage = atToMap.get(path) ?? (await since(toSeq));
    const before = fromImage ?? (await presentOnce());
    const after = toImage ?? (await presentOnce());
    const bad = [before, after].find((i) => i.state === 'skipped');
    if (bad) {
      result.skipped.push({ path, why: bad.why ?? 'skipped' });
      continue;
    }
    // A folder has no content, but its permission bits are restored (§10 "Folder modes"): a folder at
    // both ends whose mode changed is `M` with `mode`, as a file's chmod is (a round-6 probe: `diff N`
    // showed nothing where `restore N` and its dry run put a `chmod 700 lib` back). Unknown modes
    // (older records) are never compared.
    if (before.state === 'dir' && after.state === 'dir') {
      if (before.mode !== undefined && after.mode !== undefined && (before.mode & 0o7777) !== (after.mode & 0o7777)) {
        result.changes.push({ path, status: 'M', added: 0, removed: 0, dir: true, mode: { from: formatMode(before.mode), to: formatMode(after.mode) }, ...(unrecorded.has(path) ? { unrecorded: true as const } : {}) });
      }
      continue;
    }
    // A folder made or removed (absent at the other end) is a path the restore deletes or makes — an
    // empty one made by hand, too, which no file of it would show (a probe: `diff N` listed nothing
    // where `restore N --dry-run` planned and refused it).
    if ((before.state === 'dir' && after.state === 'absent') || (before.state === 'absent' && after.state === 'dir')) {
      result.changes.push({ path, status: before.state === 'dir' ? 'D' : 'A', added: 0, removed: 0, dir: true, ...(unrecorded.has(path) ? { unrecorded: true as const } : {}) });
      continue;
    }
    const a = await contentOf(before, blobs, fromImage ? undefined : join(input.root, path));
    const b = await contentOf(after, blobs, toImage ? undefined : join(input.root, path));
    if (a === null || b === null) {
      result.skipped.push({ path, why: 'changed-while-reading' });
      continue;
    }
    if (a === undefined && b === undefined) continue;
    if (a !== undefined && b !== undefined && a.equals(b) && before.state === after.state && before.mode === after.mode) continue;
    const status = a === undefined ? 'A' : b === undefined ? 'D' : 'M';
    const change = lineChange(path, status, a, b);
    const kinds = status === 'M' ? kindChange(before, after) : {};
    const link = before.state === 'symlink' || after.state === 'symlink'
      ? { link: { ...(before.state === 'symlink' ? { from: before.target ?? '' } : {}), ...(after.state === 'symlink' ? { to: after.target ?? '' } : {}) } }
      : {};
    result.changes.push({ ...change.change, ...kinds, ...link, ...(unrecorded.has(path) ? { unrecorded: true as const } : {}) });
    if (input.patch && change.patch) patches.push(withModeLines(change.patch, status === 'M' ? before : undefined, status === 'M' ? after : undefined));
  }
  if (input.patch) result.patch = patches.join('');
  return result;
}

/** Permission bits as written in text and JSON alike: octal, at least three digits (`644`, `4755`). */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(3, '0');
}

/** The mode or type change between two present images of a path (both files or symlinks). */
function kindChange(before: FileImage, after: FileImage): Pick<DiffChange, 'mode' | 'type'> {
  if (before.state !== after.state) return { type: { from: before.state as 'file' | 'symlink', to: after.state as 'file' | 'symlink' } };
  if (before.state === 'file' && before.mode !== undefined && after.mode !== undefined && before.mode !== after.mode) {
    return { mode: { from: formatMode(before.mode), to: formatMode(after.mode) } };
  }
  return {};
}

/** Git's full mode of an image (type bits included), as patches write it. */
function gitMode(image: FileImage): string {
  return image.state === 'symlink' ? '120000' : `100${formatMode(image.mode ?? 0o644).padStart(4, '0').slice(1)}`;
}

/** A modified path's patch gets git's `old mode` / `new mode` lines when its mode or type changed. */
function withModeLines(patch: string, before: FileImage | undefined, after: FileImage | undefined): string {
  if (!before || !after) return patch;
  const a = gitMode(before);
  const b = gitMode(after);
  if (a === b) return patch;
  const cut = patch.indexOf('\n') + 1; // after the `===` separator line
  return `${patch.slice(0, cut)}old mode ${a}\nnew mode ${b}\n${patch.slice(cut)}`;
}

/**
 * Bytes an image stands for (link target text for symlinks), undefined when absent; `disk` reads the
 * present file (no symlink followed) — null when it no longer holds the content its image hashed.
 */
async function contentOf(image: FileImage, blobs: BlobStore, disk: string | undefined): Promise<Buffer | undefined | null> {
  // A folder has no content of its own (its files are paths of their own), as in git.
  if (image.state === 'absent' || image.state === 'dir') return undefined;
  if (image.state === 'symlink') return Buffer.from(`-> ${image.target ?? ''}\n`);
  if (!disk) return blobs.get(image.blob!);
  const data = await readNoFollow(disk).catch(() => null);
  return data && sha256(data) === image.blob ? data : null;
}

function isBinary(data: Buffer | undefined): boolean {
  if (!data) return false;
  return data.length > MAX_TEXT_BYTES || data.subarray(0, 8000).includes(0);
}

function lineChange(path: string, status: DiffChange['status'], a: Buffer | undefined, b: Buffer | undefined): { change: DiffChange; patch?: string } {
  if (isBinary(a) || isBinary(b)) {
    return { change: { path, status, added: 0, removed: 0, binary: true }, patch: `Binary files ${a ? `a/${path}` : '/dev/null'} and ${b ? `b/${path}` : '/dev/null'} differ\n` };
  }
  const oldName = a ? `a/${path}` : '/dev/null';
  const newName = b ? `b/${path}` : '/dev/null';
  const structured = structuredPatch(oldName, newName, a?.toString('utf8') ?? '', b?.toString('utf8') ?? '', undefined, undefined, { ...DIFF_LIMITS, context: 3 });
  if (!structured) return { change: { path, status, added: 0, removed: 0, truncated: true } };
  let added = 0;
  let removed = 0;
  for (const hunk of structured.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++;
      else if (line.startsWith('-')) removed++;
    }
  }
  return { change: { path, status, added, removed }, patch: formatPatch(structured) };
}

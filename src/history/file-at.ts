// A file's content at a tag (DESIGN §2, §6; `ckpt cat`, MCP `read_file`): the image a restore to the
// tag would leave at that path. When a capture after the tag recorded the path, that is the
// before-image of the earliest such capture — this session's or, with the workspace timeline, another
// session's of the same workspace (read from a blob those logs reference — never a blob named by a
// caller, so no other workspace's content can be reached). When none
// did, the path did not change since the tag as far as ckpt knows: the present file — unless it
// changed since ckpt last looked (a hand edit after the last prompt, unscanned: the caller's look,
// as `diff` and the restore make it) or drifted from ckpt's last record of it (any session's: the
// owner index), in which case what ckpt knew before is the answer, as the restore puts it back.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { CkptError } from '../errors.js';
import type { CaptureEvent, EventBase, FileImage, FileState } from '../format/event.js';
import { imagesAt, resolveTagSeq } from '../session/positions.js';
import type { BlobStore } from '../storage/blob-store.js';
import { inlineRecords } from '../format/inline-blobs.js';
import { withInlineBlobs } from '../storage/inline-store.js';
import { readImage } from '../workspace/read-image.js';
import { recordUnlessPresent } from './last-record.js';
import { withLookContent, type DiffLook } from './diff-look.js';
import { lookCapture } from '../restore/restore.js';
import { timelinePosition, type TimelineCapture, type WorkspaceTimeline } from '../session/workspace-timeline.js';
import { resolveBeneath, resolveRecorded } from '../workspace/resolve-path.js';

export interface FileAtTag {
  /** Workspace-relative path. */
  path: string;
  tag: string;
  position: number;
  state: FileState;
  bytes?: number;
  mode?: number;
  /** Link text of a symlink. */
  target?: string;
  /** Why a `skipped` path could not be recorded (or read). */
  why?: string;
  /**
   * `capture`: the before-image of capture `from` (the earliest after the tag);
   * `recorded`: ckpt's last record of the path (the present file differs from it: `drift`);
   * `workspace`: the present file (no capture after the tag touched the path).
   */
  source: 'capture' | 'recorded' | 'workspace';
  /** Tag of the capture the image comes from (source `capture`). */
  from?: string;
  /** That capture is another session's of the workspace (`from` is its tag there). */
  fromSession?: string;
  /** The present file differs from ckpt's last record of it. */
  drift?: true;
  /** The bytes (state `file`). */
  content?: Buffer;
}

export interface FileAtInput {
  events: readonly EventBase[];
  tag: string;
  /** Relative to `cwd` (default: the root), or absolute inside the root. PATH_ESCAPE otherwise. */
  path: string;
  cwd?: string;
  root: string;
  blobs: BlobStore;
  maxBytes: number;
  /** Every session's captures merged into this one's (session/workspace-timeline.ts); default: this session's only. */
  timeline?: WorkspaceTimeline;
  /**
   * The workspace's last record of a path by any session (the owner index): what the present file is
   * compared with when no capture after the tag touched it. Default: this session's own last record,
   * which is stale once another session wrote the path since.
   */
  lastRecord?: (rel: string) => Promise<FileImage | undefined>;
  /**
   * What changed unrecorded since ckpt last looked (history/diff-look.ts), as a capture after every
   * other: a path the workspace only knew from the scan index (a baseline file, a git-tracked one)
   * edited, made or removed by hand since the last prompt is answered as the restore puts it back,
   * not from the present file. Made only for a path no recorded capture after the tag names (a scan
   * walk: a file the agent wrote since is answered without it).
   */
  look?: () => Promise<DiffLook | undefined>;
  /**
   * True for a path the ignore rules leave out (never scanned, so never looked at): with no record of
   * it either, ckpt cannot say the present file is what the tag held (an MCP probe read a git-ignored
   * `.env` at turn 1 and got today's secret, "unchanged since the tag").
   */
  ignored?: (rel: string) => boolean;
}

const BLOB_ID = /^[0-9a-f]{64}$/;

export async function readFileAt(input: FileAtInput): Promise<FileAtTag> {
  const seq = resolveTagSeq(input.events, input.tag);
  const position = input.timeline ? timelinePosition(input.events, input.tag) : seq;
  const { rel } = await resolveRecorded(input.root, input.path, input.cwd ?? input.root);
  const recordedCaptures: TimelineCapture[] = input.timeline?.captures ?? input.events.filter((e): e is CaptureEvent => e.type === 'capture');
  const base = { path: rel, tag: input.tag, position: seq };

  // A capture's or settle's content may be inline in its event only (format/inline-blobs.ts); the
  // look's may be a git blob read for this call only.
  let blobs = withInlineBlobs(input.blobs, inlineRecords([...input.events, ...(input.timeline?.sources ?? [])]));
  let captures = recordedCaptures;
  let captured = imagesAt(captures, position, [rel]).get(rel);
  const look = captured || !input.look ? undefined : await input.look();
  if (look) {
    captures = [...recordedCaptures, lookCapture(look.files)];
    blobs = withLookContent(blobs, look.content);
    captured = imagesAt(captures, position, [rel]).get(rel);
  }
  if (captured) {
    const from = captures.find((c) => c.seq > position && c.files.some((f) => f.path === rel));
    // Only the look names it: what ckpt knew before the path changed unrecorded (as `recorded` below).
    if (from?.seq === Infinity) return { ...base, ...(await fromLog(captured, blobs)), source: 'recorded', drift: true };
    const fromFields = from ? { from: from.tag, ...(from.session !== undefined ? { fromSession: from.session } : {}) } : {};
    return { ...base, ...(await fromLog(captured, blobs)), source: 'capture', ...fromFields };
  }

  // The present, read only beneath the root: a folder replaced by a symlink since may lead out of it (PATH_ESCAPE).
  const { abs } = await resolveBeneath(input.root, rel);
  const present = await readImage(abs, rel, { maxBytes: input.maxBytes });
  const recorded = await recordUnlessPresent(input.events, input.blobs, input.lastRecord)(rel, present);
  if (recorded) return { ...base, ...(await fromLog(recorded, blobs)), source: 'recorded', drift: true };
  if (input.ignored?.(rel) && !(await knownAtAll(input, rel))) return { ...base, state: 'skipped', why: 'ignored', source: 'workspace' };
  return { ...base, ...(await fromDisk(abs, present)), source: 'workspace' };
}

/** Whether any record names `rel`: the workspace's last record (owner index) or one of this session's events. */
async function knownAtAll(input: FileAtInput, rel: string): Promise<boolean> {
  if (await input.lastRecord?.(rel)) return true;
  return input.events.some((e) => (e.type === 'capture' || e.type === 'settle') && (e.files as FileImage[] | undefined)?.some((f) => f.path === rel && f.state !== 'skipped'));
}

/** An image recorded in the log, with its content from the blob store (verified against its id). */
async function fromLog(image: FileImage, blobs: BlobStore): Promise<Omit<FileAtTag, 'path' | 'tag' | 'position' | 'source'>> {
  const out = describe(image);
  if (image.state !== 'file') return out;
  // The id comes from the log, which is untrusted input: it must look like an id before it names a file.
  if (typeof image.blob !== 'string' || !BLOB_ID.test(image.blob)) {
    throw new CkptError('LOG_CORRUPT', `the log records ${image.path} with an invalid blob id`, { path: image.path });
  }
  const content = await blobs.get(image.blob);
  return { ...out, bytes: content.length, content };
}

/** The present file's image; its content is re-read without following symlinks and checked against the hash. */
async function fromDisk(abs: string, image: FileImage): Promise<Omit<FileAtTag, 'path' | 'tag' | 'position' | 'source'>> {
  const out = describe(image);
  if (image.state !== 'file') return out;
  // O_NONBLOCK and the type check: a FIFO or device swapped in since the look is never read (it blocked or never ended).
  const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let content: Buffer;
  try {
    if (!(await handle.stat()).isFile()) throw new CkptError('IO', `${image.path} changed while it was being read; try again`, { path: image.path, retryable: true });
    content = await handle.readFile();
  } finally {
    await handle.close();
  }
  if (createHash('sha256').update(content).digest('hex') !== image.blob) {
    throw new CkptError('IO', `${image.path} changed while it was being read; try again`, { path: image.path, retryable: true });
  }
  return { ...out, content };
}

function describe(image: FileImage): Omit<FileAtTag, 'path' | 'tag' | 'position' | 'source'> {
  return {
    state: image.state,
    ...(image.bytes !== undefined ? { bytes: image.bytes } : {}),
    ...(image.mode !== undefined ? { mode: image.mode } : {}),
    ...(image.target !== undefined ? { target: image.target } : {}),
    ...(image.why !== undefined ? { why: image.why } : {}),
  };
}

// The public `Session`: the low-level handle (log, metadata, transactions) plus every operation a
// caller can run on a session — capture, settle, turn, scan, log, diff, restore, undo, rewind. This is
// the one place that composes the operation modules; they themselves take only a SessionHandle.
import { SessionHandle } from '../session/session-handle.js';
import { workspaceTimeline } from '../session/workspace-timeline.js';
import { capture, type CaptureOptions, type CaptureResult } from '../capture/capture.js';
import { settle, settleInFlight, type SettleOptions, type SettleResult } from '../capture/settle.js';
import { startTurn, type TurnOptions } from '../capture/turn.js';
import { ownerImage, readOwners } from '../capture/owner-index.js';
import { CHECKPOINT_LIST_TYPES, listCheckpoints, type CheckpointEntry } from '../history/log.js';
import { sessionLinks, type SessionLinks } from '../history/links.js';
import { diffSession, type DiffResult } from '../history/diff.js';
import { createIgnoreRules } from '../workspace/ignore-rules.js';
import { diffLook } from '../history/diff-look.js';
import { conflictsIn, ownerOf, type ConflictEntry, type OwnerReport } from '../history/conflicts.js';
import { describeTag, type TagInfo } from '../history/show.js';
import { readFileAt, type FileAtTag } from '../history/file-at.js';
import { sessionStatus, type SessionStatus, type StatusOptions } from '../history/status.js';
import { scan, type ScanOptions, type ScanResult } from '../scan/index.js';
import { hasBaseline } from '../scan/baseline.js';
import { scanIndexTime } from '../scan/scan-persist.js';
import { OUTSIDE_TOOL } from '../format/event.js';
import {
  appendConversation,
  liveConversation,
  messageTags,
  planCompaction,
  recordCompaction,
  type AppendOptions,
  type AppendResult,
  type CompactionOptions,
  type CompactionPlan,
  type MessageTag,
  type RecordCompactionOptions,
} from '../conversation/index.js';
import type { EventBase, NewEvent } from '../format/event.js';
import { CkptError } from '../errors.js';
import { exportBlobs, planExport } from '../restore/export-tree.js';
import { restore, rewind, undoPath, type RestoreOptions, type RestoreResult, type RewindOptions, type RewindResult } from '../restore/index.js';

export interface TurnStartOptions extends TurnOptions {
  /**
   * The turn-start scan (default: in this process). `false`: none (the caller recorded what changed
   * outside the agent itself); a function: runs it instead (a daemon's watched scan), given the tool
   * name to record (`OUTSIDE_TOOL`). Only when the workspace has a scan baseline: without one, ckpt
   * never looked, so nothing can have changed since.
   */
  scan?: boolean | ((tool: string) => Promise<ScanResult>);
}

export interface TurnResult {
  turn: number;
  tag: string;
  seq: number;
  /** What changed outside the agent since ckpt last looked, recorded just before the turn (tool `user`). */
  outside?: { tag: string; files: number };
  warnings?: string[];
}

export class Session extends SessionHandle {
  /**
   * WRONG_MACHINE for what touches or reads the workspace folder when the workspace is another
   * machine's (a shared store): from here only its records are read (issue 33).
   */
  private here(what: string): void {
    const w = this.ctx.workspace;
    if (!w.foreign) return;
    throw new CkptError(
      'WRONG_MACHINE',
      `${what} works on the workspace folder, which is on machine ${w.machine ?? '(unknown)'} (${w.root}); run it there, or use ckpt export to materialise a tag here`,
      { workspace: w.id, machine: w.machine ?? null, root: w.root },
    );
  }

  /**
   * Starts the next turn (the user sent a message); returns its number and tag. First records what
   * changed outside the agent since ckpt last looked (a scan whose capture has tool `user` and lies
   * before the turn event), so restoring to the turn's tag gives exactly the workspace of that moment.
   */
  async turn(options: TurnStartOptions = {}): Promise<TurnResult> {
    this.here('a turn');
    const { scan: how = true, ...turnOptions } = options;
    let outside: ScanResult | undefined;
    if (how !== false && this.ctx.options.captureEnabled && (await hasBaseline(this))) {
      outside = typeof how === 'function' ? await how(OUTSIDE_TOOL) : await scan(this, { tool: OUTSIDE_TOOL });
    }
    const r = await startTurn(this, { ...turnOptions, ...(outside && !outside.truncated ? { looked: true as const } : {}) });
    const warnings = [...(outside?.warnings ?? []), ...(r.warnings ?? [])];
    return {
      turn: r.turn,
      tag: r.tag,
      seq: r.seq,
      ...(outside?.tag ? { outside: { tag: outside.tag, files: outside.files.length } } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }

  /** Records the before-images of paths a tool is about to change; durable when it returns. */
  capture(paths: readonly string[], options?: CaptureOptions): Promise<CaptureResult> {
    this.here('a capture');
    // A path this session never recorded changed since the turn began: the user's change (an edit of a
    // file ckpt knew from the baseline or another session, or a file made by hand), recorded first by
    // a scan of those paths only — or the full scan where that one cannot answer exactly (DESIGN
    // "Hand edits during a turn"), which then rewrites the scan index: it declined mostly for folders
    // the index did not hold yet, and the next look there is a path scan again.
    return capture(this, paths, options, {
      look: async (look) => {
        if (!(await hasBaseline(this))) return;
        await scan(this, { tool: OUTSIDE_TOOL, changedPaths: async () => new Set(look.paths), knownFilesIn: look.folders, leaveOut: look.inFlight, rewriteIndex: 'always' });
      },
      lastLookMs: () => scanIndexTime(this),
    });
  }

  /** Records the after-state of paths a tool has written (default tag: the last capture). */
  settle(paths: readonly string[], options?: SettleOptions): Promise<SettleResult> {
    this.here('a settle');
    return settle(this, paths, options);
  }

  /**
   * Settles every path still in flight (captured, never settled) as it is now, under its capture; returns
   * the settles' tags. Only when every tool call of the session has ended (an agent's end of turn that
   * comes after all of them): a call that failed without an after-tool event.
   */
  settleInFlight(): Promise<string[]> {
    this.here('a settle');
    return settleInFlight(this);
  }

  /** Records what changed in the workspace since ckpt last looked (shell side effects) as one capture. */
  scan(options: ScanOptions & { watchedOnly: true }): Promise<ScanResult | undefined>;
  scan(options?: ScanOptions): Promise<ScanResult>;
  scan(options?: ScanOptions): Promise<ScanResult | undefined> {
    this.here('a scan');
    return scan(this, options);
  }

  /** Restores the workspace (or `options.paths`) to `tag`; the result's `undo` tag undoes it. */
  restore(tag: string, options?: RestoreOptions): Promise<RestoreResult> {
    this.here('a restore');
    return restore(this, tag, options);
  }

  /** Restores one path to `tag`. */
  undo(tag: string, path: string, options?: Omit<RestoreOptions, 'paths'>): Promise<RestoreResult> {
    this.here('an undo');
    return undoPath(this, tag, path, options);
  }

  /** Restores to `tag` and moves the conversation back (or forks there with `fork`). */
  rewind(tag: string, options?: RewindOptions): Promise<RewindResult> {
    this.here('a rewind');
    return rewind(this, tag, options);
  }

  /** Every checkpoint (capture) of the session, in order. */
  async checkpoints(): Promise<CheckpointEntry[]> {
    // Only the types it looks at are kept: a long session is mostly conversation, and holding all of
    // it decoded cost a replay about as much as parsing it (the garbage collector's copying).
    return listCheckpoints(await this.log.read({ types: CHECKPOINT_LIST_TYPES }));
  }

  /** Where this session's history continues from: a `/clear`'s previous session, a fork's parent and point. */
  async links(): Promise<SessionLinks> {
    return sessionLinks(this, await this.events());
  }

  /** Changes between two tags, or from a tag to the present workspace. */
  async diff(from: string, to?: string, options: { patch?: boolean } = {}): Promise<DiffResult> {
    if (to === undefined) this.here('a diff against the present files');
    const history = await this.history();
    // To the present: what changed unrecorded since ckpt last looked is listed, as `restore FROM` plans it (a read: nothing written).
    const look = to === undefined ? await diffLook(this, history.events, history.timeline, from) : undefined;
    return diffSession({ ...history, from, to, patch: options.patch, ...(look ? { look } : {}) });
  }

  /** What diff and readFile read: the session's events over the workspace's timeline, its blobs and root. */
  private async history() {
    const events = await this.events();
    // The last record of a path is any session's (another may have written it since this one did).
    const lastRecord = async (rel: string) => {
      const o = (await readOwners(this))[rel];
      return o ? ownerImage(rel, o) : undefined;
    };
    return { events, timeline: await workspaceTimeline(this, events), root: this.workspaceRoot, blobs: this.ctx.blobs, maxBytes: this.ctx.options.maxBlobBytes, lastRecord };
  }

  /** Where the session stands: turn, unsettled captures, paths changed since ckpt last recorded them. Read-only. */
  status(options?: StatusOptions): Promise<SessionStatus> {
    this.here('status');
    return sessionStatus(this, options);
  }

  /** Appends conversation events (messages, tool calls, …) in one batch; `unlessExists` skips ids already logged. */
  record(events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    return appendConversation(this, events, options);
  }

  /** The live conversation: after rewinds (what they went back past is hidden) and compactions (summaries). */
  async conversation(): Promise<EventBase[]> {
    return liveConversation(await this.events());
  }

  /** Which live entries a compaction would summarise and which it would keep. */
  async planCompaction(options?: CompactionOptions): Promise<CompactionPlan> {
    return planCompaction(await this.events(), options);
  }

  /** Records a compaction: the summary replaces the planned entries when the conversation is replayed. */
  compact(options: RecordCompactionOptions): Promise<EventBase> {
    return recordCompaction(this, options);
  }

  /** Live conversation events that carry an id, with the tags just before and after each. */
  async messageTags(): Promise<MessageTag[]> {
    return messageTags(await this.events());
  }

  /** Conflicts this session recorded (paths another session wrote since this one recorded them). */
  async conflicts(): Promise<ConflictEntry[]> {
    return conflictsIn(this.id, await this.events());
  }

  /** Which session of the workspace last wrote `path`. */
  owner(path: string, options: { cwd?: string } = {}): Promise<OwnerReport> {
    return ownerOf(this, path, options.cwd);
  }

  /** What `tag` names: its position, turn (with the user's text), and the checkpoint right after it. */
  async show(tag: string): Promise<TagInfo> {
    return describeTag(await this.events(), tag);
  }

  /**
   * A file as it was at `tag` (what a restore to the tag would leave there). Only blobs this session's
   * log references are read; `path` must resolve beneath the workspace root (PATH_ESCAPE otherwise).
   */
  async readFile(tag: string, path: string, options: { cwd?: string } = {}): Promise<FileAtTag> {
    if (this.ctx.workspace.foreign) return this.readRecordedFile(tag, path);
    const history = await this.history();
    // A path changed by hand since the last prompt, never scanned: the restore's look puts back what ckpt
    // knew before, so cat answers that, not the present file (a read: nothing written, as diff's look).
    const look = () => diffLook(this, history.events, history.timeline, tag);
    const ignored = (rel: string) => createIgnoreRules({ root: this.workspaceRoot, storeDir: this.ctx.dir }).isIgnoredPath(rel);
    return readFileAt({ ...history, tag, path, cwd: options.cwd, look, ignored });
  }

  /** `readFile` of another machine's workspace: what ckpt recorded of the path at the tag (as `export` writes it). */
  private async readRecordedFile(tag: string, path: string): Promise<FileAtTag> {
    const plan = await planExport(this, tag);
    const entry = plan.entries.find((e) => e.path === path);
    const base = { path, tag, position: plan.position, source: 'recorded' as const };
    if (!entry) {
      const why = plan.skipped.find((e) => e.path === path)?.why;
      return why ? { ...base, state: 'skipped', why } : { ...base, state: 'absent' };
    }
    if (entry.state !== 'file') return { ...base, state: entry.state, ...(entry.target !== undefined ? { target: entry.target } : {}) };
    if (!entry.blob) return { ...base, state: 'skipped', why: 'git-object-missing' };
    const content = await (await exportBlobs(this)).get(entry.blob);
    return { ...base, state: 'file', bytes: content.length, ...(entry.mode !== undefined ? { mode: entry.mode } : {}), content };
  }
}

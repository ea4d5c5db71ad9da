// The public library API of ckpt. Adapters (CLI, MCP, HTTP, hooks) use only what is exported here.
//
//   const store = await openStore({ dir });            // default: $CKPT_HOME, XDG data dir, ~/.local/share/ckpt
//   const ws = await store.openWorkspace('/path/to/project');
//   const session = await ws.create({ title: 'fix the parser' });
//   await session.turn({ messageCount: 1 });
//   await session.capture(['src/parser.ts'], { tool: 'Edit' });   // before the tool writes
//   await session.settle(['src/parser.ts']);                      // after it wrote
//   await session.diff('1');                                      // what turn 1 changed so far
//   await session.scan({ tool: 'Bash' });                          // after a shell command
//   const result = await session.restore('1');                   // undo turn 1; result.undo undoes the restore

export { openStore, defaultStoreDir, storeLocation, sharedDaemonDir, type OpenStoreOptions, type Store, type Workspace, type AgentSessionResult, type WorkspaceForkOptions, type WorkspaceInfo } from './store.js';
export { isSharedStoreUrl, redactUrl } from './storage/shared/store-url.js';
export { storeSecret } from './storage/store-secret.js';
export { machineId } from './workspace/machine-id.js';
export type { AppendEvent, AppendListener } from './storage/shared/shared-notify.js';
export { CkptError, ERROR_CODES, exitCodeOf, httpStatusOf, invalidValue, isCkptError, toCkptError, type ErrorCode } from './errors.js';
export { Session } from './api/session.js';
export { SessionHandle } from './session/session-handle.js';
export { createAfterCallQueue } from './session/after-call.js';
export { findSession } from './session/find-session.js';
export { sessionIdTail, shortSessionId } from './session/session-id.js';
export { locateWorkspace, type LocatedWorkspace } from './locate-workspace.js';
export type { RecoveredRestore } from './context.js';
export type { SessionMetadata } from './session/metadata.js';
export type { CreateSessionOptions, ForkOptions, SessionFilter, SessionTreeNode } from './session/session-store.js';
export { SESSION_INFO_FIELDS, type SessionInfo, type SessionInfoField, type SessionInfoPatch } from './session/session-info.js';
export { parseTag, formatTag, compareTags, isTag, type Tag } from './format/tag.js';
export { parseSize } from './format/size.js';
export { pathText } from './format/path-text.js';
export { resolveTagSeq } from './session/positions.js';
export type { EventBase, FileImage, FileState, NewEvent, CaptureEvent } from './format/event.js';
export type { CaptureOptions, CaptureResult, ConflictRef } from './capture/capture.js';
export { workspaceConflicts, type ConflictEntry, type OwnerReport } from './history/conflicts.js';
export type { SettleResult, SettleOptions } from './capture/settle.js';
export type { TurnOptions } from './capture/turn.js';
export type { TurnStartOptions, TurnResult } from './api/session.js';
export { listCheckpoints, listTurns, listRewinds, listLifecycle, earliestRestorableTag, type CheckpointEntry, type TurnEntry, type RewindEntry, type LifecycleEntry } from './history/log.js';
export type { SessionLinks } from './history/links.js';
export { formatLog, type LogStyle, type LogTextOptions, type LogEntries } from './history/log-text.js';
export { formatShow, type ShowStyle, type ShowTextOptions } from './history/show-text.js';
export { relativeTime, localTime } from './history/relative-time.js';
export { formatMode, type DiffChange, type DiffResult } from './history/diff.js';
export { sessionStatus, type SessionStatus, type StatusOptions } from './history/status.js';
export type { TagInfo, TagTurn, CheckpointDetail } from './history/show.js';
export type { FileAtTag } from './history/file-at.js';
export type { ScanOptions, ScanResult, ScanChange } from './scan/index.js';
export { scan } from './scan/index.js';
export { hasBaseline, ensureBaseline } from './scan/baseline.js';
export { catchUpOwners, catchUpOwnersOnce } from './capture/owner-index.js';
export { agentSessionId, hookRecordedBy, type AgentLink } from './session/agent-link.js';
export { restore, undoPath, rewind, planRestore, planDigest, recoverSession } from './restore/index.js';
export { exportSession, type ExportOptions, type ExportEntry, type ExportPlan, type ExportResult } from './api/export-session.js';
export { appendConversation, liveConversation, liveConversation as liveEvents, hiddenByRewind, messageTags, planCompaction, recordCompaction } from './conversation/index.js';
export type { AppendOptions, AppendResult, CompactionOptions, CompactionPlan, EventRef, MessageTag, RecordCompactionOptions } from './conversation/index.js';
export { CHECKPOINT_EVENT_TYPES, OUTSIDE_TOOL } from './format/event.js';
export type { RestoreOptions, CheckPlan, PlanSnapshot, RestoreResult, RestorePlan, RewindOptions, RewindResult, Watermark } from './restore/index.js';
export { runGc, planGc, applyGc, gcSummary, takeInventory, describeGcPlan, formatBytes, prune, resolveRetention, verify, sessionSize, storeStats, parseDuration } from './gc/index.js';
export { copyStore, type CopyProblem, type CopyStoreResult } from './gc/index.js';
export type { GcPlan, GcResult, GcSummary, PruneOptions, PruneResult, RetentionPolicy, VerifyResult, VerifyProblem, SizeReport, StoreStats } from './gc/index.js';
export { daemonToken, runningDaemon, claimDaemon, assertNoDaemon, lastDaemonPort, owerId, type DaemonInfo } from './daemon/daemon-files.js';
export { createLogFeed, type FeedEvent, type LogFeed, type LogFeedOptions } from './daemon/log-feed.js';
export { createTouchTracker, type TouchTracker, type TouchTrackerOptions } from './daemon/touch-tracker.js';
export { scanViaDaemon, type DaemonScanResult } from './daemon/daemon-scan.js';
export { hookKey, hookCredential, checkHookCredential, isHookCredential, mentionsHookCredential } from './daemon/hook-credential.js';
export { publicScanResult, scanResultOf, type PublicScanResult } from './scan/scan-json.js';
export { publicImage, type PublicImage } from './format/public-image.js';

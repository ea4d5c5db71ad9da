// Retention, garbage collection, verify and size reports: the public surface (DESIGN §3, §5, §9).
export { parseDuration, formatDuration } from '../format/duration.js';
export { collectLiveSet, refsOfEvents, type LiveSet, type LogRefs, type SessionRefs } from './live-set.js';
export { takeInventory, planGc, describeGcPlan, formatBytes, DEFAULT_GRACE_MS } from './plan-gc.js';
export type { GcInventory, GcOptions, GcPlan, LooseCandidate, PackCandidate } from './plan-gc.js';
export { applyGc, runGc, GC_LOCK, type ApplyGcOptions, type GcProgress, type GcResult, type RunGcOptions } from './apply-gc.js';
export { gcSummary, type GcSummary, type GcSummaryOptions } from './gc-summary.js';
export type { OrphanFile, OrphanKind } from './orphans.js';
export { prune, type PruneResult } from './prune.js';
export { prunePoint, pruneEvent, retentionEvent, resolveRetention, DEFAULT_RETENTION, type PruneOptions } from '../session/retention.js';
export type { RetentionPolicy } from '../context.js';
export { verify, type VerifyOptions, type VerifyProblem, type VerifyResult } from './verify.js';
export { sessionSize, storeStats, recordedSizes, type SessionSize, type SizeReport, type StoreStats, type WorkspaceSize } from './stats.js';
export { copyStore, type CopyProblem, type CopyStoreOptions, type CopyStoreResult } from './copy-store.js';

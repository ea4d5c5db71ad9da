// The restore engine's public surface (DESIGN §2, §4, §8): plan (pure), restore (journaled apply),
// per-file undo, rewind (optionally as a fork), recovery of interrupted restores.
export { planRestore, candidatePaths, summarizePlan, WHY } from './plan-restore.js';
export type { PlannedEntry, PlanRestoreInput, RestorePlan, SkippedPath } from './plan-restore.js';
export { applyRestore, type ApplyRestoreOptions, type RestoreResult } from './apply-restore.js';
export { restore, type RestoreOptions, type CheckPlan, type PlanSnapshot } from './restore.js';
export { planDigest } from './plan-digest.js';
export { undoPath, type UndoPathOptions } from './undo.js';
export { rewind, watermarkAt } from './rewind.js';
export type { RewindOptions, RewindResult, Watermark } from './rewind.js';
export { recoverSession, recoverInTx, pendingRecovery, type RecoveryReport } from './recover.js';
export { readPresentImages } from './present.js';

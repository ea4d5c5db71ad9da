// Per-file undo (DESIGN §9 `ckpt undo TAG PATH`): the restore engine restricted to one path — same
// plan rule, same drift gate, same journal and recovery capture, same result shape.
import type { SessionHandle } from '../session/session-handle.js';
import type { RestoreResult } from './apply-restore.js';
import { restore, type RestoreOptions } from './restore.js';

/** The restore options but the path filter (`cwd`: folder a relative `path` is resolved from). */
export type UndoPathOptions = Omit<RestoreOptions, 'paths'>;

/** Restores `path` (a file; a folder restores what lies beneath it) to its state at `tag`. */
export function undoPath(session: SessionHandle, tag: string, path: string, options: UndoPathOptions = {}): Promise<RestoreResult> {
  return restore(session, tag, { ...options, paths: [path] });
}

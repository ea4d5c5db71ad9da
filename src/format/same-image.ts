// Whether two file images describe the same state (pure: format layer, so that every layer that
// compares records — the session timeline included — uses one rule).
import type { FileImage } from './event.js';

/** True when two images describe the same content (state, bytes hash, mode, link target). */
export function sameImage(a: FileImage | undefined, b: FileImage | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.state !== b.state) return false;
  if (a.state === 'file') return a.blob === b.blob && a.mode === b.mode;
  if (a.state === 'symlink') return a.target === b.target;
  // A folder's mode is compared only when both sides know it (records before issue 26 have none).
  if (a.state === 'dir') return a.mode === undefined || b.mode === undefined || a.mode === b.mode;
  return a.state === 'absent';
}

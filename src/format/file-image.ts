// The recorded image of one workspace path and one step of a restore plan (DESIGN §3): the types the
// event records and the stored-path checks share (a file of its own, so neither imports the other).
/**
 * The state of one path in a capture (before-image) or a settle/scan (after-state). `dir`: a folder
 * (its content is recorded path by path; the folder's own image only says that it exists).
 */
export type FileState = 'file' | 'symlink' | 'dir' | 'absent' | 'skipped';

/** One captured path. `blob` is the sha256 of the content (state `file`); `target` the link text (`symlink`). */
export interface FileImage {
  path: string;
  state: FileState;
  blob?: string;
  bytes?: number;
  mode?: number;
  target?: string;
  /** Why a path is `skipped` (e.g. `too-large`, `unreadable`, `not-regular`). */
  why?: string;
  /**
   * For `absent` images of a tool capture: how many of the path's ancestor folders did not exist
   * either (0 or missing: the parent existed). Planning reads it as `absent` images of those folders
   * (scans record folders explicitly instead).
   */
  newDirs?: number;
}

export interface RestorePlanEntry {
  path: string;
  /** `mkdir`: a folder must exist there; `delete` removes a file, a symlink or an empty folder. */
  action: 'write' | 'symlink' | 'mkdir' | 'delete';
  blob?: string;
  /** Size of a `write`'s content (recorded so what the restore leaves is a full image). */
  bytes?: number;
  mode?: number;
  target?: string;
}

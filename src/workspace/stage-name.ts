// The names of a restore's staging files (`.<name>.ckpt-stage-<restoreId>-<index>`, restore/stage.ts):
// defined here, below the restore layer, because the ignore rules need them too — a staging file is
// ckpt's own transient file, never workspace content a scan records (issue 16, found by the soak).
export const STAGE_MARK = '.ckpt-stage-';

/** True for any staging file name (any restore). */
export function isStageName(name: string): boolean {
  return name.startsWith('.') && name.includes(STAGE_MARK);
}

// Modes of the files `ckpt init` writes and re-points (SECURITY.md, DESIGN §10 "Security"): an agent
// runs hooks (or plugin code) from them, so a file ckpt creates is never writable by group or others
// whatever the umask, and a file carrying a hook credential is readable by its owner only — the
// credential lets whoever holds it record into the workspace.
import { mentionsHookCredential } from '../../index.js';

/** Folders made for a settings file (the umask may take more away). */
export const SETTINGS_DIR_MODE = 0o755;

/** The mode to write `text` with: a new file's 0644, an existing file's own; group and other bits off when it holds a credential. */
export function settingsMode(text: string, existing: number | undefined): number {
  const mode = existing ?? 0o644;
  return mentionsHookCredential(text) ? mode & 0o700 : mode;
}

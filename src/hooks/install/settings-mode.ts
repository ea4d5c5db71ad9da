// Writing the files `ckpt init` installs and the daemon re-points (SECURITY.md, DESIGN §10
// "Security"): an agent runs hooks (or plugin code) from them, so a file ckpt creates is never
// writable by group or others whatever the umask, and a file carrying a hook credential is readable
// by its owner only — the credential lets whoever holds it record into the workspace.
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { mentionsHookCredential } from '../../index.js';

/** Folders made for a settings file (the umask may take more away). */
const SETTINGS_DIR_MODE = 0o755;

/** The mode to write `text` with: a new file's 0644, an existing file's own; group and other bits off when it holds a credential. */
function settingsMode(text: string, existing: number | undefined): number {
  const mode = existing ?? 0o644;
  return mentionsHookCredential(text) ? mode & 0o700 : mode;
}

/** Writes `text` to `file` atomically (fsynced) with its mode as above; `existed`: the file is there now (its folders too). */
export async function writeSettings(file: string, text: string, existed: boolean): Promise<void> {
  if (!existed) await mkdir(dirname(file), { recursive: true, mode: SETTINGS_DIR_MODE });
  const mode = settingsMode(text, existed ? (await stat(file)).mode & 0o777 : undefined);
  await writeFileAtomic(file, text, { fsync: true, mode });
}

// Placing a staged restore (DESIGN §4 step 4), after the point of no return: rename each staged file
// or link over its target, unlink deleted paths, remove the folders that did not exist at the target
// (`newDirs`) once empty, and fsync every touched folder. Idempotent, so recovery after a crash runs
// exactly this again: an already-renamed entry is simply re-placed, an already-absent path is fine.
import { lstat, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PlannedEntry, SkippedPath } from './plan-restore.js';
import { WHY } from './plan-restore.js';
import { checkParentChain, fsyncDir } from './present.js';

export interface PlaceOutcome {
  restored: string[];
  deleted: string[];
  /** Entries whose parent chain became a symlink/file since the plan: not touched. */
  skipped: SkippedPath[];
}

/**
 * Places `entries`; `staged[i]` is the staging path of entry i (undefined for deletes, or when the
 * entry could not be staged — it is then reported as skipped).
 */
export async function placeEntries(root: string, entries: readonly PlannedEntry[], staged: readonly (string | undefined)[]): Promise<PlaceOutcome> {
  const out: PlaceOutcome = { restored: [], deleted: [], skipped: [] };
  const touched = new Set<string>();
  const emptied: string[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    try {
      await placeOne(root, entry, staged[i], out, touched, emptied);
    } catch (err) {
      // Past the point of no return an I/O failure on one path must not strand the others: it is
      // reported, and the recovery capture still holds what was there.
      if (staged[i]) await rm(staged[i]!, { force: true }).catch(() => {});
      out.skipped.push({ path: entry.path, why: `io: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
    }
  }
  // Deepest first, so a parent emptied by removing its child goes too.
  for (const dir of [...new Set(emptied)].sort((a, b) => b.split('/').length - a.split('/').length)) {
    try {
      await rmdir(join(root, dir));
      touched.add(dirname(join(root, dir)));
    } catch {
      // not empty (someone's files live there) or already gone: left alone
    }
  }
  for (const dir of touched) await fsyncDir(dir);
  return out;
}

async function placeOne(
  root: string,
  entry: PlannedEntry,
  stagedPath: string | undefined,
  out: PlaceOutcome,
  touched: Set<string>,
  emptied: string[],
): Promise<void> {
  const abs = join(root, entry.path);
  // lstat the real parent chain right before acting: a symlink that replaced a folder since the
  // plan is never written through (a symlink that replaced the target itself is just replaced).
  const chain = await checkParentChain(root, entry.path);
  if (!chain.ok) {
    if (stagedPath) await rm(stagedPath, { force: true });
    out.skipped.push({ path: entry.path, why: chain.why });
    return;
  }
  if (entry.action === 'delete') {
    if (chain.missing.length === 0 && (await isDirectory(abs))) {
      out.skipped.push({ path: entry.path, why: 'present-unrecoverable: directory' });
      return;
    }
    if (chain.missing.length === 0) await removeEntry(abs);
    touched.add(dirname(abs));
    out.deleted.push(entry.path);
    for (let d = dirname(entry.path), n = entry.newDirs ?? 0; n > 0 && d !== '.'; d = dirname(d), n--) emptied.push(d);
    return;
  }
  if (!stagedPath) {
    out.skipped.push({ path: entry.path, why: chain.missing.length > 0 ? 'parent-missing' : WHY.parentNotDirectory });
    return;
  }
  if (await isDirectory(abs)) {
    // A folder appeared where the file goes: never removed wholesale.
    await rm(stagedPath, { force: true });
    out.skipped.push({ path: entry.path, why: 'present-unrecoverable: directory' });
    return;
  }
  await rename(stagedPath, abs);
  touched.add(dirname(abs));
  out.restored.push(entry.path);
}

/** Unlinks a file or symlink (never followed); a missing path is fine. */
async function removeEntry(abs: string): Promise<void> {
  try {
    await unlink(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    throw err;
  }
}

async function isDirectory(abs: string): Promise<boolean> {
  try {
    return (await lstat(abs)).isDirectory();
  } catch {
    return false;
  }
}

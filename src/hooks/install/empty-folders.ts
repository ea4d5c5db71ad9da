// After `ckpt init <agent> --uninstall` removed ckpt's settings file: the folders of its path
// (`.claude/`, `.github/hooks/`, `.opencode/plugins/`…) that are now empty go too, deepest first —
// init made them for that file (writeSettings' mkdir), and an empty `.claude/` left behind is clutter
// that tells the agent nothing. Which folders init made is not recorded anywhere (a marker would be
// clutter of its own), so "empty now" is the test: an empty folder holds nothing to lose, and git does
// not track one, so a user's empty folder that predates init is removed too (DESIGN §10). Safe by
// construction: only folders named by the settings path below the scope's base (the project, the home
// folder; never the base itself, never `~/.config`, which many programs share), none when any of them
// is a symlink or not a folder, and `rmdir`, which removes only an empty folder and never follows a
// symlink — a folder that holds anything else stays, as do all above it.
import { lstat, readdir, rmdir } from 'node:fs/promises';
import { basename, join, posix } from 'node:path';

/** Folders shared with other programs that an uninstall never removes, even empty (relative to the base). */
const SHARED = new Set(['.config']);

/**
 * Removes (or, on a dry run, names) the folders of `rel` (the settings file's path below `base`) left
 * empty once the file itself is gone, deepest first. Returns the absolute paths, outermost last.
 */
export async function removeEmptyFolders(base: string, rel: string, dryRun: boolean): Promise<string[]> {
  const folders: string[] = []; // deepest first, relative to base
  for (let d = posix.dirname(rel); d !== '.' && d !== '/' && d !== ''; d = posix.dirname(d)) {
    if (!SHARED.has(d)) folders.push(d);
  }
  // Every folder on the path a real folder (lstat: a symlink is not followed, nor is one above).
  for (const d of [...folders].reverse()) {
    const st = await lstat(join(base, d)).catch(() => undefined);
    if (!st?.isDirectory()) return [];
  }
  const removed: string[] = [];
  let gone = posix.basename(rel); // the entry already gone (or that would be, on a dry run)
  for (const d of folders) {
    const dir = join(base, d);
    if (dryRun) {
      const names = await readdir(dir).catch(() => undefined);
      if (!names || names.some((n) => n !== gone)) break;
    } else {
      try {
        await rmdir(dir); // ENOTEMPTY: it holds something else; it and every folder above it stay
      } catch {
        break;
      }
    }
    removed.push(dir);
    gone = basename(dir);
  }
  return removed;
}

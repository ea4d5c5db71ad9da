// Writes that follow a commit point (DESIGN §4, §10 "Durability"): once the log holds an event, the
// operation has happened. Caches written afterwards — metadata.json, the owner index, the scan index —
// and the closing record of a restore whose workspace changes are done can fail (disk full) without
// undoing that; such a failure is returned as a warning in the result, never as the command's error.
import { toCkptError } from '../errors.js';

/** Runs `write`; a failure is appended to `warnings` (naming `what`) instead of thrown. */
export async function afterCommit(warnings: string[] | undefined, what: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    warnings?.push(`${what}: ${toCkptError(err).message}`);
  }
}

/** `result` with a `warnings` list when there are any (the field is absent otherwise). */
export function withWarnings<T extends object>(result: T, warnings: readonly string[]): T & { warnings?: string[] } {
  return warnings.length > 0 ? { ...result, warnings: [...warnings] } : result;
}

// ckpt op: restoring many files to a tag. The tag comes either from a scan after the files were
// rewritten (the shell path: `scanAfter`) or from a capture before they were (the tool path:
// `captureBefore`, then the caller edits and settles); `restoreTo` is the measured restore.
import { need, type CkptSession, type RestoreResult } from '../ckpt-api.js';
import { timed } from '../measure.js';

export async function captureBefore(session: CkptSession, relPaths: string[]): Promise<string> {
  const result = await need(session, 'capture', 'session')(relPaths, { tool: 'Bash' });
  return result.tag;
}

/** Scans after `relPaths` were rewritten; fails (naming some) if the scan did not record them all. */
export async function scanAfter(session: CkptSession, relPaths: string[]): Promise<string> {
  const result = await need(session, 'scan', 'session')({ tool: 'Bash' });
  const seen = new Set(result.files.map((f) => (f as { path?: string }).path));
  const missed = relPaths.filter((p) => !seen.has(p));
  if (!result.tag || missed.length) {
    throw new Error(`the scan after rewriting ${relPaths.length} files recorded ${relPaths.length - missed.length} of them (missed e.g. ${missed.slice(0, 3).join(', ')})`);
  }
  return result.tag;
}

export async function restoreTo(session: CkptSession, tag: string): Promise<{ ms: number; result: RestoreResult }> {
  const restore = need(session, 'restore', 'session');
  let result: RestoreResult | undefined;
  const ms = await timed(async () => {
    result = await restore(tag, { force: true });
  });
  return { ms, result: result as RestoreResult };
}

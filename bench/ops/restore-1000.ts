// ckpt op: restoring many files to a tag. The tag comes either from a scan after the files were
// rewritten (the shell path: `scanAfter`) or from a capture before they were (the tool path:
// `captureBefore`, then the caller edits and settles); `restoreTo` is the measured restore.
import { need, type CkptSession, type RestoreResult } from '../ckpt-api.js';
import { timed } from '../measure.js';

export async function captureBefore(session: CkptSession, relPaths: string[]): Promise<string> {
  const result = await need(session, 'capture', 'session')(relPaths, { tool: 'Bash' });
  return result.tag;
}

export async function scanAfter(session: CkptSession): Promise<{ tag: string; files: number }> {
  const result = await need(session, 'scan', 'session')({ tool: 'Bash' });
  if (!result.tag) throw new Error('the scan after rewriting the files recorded nothing');
  return { tag: result.tag, files: result.files.length };
}

export async function restoreTo(session: CkptSession, tag: string): Promise<{ ms: number; result: RestoreResult }> {
  const restore = need(session, 'restore', 'session');
  let result: RestoreResult | undefined;
  const ms = await timed(async () => {
    result = await restore(tag, { force: true });
  });
  return { ms, result: result as RestoreResult };
}

// ckpt op: restoring many files to a tag. `captureBefore` records their before-images (the tool
// path: capture, then the caller edits and settles); `restoreTo` is the measured restore.
import { need, type CkptSession, type RestoreResult } from '../ckpt-api.js';
import { timed } from '../measure.js';

export async function captureBefore(session: CkptSession, relPaths: string[]): Promise<string> {
  const result = await need(session, 'capture', 'session')(relPaths, { tool: 'Bash' });
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

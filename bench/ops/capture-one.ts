// ckpt op: a durable capture of one file about to be written (in-process API), and the settle after.
import { need, type CaptureResult, type CkptSession } from '../ckpt-api.js';
import { timed } from '../measure.js';

export async function captureOne(session: CkptSession, relPath: string): Promise<{ ms: number; result: CaptureResult }> {
  const capture = need(session, 'capture', 'session');
  let result: CaptureResult | undefined;
  const ms = await timed(async () => {
    result = await capture([relPath], { tool: 'Write' });
  });
  return { ms, result: result as CaptureResult };
}

export async function settle(session: CkptSession, relPaths: string[]): Promise<void> {
  await need(session, 'settle', 'session')(relPaths);
}

// ckpt op: the first scan of a workspace by a fresh store (records the baseline of every file).
import { closeStore, need, type ScanResult } from '../ckpt-api.js';
import type { OpenSession } from '../context.js';
import { timed } from '../measure.js';
import { startSession } from './session.js';

export async function scanFirst(storeDir: string, root: string): Promise<{ ms: number; result: ScanResult; open: OpenSession }> {
  const open = await startSession(storeDir, root, 'bench scan-first');
  try {
    const scan = need(open.session, 'scan', 'session');
    let result: ScanResult | undefined;
    const ms = await timed(async () => {
      result = await scan({ tool: 'Bash' });
    });
    return { ms, result: result as ScanResult, open };
  } catch (err) {
    await closeStore(open.store);
    throw err;
  }
}

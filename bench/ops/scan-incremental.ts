// ckpt op: a scan after the baseline exists (the figure changes one file before each call).
import { need, type CkptSession, type ScanResult } from '../ckpt-api.js';
import { timed } from '../measure.js';

export async function scanIncremental(session: CkptSession): Promise<{ ms: number; result: ScanResult }> {
  const scan = need(session, 'scan', 'session');
  let result: ScanResult | undefined;
  const ms = await timed(async () => {
    result = await scan({ tool: 'Bash' });
  });
  return { ms, result: result as ScanResult };
}

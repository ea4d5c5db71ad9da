// For a replayed property counterexample: with CKPT_PROPERTY_DUMP=1, every event log of the store is
// printed (the failing run's whole history), then the caller rethrows.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function dumpLogsIfAsked(storeDir: string): Promise<void> {
  if (!process.env.CKPT_PROPERTY_DUMP) return;
  const logs = (await readdir(storeDir, { recursive: true })).filter((f) => f.endsWith('.jsonl')).sort();
  for (const f of logs) process.stdout.write(`== ${f}\n${await readFile(join(storeDir, f), 'utf8')}\n`);
}

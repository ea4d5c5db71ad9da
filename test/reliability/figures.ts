// The figures interface of the reliability suites (issue 16, item 5): with CKPT_RELIABILITY_OUT naming
// a folder, a suite writes `<suite>.json` there — {suite, figures: {flat name: number}, details: [rows],
// defects: [strings]} — and `npm run reliability` collects them into docs/RELIABILITY.md. With
// CKPT_RELIABILITY_FULL=1 a suite runs its full size; otherwise the short version `npm test` runs.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface SuiteFigures {
  suite: string;
  figures: Record<string, number>;
  details?: unknown[];
  defects?: string[];
}

export const RELIABILITY_FULL = process.env.CKPT_RELIABILITY_FULL === '1';

/** `full` when CKPT_RELIABILITY_FULL=1, else `short`. */
export function bySize<T>(short: T, full: T): T {
  return RELIABILITY_FULL ? full : short;
}

/** Writes `<suite>.json` into CKPT_RELIABILITY_OUT when it is set; does nothing otherwise. */
export async function writeFigures(result: SuiteFigures): Promise<void> {
  const out = process.env.CKPT_RELIABILITY_OUT;
  if (!out) return;
  await mkdir(out, { recursive: true });
  const body = { suite: result.suite, figures: result.figures, details: result.details ?? [], defects: result.defects ?? [] };
  await writeFile(join(out, `${result.suite}.json`), `${JSON.stringify(body, null, 2)}\n`);
}

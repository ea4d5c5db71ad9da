// Byte sizes as people write them (`16M`, `512k`, `1.5G`, `1048576`): the size cap's flag and
// environment variable. Binary units (k = 1024).
import { invalidValue } from '../errors.js';

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

export function parseSize(text: string, what = 'size'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  const bytes = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw invalidValue(what, text, `${what} must be a size such as 16M, 512k or 1048576, got ${JSON.stringify(text)}`);
  }
  return bytes;
}

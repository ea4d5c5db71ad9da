// Byte sizes as people write them (`16M`, `512k`, `1.5G`, `1048576`): the size cap's flag and
// environment variable. Binary units (k = 1024); the parse itself is size-cap.ts.
import { invalidValue } from '../errors.js';
import { sizeBytes } from '../size-cap.js';

export function parseSize(text: string, what = 'size'): number {
  const bytes = sizeBytes(text);
  if (bytes === undefined) throw invalidValue(what, text, `${what} must be a size such as 16M, 512k or 1048576, got ${JSON.stringify(text)}`);
  return bytes;
}

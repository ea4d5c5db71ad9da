// A symlink's target as text, only when it is valid UTF-8: Node's default decoding turns invalid
// bytes into U+FFFD, so `tgt\xff` was recorded — and restored — as another target, and two such
// targets read the same (a probe found both). Undefined then: the link is skipped, never changed.
import { readlinkSync } from 'node:fs';
import { readlink } from 'node:fs/promises';

/** Why such a link is skipped. */
export const TARGET_NOT_UTF8 = 'target-not-utf8';

const strict = new TextDecoder('utf-8', { fatal: true });

function decode(bytes: Buffer): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

export async function readLinkTarget(abs: string): Promise<string | undefined> {
  return decode(await readlink(abs, { encoding: 'buffer' }));
}

export function readLinkTargetSync(abs: string): string | undefined {
  return decode(readlinkSync(abs, { encoding: 'buffer' }));
}

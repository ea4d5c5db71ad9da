// Reading the small text files ckpt takes rules and settings from (ignore files, git's config,
// attributes and `.git` files): a regular file within git's own size bound, opened without blocking.
// A FIFO, a device or an endless file planted in their place (`.gitignore -> /dev/zero` in a cloned
// repository, `mkfifo .gitignore` by a shell) is read as no file at all — it hung every scan, or
// aborted the process out of memory. In the work tree these files are not followed through a
// symlink either, as git itself does not follow a symlinked `.gitignore` or `.gitattributes` there.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** git ignores ignore and attributes files larger than this (100 MiB); so does ckpt, for every such file. */
export const MAX_TEXT_BYTES = 100 * 1024 * 1024;

/**
 * The text of `abs`, or undefined when it is missing, unreadable, not a regular file or too large.
 * `follow`: open through a symlink (settings of the user's own: `~/.gitconfig` linked from a dotfiles
 * repository); by default a symlink is no file.
 */
export function readSmallText(abs: string, options: { follow?: boolean } = {}): string | undefined {
  return readRegularFile(abs, { ...options, maxBytes: MAX_TEXT_BYTES })?.toString('utf8');
}

/**
 * The bytes of `abs` when it is a regular file of at most `maxBytes` (with `prefix`, its first
 * `maxBytes` whatever its size); undefined otherwise (see readSmallText).
 */
export function readRegularFile(abs: string, options: { follow?: boolean; maxBytes: number; prefix?: boolean }): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK | (options.follow ? 0 : (constants.O_NOFOLLOW ?? 0)));
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || (st.size > options.maxBytes && !options.prefix)) return undefined;
    const buf = Buffer.allocUnsafe(Math.min(st.size, options.maxBytes));
    let at = 0;
    // A file that grows while read is cut at its size when opened; one that shrinks ends early.
    while (at < buf.length) {
      const n = readSync(fd, buf, at, buf.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return buf.subarray(0, at);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

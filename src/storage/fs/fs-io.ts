// The file primitives of the filesystem driver: durable writes of a temp file, appends, reads by fd,
// directory fsync and mkdir -p — synchronous below SYNC_IO_MAX_BYTES.
//
// Why synchronous: a store operation is a chain of tiny syscalls (lstat, open, a small write, fsync,
// link, a directory fsync). Through libuv's thread pool each one costs a hop between threads — on a
// small VM 20–200 µs, more than the syscall itself — and a hook's capture makes some forty of them in
// a row: measured, the hops were most of a capture's time. Called directly they cost what the kernel
// costs. Data over the cap (a large blob or pack) still goes through the pool, so one big write never
// holds the daemon's event loop for long; a metadata call (stat, open, rename, mkdir) is always direct.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { TEMP_MARK } from '../store-key.js';

/** Reads and writes of more bytes than this go through the thread pool (their fsync too). */
export const SYNC_IO_MAX_BYTES = 1 << 20;

const C = fs.constants;
const writeAsync = (fd: number, data: Uint8Array, offset: number, length: number): Promise<number> =>
  new Promise((resolve, reject) => fs.write(fd, data, offset, length, null, (err, n) => (err ? reject(err) : resolve(n))));
const readAsync = (fd: number, buf: Uint8Array, offset: number, length: number, position: number): Promise<number> =>
  new Promise((resolve, reject) => fs.read(fd, buf, offset, length, position, (err, n) => (err ? reject(err) : resolve(n))));
const fsyncAsync = promisify(fs.fsync);

export const errnoOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;
/** A store temp name beside `abs` (`.<name>.ckpt-tmp-<hex>`): hidden from listings, removed by leftover cleanup. */
export const tempBeside = (abs: string): string =>
  path.join(path.dirname(abs), `.${path.basename(abs).slice(0, 60)}${TEMP_MARK}${randomBytes(6).toString('hex')}`);
export const isMissing = (err: unknown): boolean => errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR';

/** Writes all of `data` at the fd's position and fsyncs it (through the pool when large). */
export async function writeAllAndSync(fd: number, data: Uint8Array, sync = true): Promise<void> {
  const direct = data.length <= SYNC_IO_MAX_BYTES;
  for (let done = 0; done < data.length; ) {
    done += direct ? fs.writeSync(fd, data, done, data.length - done) : await writeAsync(fd, data, done, data.length - done);
  }
  if (!sync) return;
  if (direct) fs.fsyncSync(fd);
  else await fsyncAsync(fd);
}

/** Fills `buf` from `position` until it is full or the file ends; the bytes read. */
export async function readAt(fd: number, buf: Buffer, position: number): Promise<number> {
  const direct = buf.length <= SYNC_IO_MAX_BYTES;
  let done = 0;
  while (done < buf.length) {
    const n = direct ? fs.readSync(fd, buf, done, buf.length - done, position + done) : await readAsync(fd, buf, done, buf.length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/** The whole file from offset 0 to its end now (a file that grows meanwhile is read to its new end). */
export async function readToEnd(fd: number, sizeHint: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (let want = Math.max(sizeHint, 1); ; want = 16 * 1024) {
    const buf = Buffer.allocUnsafe(want);
    const n = await readAt(fd, buf, total);
    if (n > 0 || chunks.length === 0) chunks.push(buf.subarray(0, n));
    total += n;
    // A short read is the end; a full one may have more behind it (the file grew since the fstat).
    // The usual end is a full read of the stat's size and an empty one after it: no concatenation
    // (which copied a 25 MB log once more).
    if (n < want) return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  }
}

/** Opens a regular file for reading without following a symlink; undefined when missing, a symlink or not regular. */
export function openRegular(abs: string): { fd: number; size: number } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(abs, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (err) {
    if (isMissing(err) || errnoOf(err) === 'ELOOP') return undefined;
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (st.isFile()) return { fd, size: st.size };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  fs.closeSync(fd);
  return undefined;
}

/** Writes a fresh temp file with `mode` (set explicitly: the umask must not change it), fsynced unless `sync` is false; removed on failure. */
export async function writeTemp(tmp: string, data: Uint8Array, mode: number, sync = true): Promise<void> {
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
    fs.fchmodSync(fd, mode);
    await writeAllAndSync(fd, data, sync);
    fs.closeSync(fd);
    fd = undefined;
  } catch (err) {
    if (fd !== undefined) closeQuietly(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

export function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already failing: the first error is the one to report
  }
}

/** Sets the mtime of a regular file to now; false when missing or not a regular file. */
export function freshenIfFile(abs: string): boolean {
  try {
    if (!fs.lstatSync(abs, { throwIfNoEntry: false })?.isFile()) return false;
    const now = new Date();
    fs.utimesSync(abs, now, now);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, C.O_RDONLY);
  try {
    fs.fsyncSync(fd);
  } catch (err) {
    // Some filesystems refuse fsync on directories; the rename itself has happened.
    if (errnoOf(err) !== 'EINVAL' && errnoOf(err) !== 'EISDIR') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

// A lock a caller that writes nothing may do without (DESIGN §10 "Read commands on a store this
// process cannot write"): a dry run, like `status` or `verify`, must answer on a read-only mount or a
// store without write permission, where no lock file can be made. Only the lock's own failure lets it
// go on: an error from the work done under the lock is the work's.
import { isNotWritable } from '../errors.js';

/**
 * Runs `locked`, which takes a lock and calls `enter` once it holds it; when taking the lock fails
 * because the store cannot be written here (`isNotWritable`, before `enter`), runs `unlocked` instead,
 * with that error (what a write attempted there must fail with). Safe for readers only: nothing
 * writes through this process, and another process's appends are whole lines (a torn tail is ignored).
 */
export async function lockUnlessReadOnly<T>(locked: (enter: () => void) => Promise<T>, unlocked: (lockError: unknown) => Promise<T>): Promise<T> {
  let entered = false;
  try {
    return await locked(() => {
      entered = true;
    });
  } catch (err) {
    if (entered || !isNotWritable(err)) throw err;
    return unlocked(err);
  }
}

// A session's append-only JSONL event log over a StoreBackend (DESIGN §3–5): dense seq numbers
// assigned under a cross-process lock, tail-only reads to find the last seq, torn-tail repair before
// appending, strict decoding (LOG_CORRUPT, never a silent skip), and transactions for
// "read state, decide, append" without nested locking.
import { CkptError, isCkptError } from '../errors.js';
import { EVENT_VERSION, checkNewEvent, decodeEvent, encodeEvent, type EventBase, type NewEvent } from '../format/event.js';
import type { LockOptions, StoreBackend } from './backend.js';

export interface EventLogOptions {
  backend: StoreBackend;
  /** Store key of the log file, e.g. `workspaces/<wid>/sessions/<id>/events.jsonl`. */
  key: string;
  /** Lock name serializing writers (default: the log key itself). */
  lockKey?: string;
  /**
   * The type every log of this kind starts with (sessions: `session`). An append that would start a
   * log with anything else is refused NOT_FOUND-style (`missingCode`): the log was removed meanwhile,
   * and appending would re-create it as a fragment with no start.
   */
  firstType?: string;
  missingCode?: 'NOT_FOUND' | 'SESSION_NOT_FOUND';
}

export interface ReadOptions {
  /** Only events with `seq >= fromSeq` are returned (the whole log is still validated). */
  fromSeq?: number;
  /** Only events of these types are returned (the whole log is still validated). */
  types?: ReadonlySet<string>;
}

/** What a transaction may do while it holds the log's lock. */
export interface EventLogTx {
  read(options?: ReadOptions): Promise<EventBase[]>;
  lastSeq(): Promise<number>;
  /** As EventLog.readSince; when it reads to the end of a whole log, the append that follows needs no tail read. */
  readSince?(pos: LogPosition): Promise<{ events: EventBase[]; pos: LogPosition } | undefined>;
  /** Appends (one write + fsync) and returns the stored events with `v`, `seq`, `at` assigned. */
  append(events: NewEvent[]): Promise<EventBase[]>;
  /** Where the log ends, when this transaction knows it: after a readSince to its end, and after its own appends since. */
  end?(): LogPosition | undefined;
  /**
   * Set when no lock is held (a read-only transaction on a store this process cannot write,
   * SessionHandle.transaction's `readOnly`): `append` fails, and nothing else may be written either.
   */
  lockFree?: true;
}

/**
 * A point in a log: after the event `seq`, which ends at byte `bytes`; `lastLine` is how that event's
 * line ends (newline included): the whole line, or at most its last LINE_END_KEPT bytes, cut on a
 * character boundary. A position is trusted only where the log still holds those bytes right before
 * `bytes` and the events after it continue `seq` — a replaced log is read afresh. (The whole line
 * of an inline capture is tens of KB: read back on every hook call, and kept in metadata.json and
 * snapshot.json, for nothing.)
 */
export interface LogPosition {
  seq: number;
  bytes: number;
  lastLine: string;
}

/** How much of a position's last line it keeps (its end), in bytes. */
export const LINE_END_KEPT = 512;

export interface EventLog {
  readonly key: string;
  /**
   * The events after `pos` and the position after them, reading only the bytes after `pos`. Undefined
   * when `pos` does not describe this log (its line is not at that offset: replaced, or a foreign or
   * stale position) — the caller then reads the whole log.
   */
  readSince(pos: LogPosition): Promise<{ events: EventBase[]; pos: LogPosition } | undefined>;
  /** The position after the last complete event this handle has read (undefined before any read). */
  position(): LogPosition | undefined;
  /**
   * Appends under the lock. `beforeUnlock` runs after the durable append while the lock is still
   * held (e.g. to update session metadata consistently with the log).
   */
  append(
    events: NewEvent[],
    options?: LockOptions & { beforeUnlock?: (stored: EventBase[]) => Promise<void> },
  ): Promise<EventBase[]>;
  /** All complete events (a torn last line is ignored); [] when the log does not exist. */
  read(options?: ReadOptions): Promise<EventBase[]>;
  /** The seq of the last complete event (0 when empty/missing), from a tail read. */
  lastSeq(): Promise<number>;
  /**
   * The position after the last complete event, from tail reads (undefined when the log is empty or
   * missing): where a follower starts reading appends with `readSince` without decoding the log.
   */
  endPosition(): Promise<LogPosition | undefined>;
  /** Runs `fn` holding the log's lock. Do not call the log's own append/transaction inside: use `tx`. */
  transaction<T>(fn: (tx: EventLogTx) => Promise<T>, options?: LockOptions): Promise<T>;
}

/**
 * What every event log of this process has done: bytes read from logs and events decoded. Tests use
 * it to check that following a log costs each append the same, however long the log is (issue 28).
 */
export const eventLogWork = { bytesRead: 0, eventsDecoded: 0 };

const NL = 0x0a;
const TAIL_WINDOW = 64 * 1024;

/**
 * Per lock lease (StoreBackend.withLock), where this process's last append under it left each log:
 * a hook's capture and its settle, or a daemon's next hook call, come while the lock lingers, and
 * the log then ends where this process left it (unchangedUnder).
 */
const endsUnder = new WeakMap<object, Map<string, LogPosition>>();

/**
 * The end of the line that ends (newline included) at `buf[end]`, as a position keeps it: from the
 * line's start, or from LINE_END_KEPT bytes before its end moved on to a character's first byte.
 * Only those bytes are scanned: a line can be tens of KB.
 */
function lineEnd(buf: Buffer, end: number): Buffer {
  const from = Math.max(0, end + 1 - LINE_END_KEPT);
  const nl = buf.subarray(from, end).lastIndexOf(NL);
  let start = nl >= 0 ? from + nl + 1 : from;
  while (start < end && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start, end + 1);
}

interface Tail {
  /** Seq of the last complete line (0 when none). */
  lastSeq: number;
  /** Bytes up to and including the last newline: where a torn tail must be cut. */
  completeBytes: number;
  size: number;
}

export function createEventLog(options: EventLogOptions): EventLog {
  const { backend, key } = options;
  const lockKey = options.lockKey ?? key;

  /**
   * After a read found nothing: a missing log is fine ('missing'); something at the key that the
   * backend will not read (symlink, FIFO, folder) is not (LOG_CORRUPT). A log created between the read
   * and the listing (a fork or a new session writing its first line) is a regular file by then:
   * 'appeared', read it again (found by the soak).
   */
  async function refuseIfPresent(): Promise<'missing' | 'appeared'> {
    const slash = key.lastIndexOf('/');
    const names = await backend.children(slash < 0 ? '' : key.slice(0, slash));
    if (!names.includes(key.slice(slash + 1))) return 'missing';
    if (await backend.stat(key)) return 'appeared';
    throw new CkptError('LOG_CORRUPT', `refusing log ${key}: not a regular file (symlink?)`, { key });
  }

  async function readTail(again = true): Promise<Tail> {
    const st = await backend.stat(key);
    if (!st) {
      if ((await refuseIfPresent()) === 'appeared' && again) return readTail(false);
      return { lastSeq: 0, completeBytes: 0, size: 0 };
    }
    const size = st.size;
    // Grow the window from the end until it holds the last newline and the one before it (or the start).
    for (let window = Math.min(TAIL_WINDOW, size); ; window = Math.min(window * 2, size)) {
      const start = size - window;
      const buf = await backend.readRange(key, start, window);
      // Removed between the stat and the read (a session removal takes the lock; readers do not):
      // the log is missing now, as if the stat had not found it (found by the soak; was LOG_CORRUPT).
      if (!buf) return { lastSeq: 0, completeBytes: 0, size: 0 };
      const last = buf.lastIndexOf(NL);
      const prev = last < 0 ? -1 : buf.lastIndexOf(NL, last - 1);
      if (last < 0 && start === 0) return { lastSeq: 0, completeBytes: 0, size };
      if (last >= 0 && (prev >= 0 || start === 0)) {
        const line = buf.subarray(prev + 1, last).toString('utf8');
        let seq: number;
        try {
          seq = decodeEvent(line, { file: key, line: 0 }).seq;
        } catch {
          // Report it with its real line number: the full read names the line.
          await read();
          throw new CkptError('LOG_CORRUPT', `malformed last event in ${key}`, { key });
        }
        return { lastSeq: seq, completeBytes: start + last + 1, size };
      }
      if (window === size) throw new CkptError('INTERNAL', `tail scan of ${key} did not converge`, { key });
    }
  }

  /**
   * Where this handle's last whole read ended (the position, no events). A handle keeps no decoded
   * events: a resident daemon holds session handles for a whole day, and decoded events (their inline
   * content too) made its memory and each append's work grow with the history (issue 28). A caller
   * that follows a log reads only what was appended, through `readSince(position)`.
   */
  let seen: { seq: number; bytes: number; lastLine: Buffer } | undefined;

  function read(readOptions: ReadOptions = {}): Promise<EventBase[]> {
    return readAll(readOptions);
  }

  async function readAll(readOptions: ReadOptions, again = true): Promise<EventBase[]> {
    const buf = await backend.read(key);
    if (!buf) {
      seen = undefined;
      if ((await refuseIfPresent()) === 'appeared' && again) return readAll(readOptions, false);
      return [];
    }
    eventLogWork.bytesRead += buf.length;
    return decodeAll(buf, readOptions);
  }

  /**
   * Decodes the complete lines of a whole log (seq must run densely from 1), keeping those `options`
   * ask for. Line by line, like a plain parse: an event not kept is garbage at once, and a long
   * log's events are not all held at the same time unless the caller wants them.
   */
  function decodeAll(buf: Buffer, options: ReadOptions): EventBase[] {
    const end = buf.lastIndexOf(NL);
    seen = undefined;
    if (end < 0) return [];
    const text = buf.toString('utf8', 0, end + 1);
    const fromSeq = options.fromSeq ?? 1;
    const out: EventBase[] = [];
    let n = 0;
    for (let start = 0; start < text.length; ) {
      const nl = text.indexOf('\n', start);
      const event = decodeEvent(text.slice(start, nl), { file: key, line: ++n });
      start = nl + 1;
      if (event.seq !== n) {
        throw new CkptError('LOG_CORRUPT', `seq ${event.seq} at line ${n} of ${key} (expected ${n})`, { file: key, line: n, seq: event.seq });
      }
      if (n >= fromSeq && (!options.types || options.types.has(event.type))) out.push(event);
    }
    eventLogWork.eventsDecoded += n;
    seen = { seq: n, bytes: end + 1, lastLine: Buffer.from(lineEnd(buf, end)) };
    return out;
  }

  function stamp(events: NewEvent[], firstSeq: number): EventBase[] {
    const at = new Date().toISOString();
    return events.map((e, i) => {
      if (typeof e?.type !== 'string' || e.type.length === 0) {
        throw new CkptError('INVALID_ARGUMENT', 'an event needs a non-empty string type', { index: i });
      }
      // The log owns v/seq/at: whatever the caller put there is replaced, and they lead the line.
      const { v: _v, seq: _seq, at: _at, type, ...rest } = e;
      const stored: EventBase = { v: EVENT_VERSION, seq: firstSeq + i, type, at, ...rest };
      checkNewEvent(stored);
      return stored;
    });
  }

  /** One JSONL line per event (newline included). */
  function encodeLines(stored: EventBase[]): string[] {
    try {
      return stored.map(encodeEvent);
    } catch (err) {
      throw new CkptError('INVALID_ARGUMENT', `event is not JSON-serializable: ${(err as Error).message}`, {}, { cause: err });
    }
  }

  /**
   * A transaction's view; it caches the tail after its own appends since nobody else can write
   * meanwhile — and, until its next append, the events of its last whole read: a restore reads the
   * log for recovery, for the plan and for its capture's numbering (three decodes of the whole log).
   * Each read returns its own array; the events are shared (nothing changes them once decoded).
   */
  function makeTx(lease: object | undefined): EventLogTx {
    let known: number | undefined;
    let end: LogPosition | undefined;
    let whole: EventBase[] | undefined;
    return {
      async read(readOptions) {
        if (readOptions?.fromSeq !== undefined || readOptions?.types !== undefined) return read(readOptions);
        whole ??= await read();
        return [...whole];
      },
      async lastSeq() {
        return known ?? (await readTail()).lastSeq;
      },
      async readSince(pos) {
        const r = (lease && (await unchangedUnder(lease, pos))) || (await readSinceAt(pos));
        // Under the lock nobody else appends: a log that ends with these events has this last seq.
        if (r?.whole) {
          known = r.pos.seq;
          end = r.pos;
        }
        return r && { events: r.events, pos: r.pos };
      },
      async append(events) {
        if (events.length === 0) return [];
        let last = known;
        if (last === undefined) {
          const tail = await readTail();
          // A crash mid-append left a line without its newline: cut it off before writing after it.
          if (tail.completeBytes < tail.size) await backend.truncate(key, tail.completeBytes);
          last = tail.lastSeq;
        }
        if (last === 0 && options.firstType !== undefined && events[0]!.type !== options.firstType) {
          throw new CkptError(options.missingCode ?? 'NOT_FOUND', `log ${key} does not exist (removed?): refusing to start it with a ${events[0]!.type} event`, { key });
        }
        const stored = stamp(events, last + 1);
        const lines = encodeLines(stored);
        const data = Buffer.from(lines.join(''), 'utf8');
        whole = undefined;
        if (lease) endsUnder.get(lease)?.delete(key);
        await backend.append(key, data, lease);
        known = last + stored.length;
        end = end && { seq: known, bytes: end.bytes + data.length, lastLine: lineEnd(data, data.length - 1).toString('utf8') };
        if (lease && end) (endsUnder.get(lease) ?? endsUnder.set(lease, new Map()).get(lease)!).set(key, end);
        return stored;
      },
      end() {
        return end;
      },
    };
  }

  async function transaction<T>(fn: (tx: EventLogTx) => Promise<T>, lockOptions?: LockOptions): Promise<T> {
    try {
      return await backend.withLock(lockKey, (lease) => fn(makeTx(lease)), lockOptions);
    } catch (err) {
      // The folder of a removed log is gone, so its lock cannot even be created (ENOENT): for a log
      // that must exist (sessions) that is "not found", not a disk failure (found by the soak).
      if (options.firstType !== undefined && isCkptError(err, 'IO') && err.data.errno === 'ENOENT' && !(await backend.stat(key))) {
        throw new CkptError(options.missingCode ?? 'NOT_FOUND', `log ${key} does not exist (removed?)`, { key }, { cause: err });
      }
      throw err;
    }
  }

  /**
   * readSince's answer without reading, when this process appended the log's last bytes itself under
   * the lease it still holds (the lock was never let go since, so no other process appended,
   * repaired or removed the log) and `pos` is where that append ended: nothing new. The log's size
   * is still checked (one stat, not an open and a read): a log changed without its lock reads afresh.
   */
  async function unchangedUnder(lease: object, pos: LogPosition): Promise<{ events: EventBase[]; pos: LogPosition; whole: boolean } | undefined> {
    const mine = endsUnder.get(lease)?.get(key);
    if (!mine || mine.seq !== pos.seq || mine.bytes !== pos.bytes || mine.lastLine !== pos.lastLine) return undefined;
    return (await backend.stat(key))?.size === pos.bytes ? { events: [], pos, whole: true } : undefined;
  }

  /** readSince, and whether the log ends right after the events read (no torn line after them). */
  async function readSinceAt(pos: LogPosition): Promise<{ events: EventBase[]; pos: LogPosition; whole: boolean } | undefined> {
    const last = Buffer.from(pos.lastLine, 'utf8');
    if (!Number.isSafeInteger(pos.seq) || pos.seq < 1 || !Number.isSafeInteger(pos.bytes) || last.length === 0 || last.length > pos.bytes || last.at(-1) !== NL) return undefined;
    const from = pos.bytes - last.length;
    // One open for the log's size and its tail (this runs under the lock on every hook call).
    const chunk = await backend.readFrom(key, from);
    if (chunk) eventLogWork.bytesRead += chunk.length;
    if (!chunk || chunk.length < last.length || !chunk.subarray(0, last.length).equals(last)) return undefined;
    const end = chunk.lastIndexOf(NL);
    const events: EventBase[] = [];
    if (end >= last.length) {
      const lines = chunk.subarray(last.length, end).toString('utf8').split('\n');
      for (const line of lines) {
        const n = pos.seq + events.length + 1;
        const event = decodeEvent(line, { file: key, line: n });
        if (event.seq !== n) return undefined; // not the continuation of that position
        events.push(event);
      }
      eventLogWork.eventsDecoded += events.length;
    }
    const whole = end + 1 === chunk.length;
    if (events.length === 0) return { events, pos, whole };
    return { events, pos: { seq: pos.seq + events.length, bytes: from + end + 1, lastLine: lineEnd(chunk, end).toString('utf8') }, whole };
  }

  async function readSince(pos: LogPosition): Promise<{ events: EventBase[]; pos: LogPosition } | undefined> {
    const r = await readSinceAt(pos);
    return r && { events: r.events, pos: r.pos };
  }

  return {
    key,
    read,
    readSince,
    position: () => (seen && seen.seq > 0 ? { seq: seen.seq, bytes: seen.bytes, lastLine: seen.lastLine.toString('utf8') } : undefined),
    async lastSeq() {
      return (await readTail()).lastSeq;
    },
    async endPosition() {
      const tail = await readTail();
      if (tail.lastSeq === 0) return undefined;
      const from = Math.max(0, tail.completeBytes - LINE_END_KEPT);
      const buf = await backend.readRange(key, from, tail.completeBytes - from);
      if (!buf || buf.length !== tail.completeBytes - from || buf.at(-1) !== NL) return undefined; // changed meanwhile
      return { seq: tail.lastSeq, bytes: tail.completeBytes, lastLine: lineEnd(buf, buf.length - 1).toString('utf8') };
    },
    transaction,
    append(events, appendOptions) {
      const { beforeUnlock, ...lockOptions } = appendOptions ?? {};
      return transaction(async (tx) => {
        const stored = await tx.append(events);
        if (beforeUnlock) await beforeUnlock(stored);
        return stored;
      }, lockOptions);
    },
  };
}

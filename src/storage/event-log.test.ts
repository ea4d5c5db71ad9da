// Tests of the event log: dense seq, torn-tail handling, corruption detection, symlink refusal,
// transactions, a property test of exact round-trips, and concurrent appends from many processes.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCkptError } from '../errors.js';
import type { NewEvent } from '../format/event.js';
import { createEventLog, eventLogWork, LINE_END_KEPT, type EventLog, type LogPosition } from './event-log.js';
import { createFsBackend } from './fs/fs-backend.js';
import type { StoreBackend } from './backend.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KEY = 'workspaces/w/sessions/s/events.jsonl';

describe('event log', () => {
  let dir: string;
  let backend: StoreBackend;
  let log: EventLog;
  const file = (): string => path.join(dir, KEY);
  const codeOf = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => 'resolved',
      (e: unknown) => (isCkptError(e) ? e.code : e),
    );

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(tmpdir(), 'ckpt-log-'));
    backend = createFsBackend({ dir });
    log = createEventLog({ backend, key: KEY });
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('is empty when missing, then round-trips with dense seq and log-owned v/seq/at', async () => {
    expect(await log.read()).toEqual([]);
    expect(await log.lastSeq()).toBe(0);
    const first = await log.append([{ type: 'session', kind: 'root' }, { type: 'turn', turn: 1 }]);
    expect(first.map((e) => e.seq)).toEqual([1, 2]);
    const second = await log.append([{ type: 'message', seq: 99, v: 7, at: 'x', text: 'hi\nthere' }]);
    expect(second[0]).toMatchObject({ v: 1, seq: 3, type: 'message', text: 'hi\nthere' });
    expect(second[0]!.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await log.read()).toEqual([...first, ...second]);
    expect(await log.read({ fromSeq: 3 })).toEqual(second);
    expect(await log.lastSeq()).toBe(3);
    const text = await fs.readFile(file(), 'utf8');
    expect(text.split('\n')).toHaveLength(4);
    expect(text.startsWith('{"v":1,"seq":1,"type":"session","at":')).toBe(true);
    expect(await log.append([])).toEqual([]);
  });

  it('ignores a torn last line on read and repairs it before the next append', async () => {
    await log.append([{ type: 'a' }, { type: 'b' }]);
    await fs.appendFile(file(), '{"v":1,"seq":3,"type":"c","at":"20');
    expect((await log.read()).map((e) => e.type)).toEqual(['a', 'b']);
    expect(await log.lastSeq()).toBe(2);
    const [c] = await log.append([{ type: 'c2' }]);
    expect(c!.seq).toBe(3);
    expect((await log.read()).map((e) => e.type)).toEqual(['a', 'b', 'c2']);
    expect((await fs.readFile(file(), 'utf8')).endsWith('"type":"c2","at":"' + c!.at + '"}\n')).toBe(true);
  });

  it('repairs a log that holds only a torn line', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.writeFile(file(), '{"v":1,"se');
    expect(await log.read()).toEqual([]);
    expect((await log.append([{ type: 'x' }]))[0]!.seq).toBe(1);
    expect(await log.read()).toHaveLength(1);
  });

  it('finds the last seq with a tail read even past the 64 KiB window', async () => {
    const big = 'x'.repeat(150_000);
    await log.append([{ type: 'a' }, { type: 'big', big }]);
    expect(await log.lastSeq()).toBe(2);
    await fs.appendFile(file(), '{"torn":');
    expect(await log.lastSeq()).toBe(2);
    await log.append([{ type: 'big2', big }, { type: 'c' }]);
    expect(await log.lastSeq()).toBe(4);
    expect((await log.read()).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it('fails with LOG_CORRUPT on a malformed middle line, naming it', async () => {
    await log.append([{ type: 'a' }, { type: 'b' }, { type: 'c' }]);
    const lines = (await fs.readFile(file(), 'utf8')).split('\n');
    lines[1] = '{not json';
    await fs.writeFile(file(), lines.join('\n'));
    const err = await log.read().catch((e: unknown) => e);
    expect(isCkptError(err, 'LOG_CORRUPT')).toBe(true);
    expect((err as Error).message).toContain('line 2');
    // A corrupt last complete line is reported by append too, instead of guessing a seq.
    await fs.writeFile(file(), lines.slice(0, 1).join('\n') + '\n[1,2]\n');
    expect(await codeOf(log.append([{ type: 'd' }]))).toBe('LOG_CORRUPT');
  });

  it('reads only the types asked for, still validating every line', async () => {
    await log.append([{ type: 'session', kind: 'root' }, { type: 'message', text: 'hi' }, { type: 'turn', turn: 1 }, { type: 'message', text: 'again' }]);
    const types = new Set(['session', 'turn']);
    expect((await log.read({ types })).map((e) => [e.seq, e.type])).toEqual([[1, 'session'], [3, 'turn']]);
    expect((await log.read({ types, fromSeq: 2 })).map((e) => e.seq)).toEqual([3]);
    // An event of a type not kept is decoded and checked like any other.
    const text = await fs.readFile(file(), 'utf8');
    await fs.writeFile(file(), text.replace('"seq":4', '"seq":5'));
    expect(await codeOf(log.read({ types }))).toBe('LOG_CORRUPT');
    await fs.writeFile(file(), text.replace('{"v":1,"seq":2', '{"v":1,"seq":2,'));
    expect(await codeOf(log.read({ types }))).toBe('LOG_CORRUPT');
  });

  it('fails with LOG_CORRUPT on a seq gap or repeat', async () => {
    await log.append([{ type: 'a' }, { type: 'b' }]);
    const text = await fs.readFile(file(), 'utf8');
    await fs.writeFile(file(), text.replace('"seq":2', '"seq":3'));
    expect(await codeOf(log.read())).toBe('LOG_CORRUPT');
    await fs.writeFile(file(), text.replace('"seq":2', '"seq":1'));
    expect(await codeOf(log.read())).toBe('LOG_CORRUPT');
  });

  it('refuses a symlinked log on read, lastSeq and append', async () => {
    const real = path.join(dir, 'elsewhere.jsonl');
    await fs.writeFile(real, '');
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.symlink(real, file());
    expect(await codeOf(log.read())).toBe('LOG_CORRUPT');
    expect(await codeOf(log.lastSeq())).toBe('LOG_CORRUPT');
    expect(await codeOf(log.append([{ type: 'a' }]))).toBe('LOG_CORRUPT');
    expect(await fs.readFile(real, 'utf8')).toBe('');
  });

  it('reads a log created between its missing read and the listing that checks for a symlink (found by the soak)', async () => {
    // Another process (a fork, a new session) writes the log's first line right after this reader
    // found nothing: the listing then shows the name, but it is a regular file, not a planted link.
    const other = createEventLog({ backend, key: KEY });
    let racing = true;
    const racy: StoreBackend = {
      ...backend,
      stat: async (k) => (racing && k === KEY ? undefined : backend.stat(k)),
      read: async (k) => (racing && k === KEY ? undefined : backend.read(k)),
      children: async (prefix) => {
        if (racing) {
          racing = false;
          await other.append([{ type: 'a' }, { type: 'b' }]);
        }
        return backend.children(prefix);
      },
    };
    expect(await createEventLog({ backend: racy, key: KEY }).lastSeq()).toBe(2);
    racing = true;
    await fs.rm(file());
    expect((await createEventLog({ backend: racy, key: KEY }).read()).map((e) => e.type)).toEqual(['a', 'b']);
  });

  it('runs read-decide-append transactions and beforeUnlock hooks under one lock', async () => {
    const nextK = (): Promise<number> =>
      log.transaction(async (tx) => {
        const k = (await tx.read()).filter((e) => e.type === 'step').length + 1;
        await tx.append([{ type: 'step', k }]);
        expect(await tx.lastSeq()).toBe(k);
        return k;
      });
    const ks = await Promise.all([nextK(), nextK(), nextK(), nextK()]);
    expect(ks.sort()).toEqual([1, 2, 3, 4]);
    let seen: number[] = [];
    await log.append([{ type: 'x' }], {
      beforeUnlock: async (stored) => {
        seen = stored.map((e) => e.seq);
      },
    });
    expect(seen).toEqual([5]);
    // Calling the log itself inside its own transaction is a bug, reported instead of deadlocking.
    expect(await codeOf(log.transaction(() => log.append([{ type: 'y' }])))).toBe('INTERNAL');
    expect(await codeOf(log.append([{ type: '' }]))).toBe('INVALID_ARGUMENT');
    expect(await log.lastSeq()).toBe(5);
  });

  it('sees appends made through another handle incrementally, and re-reads a replaced log', async () => {
    const other = createEventLog({ backend, key: KEY });
    await log.append([{ type: 'a' }]);
    expect((await log.read()).map((e) => e.type)).toEqual(['a']);
    await other.append([{ type: 'b' }, { type: 'c' }]);
    expect((await log.read()).map((e) => e.type)).toEqual(['a', 'b', 'c']);
    expect((await log.read({ fromSeq: 3 })).map((e) => e.type)).toEqual(['c']);
    // Replace the log with different, longer content: the cached prefix must not be trusted.
    const replaced = [1, 2, 3, 4].map((seq) => JSON.stringify({ v: 1, seq, type: `r${seq}`, at: 'x' })).join('\n') + '\n';
    await fs.writeFile(file(), replaced);
    expect((await log.read()).map((e) => e.type)).toEqual(['r1', 'r2', 'r3', 'r4']);
    // A corrupt line appended later is still reported, not skipped.
    await fs.appendFile(file(), 'garbage\n');
    expect(await codeOf(log.read())).toBe('LOG_CORRUPT');
  });

  it('gives the end position from tail reads: the position a whole read ends at, from which readSince reads only appends', async () => {
    expect(await log.endPosition()).toBeUndefined();
    await log.append([{ type: 'a', text: 'x'.repeat(2000) }, { type: 'b' }]);
    await fs.appendFile(file(), '{"v":1,"seq":3,"ty'); // a torn tail is not part of it
    const end = await log.endPosition();
    await log.read();
    expect(end).toEqual(log.position());
    await fs.truncate(file(), end!.bytes);
    await log.append([{ type: 'c' }]);
    expect((await log.readSince(end!))?.events.map((e) => e.type)).toEqual(['c']);
  });

  it('keeps only the end of a long last line in a position, exact where it cuts through characters outside the BMP', async () => {
    const bytesBefore = async (pos: LogPosition): Promise<Buffer> => (await fs.readFile(file())).subarray(pos.bytes - Buffer.byteLength(pos.lastLine), pos.bytes);
    const check = async (pos: LogPosition | undefined): Promise<LogPosition> => {
      expect(pos).toBeDefined();
      expect(pos!.lastLine.length).toBeLessThanOrEqual(LINE_END_KEPT);
      expect(pos!.lastLine.endsWith('\n')).toBe(true);
      expect(await bytesBefore(pos!)).toEqual(Buffer.from(pos!.lastLine));
      return pos!;
    };
    const other = createEventLog({ backend, key: KEY });
    // Two parities of the cut: one of them falls inside a 4-byte UTF-8 sequence.
    for (const extra of ['', 'x']) {
      await log.append([{ type: 'long', text: '😀'.repeat(3000) + extra }]);
      await log.read();
      const read = await check(log.position()); // cut from the bytes read
      await other.append([{ type: 'next', text: 'ü😀'.repeat(400) + extra }]);
      const since = await log.readSince(read);
      expect(since?.events.map((e) => e.type)).toEqual(['next']);
      const after = await check(since!.pos); // cut from the tail's bytes
      const end = await log.transaction(async (tx) => {
        await tx.readSince!(after);
        await tx.append([{ type: 'own', text: '😀'.repeat(3000) + extra }]);
        return tx.end?.();
      });
      const own = await check(end); // cut from the line the append wrote
      await other.append([{ type: 'last' }]);
      expect((await log.readSince(own))?.events.map((e) => e.type)).toEqual(['last']);
    }
  });

  it('under a lingering lock it appended under, reads nothing new without reading; any other change is read', async () => {
    const linger = { idleMs: 60_000, maxMs: 60_000 };
    await log.append([{ type: 'session' }]);
    let pos = (await log.endPosition())!;
    const appendAfter = (from: LogPosition, type: string) =>
      log.transaction(async (tx) => {
        const tail = await tx.readSince!(from);
        await tx.append([{ type }]);
        return { tail, end: tx.end!()! };
      }, { linger });
    // The first transaction takes the lock (and reads); the next one reuses it and reads no bytes.
    ({ end: pos } = await appendAfter(pos, 'a'));
    const before = eventLogWork.bytesRead;
    const again = await appendAfter(pos, 'b');
    expect(again.tail?.events).toEqual([]);
    expect(eventLogWork.bytesRead).toBe(before);
    // Another handle of this process appends under the same lingering lock: the first handle's
    // position is not where the log ends now, so it reads the new event.
    const other = createEventLog({ backend, key: KEY });
    await other.transaction(async (tx) => tx.append([{ type: 'c' }]), { linger });
    const seen = await log.transaction((tx) => tx.readSince!(again.end), { linger });
    expect(seen?.events.map((e) => e.type)).toEqual(['c']);
    // A log changed without its lock (bytes added behind ckpt's back) is read, not taken as unchanged.
    const end = seen!.pos;
    const { end: mine } = await appendAfter(end, 'd');
    await fs.appendFile(file(), `${JSON.stringify({ v: 1, seq: mine.seq + 1, type: 'e', at: new Date().toISOString() })}\n`);
    const changed = await log.transaction((tx) => tx.readSince!(mine), { linger });
    expect(changed?.events.map((e) => e.type)).toEqual(['e']);
    await backend.close?.();
  });

  it('round-trips arbitrary JSON payloads in arbitrary batches (property)', async () => {
    const payload = fc.dictionary(
      fc.string().filter((k) => !['v', 'seq', 'type', 'at', '__proto__'].includes(k)),
      fc.jsonValue(),
      { maxKeys: 4 },
    );
    const event = fc.record({ type: fc.string({ minLength: 1, maxLength: 8 }), payload });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(event, { maxLength: 5 }), { maxLength: 6 }), async (batches) => {
        const l = createEventLog({ backend, key: `prop/${run++}.jsonl` });
        const expected: NewEvent[] = [];
        for (const batch of batches) {
          const events = batch.map((e) => ({ ...e.payload, type: e.type }));
          await l.append(events);
          expected.push(...events);
        }
        const got = await l.read();
        expect(got.map((e) => e.seq)).toEqual(expected.map((_, i) => i + 1));
        const strip = ({ v: _v, seq: _s, at: _a, ...rest }: Record<string, unknown>): unknown => rest;
        // JSON is the storage format: what goes in must come out exactly as JSON would carry it.
        expect(got.map(strip)).toEqual(expected.map((e) => JSON.parse(JSON.stringify(e)) as unknown));
      }),
      { numRuns: 60 },
    );
  });

  it('serializes appends from many processes: every event once, seq dense, no torn line', async () => {
    const writers = 7;
    const perWriter = 30;
    const script = path.join(repo, 'test/fixtures/storage-appender.ts');
    const codes = await Promise.all(
      Array.from({ length: writers }, (_, w) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script, dir, KEY, String(w), String(perWriter)], {
          cwd: repo,
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        return new Promise<number | null>((resolve) => child.once('exit', resolve));
      }),
    );
    expect(codes).toEqual(Array(writers).fill(0));
    const events = await log.read();
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: writers * perWriter }, (_, i) => i + 1));
    const seen = new Set(events.map((e) => `${String(e.writer)}:${String(e.i)}`));
    expect(seen.size).toBe(writers * perWriter);
    for (let w = 0; w < writers; w++) {
      const mine = events.filter((e) => e.writer === String(w)).map((e) => e.i);
      expect(mine).toEqual(Array.from({ length: perWriter }, (_, i) => i));
    }
    expect((await fs.readFile(file(), 'utf8')).endsWith('}\n')).toBe(true);
  });
});

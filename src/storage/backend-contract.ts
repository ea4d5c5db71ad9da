// The shared vitest suite every StoreBackend driver must pass: the behaviour the rest of ckpt relies
// on (missing means undefined, create-if-absent freshens, appends and truncation, ordering of
// listings, idempotent removal, lock exclusion, key validation), independent of the medium.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCkptError } from '../errors.js';
import type { StoreBackend } from './backend.js';

export interface ContractSubject {
  backend: StoreBackend;
  cleanup(): Promise<void>;
}

const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isCkptError(err), `expected CkptError ${code}, got ${String(err)}`).toBe(true);
  expect((err as { code: string }).code).toBe(code);
}

export function runBackendContract(name: string, makeBackend: () => Promise<ContractSubject>): void {
  describe(`StoreBackend contract: ${name}`, () => {
    let subject: ContractSubject;
    let b: StoreBackend;
    beforeEach(async () => {
      subject = await makeBackend();
      b = subject.backend;
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    it('round-trips writes, overwrites and reads ranges', async () => {
      await b.write('a/b/c.json', bytes('{"x":1}'));
      expect((await b.read('a/b/c.json'))?.toString()).toBe('{"x":1}');
      await b.write('a/b/c.json', bytes('hello world'));
      expect((await b.read('a/b/c.json'))?.toString()).toBe('hello world');
      expect((await b.readRange('a/b/c.json', 6, 100))?.toString()).toBe('world');
      expect((await b.readRange('a/b/c.json', 0, 5))?.toString()).toBe('hello');
      expect((await b.readRange('a/b/c.json', 50, 5))?.length).toBe(0);
      expect((await b.readFrom('a/b/c.json', 6))?.toString()).toBe('world');
      expect((await b.readFrom('a/b/c.json', 0))?.toString()).toBe('hello world');
      expect((await b.readFrom('a/b/c.json', 50))?.length).toBe(0);
      expect((await b.stat('a/b/c.json'))?.size).toBe(11);
      await b.write('empty', new Uint8Array());
      expect((await b.read('empty'))?.length).toBe(0);
    });

    it('reports missing objects as undefined', async () => {
      expect(await b.read('nope/x')).toBeUndefined();
      expect(await b.readRange('nope/x', 0, 10)).toBeUndefined();
      expect(await b.readFrom('nope/x', 0)).toBeUndefined();
      expect(await b.stat('nope/x')).toBeUndefined();
      await b.write('file', bytes('x'));
      // A "folder" below a plain object is missing too, not an error.
      expect(await b.read('file/below')).toBeUndefined();
      expect(await b.stat('file/below')).toBeUndefined();
      expect(await b.touch('nope/x')).toBe(false);
      expect(await b.stat('nope/x')).toBeUndefined();
    });

    it('creates once and freshens an existing object without changing it', async () => {
      expect(await b.create('blobs/ab/cd', bytes('one'))).toBe(true);
      const first = await b.stat('blobs/ab/cd');
      await sleep(30);
      expect(await b.create('blobs/ab/cd', bytes('two'))).toBe(false);
      expect((await b.read('blobs/ab/cd'))?.toString()).toBe('one');
      const second = await b.stat('blobs/ab/cd');
      expect(second!.mtimeMs).toBeGreaterThan(first!.mtimeMs);
      await sleep(30);
      expect(await b.touch('blobs/ab/cd')).toBe(true);
      expect((await b.stat('blobs/ab/cd'))!.mtimeMs).toBeGreaterThan(second!.mtimeMs);
    });

    it('lets concurrent creators of one key all succeed with exactly one winner', async () => {
      const results = await Promise.all(Array.from({ length: 8 }, () => b.create('blobs/same', bytes('same bytes'))));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await b.read('blobs/same'))?.toString()).toBe('same bytes');
      expect(await b.list('blobs')).toEqual(['blobs/same']);
    });

    it('appends, creating the object, and truncates', async () => {
      await b.append('logs/l', bytes('ab'));
      await b.append('logs/l', bytes('cd\n'));
      expect((await b.read('logs/l'))?.toString()).toBe('abcd\n');
      await b.truncate('logs/l', 2);
      expect((await b.read('logs/l'))?.toString()).toBe('ab');
      await b.append('logs/l', bytes('Z'));
      expect((await b.read('logs/l'))?.toString()).toBe('abZ');
    });

    it('lists regular objects recursively and children by name, sorted', async () => {
      for (const k of ['p/z', 'p/a/2', 'p/a/10', 'p/B', 'q/x', 'p2/y']) await b.write(k, bytes(k));
      expect(await b.list('p')).toEqual(['p/B', 'p/a/10', 'p/a/2', 'p/z']);
      expect(await b.list('p/')).toEqual(['p/B', 'p/a/10', 'p/a/2', 'p/z']);
      expect(await b.list('')).toEqual(['p/B', 'p/a/10', 'p/a/2', 'p/z', 'p2/y', 'q/x']);
      expect(await b.children('p')).toEqual(['B', 'a', 'z']);
      expect(await b.children('')).toEqual(['p', 'p2', 'q']);
      expect(await b.list('missing')).toEqual([]);
      expect(await b.children('missing')).toEqual([]);
    });

    it('removes idempotently, objects and trees', async () => {
      await b.write('t/a/1', bytes('1'));
      await b.write('t/a/2', bytes('2'));
      await b.write('t/b', bytes('b'));
      await b.remove('t/b');
      await b.remove('t/b');
      expect(await b.read('t/b')).toBeUndefined();
      await b.removeTree('t/a');
      await b.removeTree('t/a');
      expect(await b.list('t')).toEqual([]);
      await b.remove('never/was');
    });

    it('serializes concurrent withLock callers in one process', async () => {
      let inside = 0;
      let maxInside = 0;
      const order: number[] = [];
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          b.withLock('locks/one', async () => {
            inside++;
            maxInside = Math.max(maxInside, inside);
            await sleep(5);
            order.push(i);
            inside--;
          }),
        ),
      );
      expect(maxInside).toBe(1);
      expect(order.sort()).toEqual([0, 1, 2, 3, 4, 5]);
      // Different keys do not block each other, and the lock returns fn's value.
      expect(await b.withLock('locks/two', async () => 42)).toBe(42);
    });

    it('releases the lock when fn throws, and times out with LOCKED', async () => {
      await expect(b.withLock('locks/t', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      expect(await b.withLock('locks/t', async () => 'free')).toBe('free');
      let release!: () => void;
      const holding = b.withLock('locks/t', () => new Promise<void>((r) => (release = r)));
      await sleep(20);
      await expectCode(b.withLock('locks/t', async () => 1, { timeoutMs: 150 }), 'LOCKED');
      release();
      await holding;
      expect(await b.withLock('locks/t', async () => 'again')).toBe('again');
    });

    it('quarantines an object out of its name, releases it back, and lists it as a leftover meanwhile', async () => {
      await b.write('q/obj', bytes('kept'));
      expect(await b.quarantine('q/missing')).toBeUndefined();
      const q = await b.quarantine('q/obj');
      expect(q?.stat.size).toBe(4);
      // While quarantined the object is missing: a put writes it anew.
      expect(await b.read('q/obj')).toBeUndefined();
      expect(await b.list('q')).toEqual([]);
      const leftovers = await b.leftovers();
      expect(leftovers).toEqual([expect.objectContaining({ key: q!.key, bytes: 4, quarantineOf: 'q/obj' })]);
      await b.release(q!.key, 'q/obj');
      expect((await b.read('q/obj'))?.toString()).toBe('kept');
      expect(await b.leftovers()).toEqual([]);
      // Released over a copy written meanwhile: the copy stays (same content in real use).
      const q2 = await b.quarantine('q/obj');
      await b.write('q/obj', bytes('copy'));
      await b.release(q2!.key, 'q/obj');
      expect((await b.read('q/obj'))?.toString()).toBe('copy');
      // A release of something already gone is a no-op.
      await b.release(q2!.key, 'q/obj');
    });

    it('removes leftovers only when older than the cutoff', async () => {
      await b.write('q/obj', bytes('12345'));
      const q = await b.quarantine('q/obj');
      expect(await b.removeLeftover(q!.key, 0)).toBe(0);
      expect(await b.leftovers()).toHaveLength(1);
      expect(await b.removeLeftover(q!.key, Infinity)).toBe(5);
      expect(await b.leftovers()).toEqual([]);
      expect(await b.removeLeftover(q!.key, Infinity)).toBe(0);
      await expectCode(b.removeLeftover('q/obj', Infinity), 'INVALID_ARGUMENT');
    });

    it('rejects keys that could leave the store', async () => {
      for (const key of ['/etc/passwd', '../x', 'a/../../x', 'a//b', 'a\\b', '', 'a/./b', 'a/', './a']) {
        await expectCode(b.read(key), 'INVALID_ARGUMENT');
        await expectCode(b.write(key, bytes('x')), 'INVALID_ARGUMENT');
      }
      await expectCode(b.list('../up'), 'INVALID_ARGUMENT');
      await expectCode(b.children('/abs'), 'INVALID_ARGUMENT');
      await expectCode(b.removeTree(''), 'INVALID_ARGUMENT');
    });
  });
}

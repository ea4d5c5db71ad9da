// Model-based test of the owner index (src/capture/owner-index.ts; DESIGN §10 "Hooks at no cost"):
// queued writes against readers, in one process and across two. Process A (this one) records under a
// daemon's `defer` whose queue the commands run (an item now, items later, all at once), or at once
// with `defer` unset (as settles and scans without a daemon do); process B (a real second Node
// process, test/fixtures/owner-index-peer.ts) records with recordOwnership at once (a CLI restore)
// and reads. The model: path -> {session, state, mode, bytes, commit time}, the latest commit time
// winning (each record command starts on a later millisecond than the one before ended, so times
// are distinct and each record's `at` lies in the span of its command), plus A's batch not yet
// taken. After every read: A's plain read is the committed map with the whole batch applied (writes
// whose store copy will fail included: the reader does not run them); A's spilled read runs the batch
// first, so it is the committed map, and every blob a record names is in the store; B reads the file:
// the committed map, every blob it names stored. Reads racing the queue's run, B's write or a write
// A queues meanwhile see the state before or after it, a spilled read never a blob not yet stored
// (nor a record whose copy fails). Used by owner-index-model.property.test.ts
// (`npm test`) and owner-index-model.full.test.ts (`npm run test:long`).
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOwners, recordOwnershipAfter, type OwnerEntry } from '../src/capture/owner-index.js';
import type { Session } from '../src/api/session.js';
import type { FileImage } from '../src/format/event.js';
import { openStore, type Store } from '../src/store.js';
import { makeTempDirs, type TempDirs } from './helpers/temp.js';

const PEER = fileURLToPath(new URL('./fixtures/owner-index-peer.ts', import.meta.url));

/** Paths an object map gets wrong (`__proto__`, Object.prototype members), unicode in NFC and NFD, a backslash. */
const PATHS = ['a.txt', '__proto__', 'é/ü.txt', 'src/b.ts', 'constructor', 'toString', 'hasOwnProperty', 'd/__proto__', 'e\u0301.txt', '日本語.md', '😀 x', 'a\\b'];
const TARGETS = ['a.txt', '../outside', 'é', ''];

// ---- the second process -------------------------------------------------------------------------

interface PeerReply {
  id: number;
  ok: boolean;
  error?: string;
  [k: string]: unknown;
}

class Peer {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (r: PeerReply) => void; reject: (e: Error) => void }>();
  private stderr = '';
  private constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    child.on('message', (m: PeerReply) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.ok) w.resolve(m);
      else w.reject(new Error(`owner-index peer: ${m.error}`));
    });
    child.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`owner-index peer exited ${code}: ${this.stderr}`));
      this.waiting.clear();
    });
  }

  static async start(): Promise<Peer> {
    const child = fork(PEER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    const peer = new Peer(child);
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`owner-index peer exited ${code} before it was ready: ${peer.stderr}`)));
    });
    return peer;
  }

  call(message: Record<string, unknown>): Promise<PeerReply> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, ...message });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.disconnect();
    await exited;
  }
}

// ---- images -------------------------------------------------------------------------------------

/** A generated image, made concrete per run (file content is `<run tag>:<k>`, new in every run). */
interface Spec {
  path: string;
  kind: 'absent' | 'dir' | 'file' | 'symlink' | 'skipped';
  k: number;
  mode?: number;
}

const specArb: fc.Arbitrary<Spec> = fc.record(
  {
    // Mostly two paths, so that records of the same path meet within a short command list.
    path: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PATHS.slice(0, 2)) }, { weight: 1, arbitrary: fc.constantFrom(...PATHS) }),
    kind: fc.constantFrom('absent' as const, 'dir' as const, 'file' as const, 'file' as const, 'symlink' as const, 'skipped' as const),
    k: fc.nat({ max: 3 }),
    mode: fc.constantFrom(0o644, 0o755, 0o700),
  },
  { requiredKeys: ['path', 'kind', 'k'] },
);
const specsArb = fc.array(specArb, { minLength: 1, maxLength: 4 });

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const content = (tag: string, k: number): string => `${tag}:${k}`;

function toImage(s: Spec, tag: string): FileImage {
  switch (s.kind) {
    case 'absent':
      return { path: s.path, state: 'absent' };
    case 'skipped':
      return { path: s.path, state: 'skipped', why: 'unreadable' };
    case 'dir':
      return { path: s.path, state: 'dir', ...(s.mode !== undefined ? { mode: s.mode } : {}) };
    case 'symlink':
      return { path: s.path, state: 'symlink', target: TARGETS[s.k % TARGETS.length]! };
    case 'file': {
      const c = content(tag, s.k);
      return { path: s.path, state: 'file', blob: sha(c), bytes: Buffer.byteLength(c), ...(s.mode !== undefined ? { mode: s.mode } : {}) };
    }
  }
}

const fileContents = (specs: readonly Spec[], tag: string): string[] => [...new Set(specs.filter((s) => s.kind === 'file').map((s) => content(tag, s.k)))];

// ---- model and real system ----------------------------------------------------------------------

/** One record as the model expects it; `lo`..`hi` the span (ms) of the command that committed it. */
interface Rec {
  path: string;
  session: string;
  state: string;
  mode?: number;
  bytes?: number;
  lo: number;
  hi: number;
  seq: number;
}

interface Model {
  committed: Map<string, Rec>;
  /** A's batch not yet taken: its records, and whether the write's store copy (`first`) succeeds. */
  batch?: { recs: Rec[]; ok: boolean }[];
  /** Items A's `defer` queue holds. */
  items: number;
  /** Whether the last batch run had a failed copy (an item finding no batch answers with that run). */
  lastRunFailed: boolean;
  seq: number;
}

interface Real {
  store: Store;
  sessions: Record<'a1' | 'a2', Session>;
  items: (() => Promise<void>)[];
  defer: (work: () => Promise<void>) => void;
  peer: Peer;
  tag: string;
  /** End (ms) of the last record command: the next one starts on a later millisecond. */
  lastHi: number;
}

function recsOf(m: Model, session: string, images: readonly FileImage[], lo: number, hi: number): Rec[] {
  const out: Rec[] = [];
  for (const i of images) {
    if (i.state === 'skipped') continue;
    const state = i.state === 'file' ? i.blob! : i.state === 'symlink' ? `symlink:${i.target}` : i.state;
    out.push({
      path: i.path,
      session,
      state,
      ...(i.mode !== undefined ? { mode: i.mode } : {}),
      ...(i.state === 'file' ? { bytes: i.bytes } : {}),
      lo,
      hi,
      seq: ++m.seq,
    });
  }
  return out;
}

/** The latest commit wins. */
function merge(map: Map<string, Rec>, recs: readonly Rec[]): void {
  for (const r of recs) {
    const had = map.get(r.path);
    if (!had || had.seq < r.seq) map.set(r.path, r);
  }
}

/** What A's plain read gives: the committed map with the batch not yet taken applied, every write of it. */
function plainView(m: Model): Map<string, Rec> {
  const view = new Map(m.committed);
  for (const w of m.batch ?? []) merge(view, w.recs);
  return view;
}

/** The batch taken and run: its writes whose copy succeeded are committed. */
function runBatch(m: Model): void {
  if (!m.batch) return;
  for (const w of m.batch) if (w.ok) merge(m.committed, w.recs);
  m.lastRunFailed = m.batch.some((w) => !w.ok);
  m.batch = undefined;
}

/** Whether running one queue item now rejects: the batch's run, or the last run when none is queued. */
const itemRejects = (m: Model): boolean => (m.batch ? m.batch.some((w) => !w.ok) : m.lastRunFailed);

function expectOwners(actual: readonly [string, OwnerEntry][], expected: ReadonlyMap<string, Rec>, what: string): void {
  const got = new Map(actual);
  expect(got.size, `${what}: one entry per path`).toBe(actual.length);
  expect([...got.keys()].sort(), `${what}: paths`).toEqual([...expected.keys()].sort());
  for (const [path, e] of expected) {
    const a = got.get(path)!;
    const t = Date.parse(a.at);
    if (t < e.lo) throw new Error(`${what}: ${JSON.stringify(path)} holds a record older than the model's (${a.at} < ${new Date(e.lo).toISOString()}): ${JSON.stringify(a)} vs ${JSON.stringify(e)}`);
    if (t > e.hi) throw new Error(`${what}: ${JSON.stringify(path)} holds a record newer than the model's (${a.at} > ${new Date(e.hi).toISOString()}): ${JSON.stringify(a)} vs ${JSON.stringify(e)}`);
    expect({ session: a.session, state: a.state, mode: a.mode, bytes: a.bytes }, `${what}: ${JSON.stringify(path)}`).toEqual({
      session: e.session,
      state: e.state,
      mode: e.mode,
      bytes: e.bytes,
    });
  }
}

async function expectBlobsStored(r: Real, entries: readonly [string, OwnerEntry][], what: string): Promise<void> {
  for (const [path, o] of entries) {
    if (/^[0-9a-f]{64}$/.test(o.state)) expect(await r.store.ctx.blobs.has(o.state), `${what}: blob of ${JSON.stringify(path)} stored`).toBe(true);
  }
}

async function readA(r: Real, spilled: boolean): Promise<[string, OwnerEntry][]> {
  const owners = await readOwners(r.sessions.a1, spilled ? { spilled } : {});
  expect(Object.getPrototypeOf(owners), 'A reads a null-prototype map').toBe(null);
  return Object.entries(owners);
}

async function readB(r: Real): Promise<[string, OwnerEntry][]> {
  const reply = await r.peer.call({ op: 'read' });
  expect(reply.nullProto, 'B reads a null-prototype map').toBe(true);
  return reply.entries as [string, OwnerEntry][];
}

/** Waits until the clock is past the last record command's end. */
async function tick(r: Real): Promise<void> {
  while (Date.now() <= r.lastHi) await new Promise((res) => setTimeout(res, 1));
}

/**
 * An A write's images and its `first`: content not carried inline is stored before the record (as a
 * settle does); inline content is copied by `first`, which may fail (a full disk): then that write is
 * not recorded.
 */
async function prepareWrite(specs: Spec[], firstKind: First, r: Real): Promise<{ images: FileImage[]; first?: () => Promise<void> }> {
  const images = specs.map((s) => toImage(s, r.tag));
  const contents = fileContents(specs, r.tag);
  const store = async (): Promise<void> => {
    for (const c of contents) await r.store.ctx.blobs.put(Buffer.from(c));
  };
  if (firstKind === 'none') await store();
  const first = firstKind === 'ok' ? store : firstKind === 'fail' ? () => Promise.reject(new Error('copy failed')) : undefined;
  return { images, ...(first ? { first } : {}) };
}

/** Runs the queue's first item; whether it rejected (the daemon's queue logs that). */
async function runItem(r: Real): Promise<boolean | undefined> {
  const item = r.items.shift();
  if (!item) return undefined;
  return item().then(
    () => false,
    () => true,
  );
}

// ---- commands -----------------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<Model, Real>;
type First = 'none' | 'ok' | 'fail';

/** A records `specs` as session `who`: queued behind the answer (defer), or at once (defer unset). */
class ARecord implements Cmd {
  constructor(
    readonly specs: Spec[],
    readonly first: First,
    readonly who: 'a1' | 'a2',
    readonly queued: boolean,
  ) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const { images, first } = await prepareWrite(this.specs, this.first, r);
    const warnings: string[] = [];
    const session = r.sessions[this.who];
    await tick(r);
    const lo = Date.now();
    if (this.queued) {
      await recordOwnershipAfter(session, images, warnings, first);
    } else {
      delete r.store.ctx.options.defer;
      try {
        await recordOwnershipAfter(session, images, warnings, first);
      } finally {
        r.store.ctx.options.defer = r.defer;
      }
    }
    const hi = (r.lastHi = Date.now());
    const recs = recsOf(m, session.id, images, lo, hi);
    if (this.queued) {
      if (!m.batch) {
        m.batch = [];
        m.items++;
      }
      m.batch.push({ recs, ok: this.first !== 'fail' });
      expect(warnings).toEqual([]);
    } else {
      if (this.first !== 'fail') merge(m.committed, recs);
      expect(warnings.length, 'a failed copy at once is a warning').toBe(this.first === 'fail' ? 1 : 0);
    }
    expect(r.items.length, 'one queue item per batch').toBe(m.items);
  }
  toString = (): string => `A.record${this.queued ? 'Queued' : 'Now'}(${this.who}, first=${this.first}, ${JSON.stringify(this.specs)})`;
}

/** B records `specs` at once (its blobs stored first). With `whileRunning`, while A's queue runs an item. */
class BRecord implements Cmd {
  constructor(
    readonly specs: Spec[],
    readonly whileRunning: boolean,
  ) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const images = this.specs.map((s) => toImage(s, r.tag));
    await tick(r);
    const rejects = itemRejects(m);
    const lo = Date.now();
    const item = this.whileRunning ? runItem(r) : Promise.resolve(undefined);
    await r.peer.call({ op: 'record', images, contents: fileContents(this.specs, r.tag) });
    const hi = (r.lastHi = Date.now());
    const rejected = await item;
    if (rejected !== undefined) {
      m.items--;
      runBatch(m);
      expect(rejected, 'the queue item rejects when a copy of its batch failed').toBe(rejects);
    }
    merge(m.committed, recsOf(m, 'b1', images, lo, hi));
  }
  toString = (): string => `B.record${this.whileRunning ? 'WhileARuns' : ''}(${JSON.stringify(this.specs)})`;
}

/** A's queue runs its first item (`all`: drains it). */
class ARunQueue implements Cmd {
  constructor(readonly all: boolean) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    do {
      const rejects = itemRejects(m);
      const rejected = await runItem(r);
      if (rejected === undefined) break;
      m.items--;
      runBatch(m);
      expect(rejected, 'the queue item rejects when a copy of its batch failed').toBe(rejects);
    } while (this.all);
    expect(r.items.length).toBe(m.items);
  }
  toString = (): string => (this.all ? 'A.drain' : 'A.runItem');
}

/**
 * A reads (`spilled` or plain); with `item`, while its queue runs an item started before the read
 * (`runFirst`: the batch is taken by the run) or after the read's start (`readFirst`).
 */
class ARead implements Cmd {
  constructor(
    readonly spilled: boolean,
    readonly item: 'none' | 'runFirst' | 'readFirst',
  ) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const rejects = itemRejects(m);
    const hadItem = this.item !== 'none' && r.items.length > 0;
    let run: Promise<boolean | undefined> = Promise.resolve(undefined);
    let read: Promise<[string, OwnerEntry][]>;
    if (this.item === 'runFirst') {
      run = runItem(r);
      read = readA(r, this.spilled);
    } else {
      read = readA(r, this.spilled);
      if (this.item === 'readFirst') run = runItem(r);
    }
    const [rejected, got] = await Promise.all([run, read]);
    // A plain read that started before the batch was taken applies the whole batch in memory.
    const expected = this.spilled || this.item === 'runFirst' || !hadItem ? undefined : plainView(m);
    if (hadItem) {
      m.items--;
      runBatch(m);
      expect(rejected, 'the queue item rejects when a copy of its batch failed').toBe(rejects);
    }
    if (this.spilled) runBatch(m);
    expectOwners(got, expected ?? (this.spilled ? m.committed : plainView(m)), `A's ${this.spilled ? 'spilled' : 'plain'} read`);
    if (this.spilled) await expectBlobsStored(r, got, "A's spilled read");
  }
  toString = (): string => `A.read(${this.spilled ? 'spilled' : 'plain'}${this.item === 'none' ? '' : `, ${this.item}`})`;
}

/**
 * A reads (`spilled` or plain) and, while the read is under way, queues a write (a settle answered
 * meanwhile). The read may order itself before that write or after it, but a spilled read only
 * after it when the write's copy succeeds: every blob it names must be stored.
 */
class AReadWhileQueued implements Cmd {
  constructor(
    readonly spilled: boolean,
    readonly specs: Spec[],
    readonly first: First,
    readonly who: 'a1' | 'a2',
  ) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const { images, first } = await prepareWrite(this.specs, this.first, r);
    const session = r.sessions[this.who];
    await tick(r);
    const read = readA(r, this.spilled);
    const lo = Date.now();
    await recordOwnershipAfter(session, images, [], first);
    const hi = (r.lastHi = Date.now());
    const got = await read;
    if (this.spilled) runBatch(m);
    const before = this.spilled ? new Map(m.committed) : plainView(m);
    const recs = recsOf(m, session.id, images, lo, hi);
    if (!m.batch) {
      m.batch = [];
      m.items++;
    }
    m.batch.push({ recs, ok: this.first !== 'fail' });
    const after = plainView(m);
    const what = `A's ${this.spilled ? 'spilled' : 'plain'} read while a write is queued`;
    const matches = (expected: ReadonlyMap<string, Rec>): boolean => {
      try {
        expectOwners(got, expected, what);
        return true;
      } catch {
        return false;
      }
    };
    if (!matches(before) && (this.spilled && this.first === 'fail' ? true : !matches(after))) expectOwners(got, before, what);
    if (this.spilled) await expectBlobsStored(r, got, what);
    expect(r.items.length, 'one queue item per batch').toBe(m.items);
  }
  toString = (): string => `A.read(${this.spilled ? 'spilled' : 'plain'}, while ${this.who} queues first=${this.first} ${JSON.stringify(this.specs)})`;
}

/**
 * B reads the index file: the committed map, every blob it names stored. With `whileRunning`, while
 * A's queue runs an item: the map before that batch or after it, never a part of it.
 */
class BRead implements Cmd {
  constructor(readonly whileRunning: boolean) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const before = new Map(m.committed);
    const rejects = itemRejects(m);
    const item = this.whileRunning ? runItem(r) : Promise.resolve(undefined);
    const [got, rejected] = await Promise.all([readB(r), item]);
    if (rejected !== undefined) {
      m.items--;
      runBatch(m);
      expect(rejected, 'the queue item rejects when a copy of its batch failed').toBe(rejects);
    }
    const matches = (expected: ReadonlyMap<string, Rec>): boolean => {
      try {
        expectOwners(got, expected, '');
        return true;
      } catch {
        return false;
      }
    };
    if (!matches(before)) expectOwners(got, m.committed, `B's read${this.whileRunning ? ' while A runs its queue' : ''}`);
    await expectBlobsStored(r, got, "B's read");
  }
  toString = (): string => `B.read${this.whileRunning ? 'WhileARuns' : ''}`;
}

const first = fc.constantFrom<First>('none', 'ok', 'ok', 'fail');
const who = fc.constantFrom<'a1' | 'a2'>('a1', 'a2');
const aRecordQueued = fc.tuple(specsArb, first, who).map(([s, f, w]) => new ARecord(s, f, w, true));
const aRead = (spilled: boolean): fc.Arbitrary<Cmd> => fc.constantFrom('none' as const, 'runFirst' as const, 'readFirst' as const).map((i) => new ARead(spilled, i));
/** Listed more than once: weights (queued writes and A's reads, where the module's cases are). */
const commandArbs: fc.Arbitrary<Cmd>[] = [
  aRecordQueued,
  aRecordQueued,
  fc.tuple(specsArb, first, who).map(([s, f, w]) => new ARecord(s, f, w, false)),
  fc.tuple(specsArb, fc.boolean()).map(([s, w]) => new BRecord(s, w)),
  fc.tuple(specsArb, fc.boolean()).map(([s, w]) => new BRecord(s, w)),
  fc.boolean().map((all) => new ARunQueue(all)),
  aRead(false),
  aRead(true),
  fc.tuple(fc.boolean(), specsArb, first, who).map(([sp, s, f, w]) => new AReadWhileQueued(sp, s, f, w)),
  fc.boolean().map((w) => new BRead(w)),
];

// ---- the suite ----------------------------------------------------------------------------------

export function describeOwnerIndexModel(options: { runs: number; maxCommands: number; timeoutMs: number }): void {
  describe('owner index: queued writes against readers, in one process and across two (model)', () => {
    let dirs: TempDirs;
    let store: Store;
    let peer: Peer;
    const items: (() => Promise<void>)[] = [];
    const defer = (work: () => Promise<void>): void => void items.push(work);
    let sessions: Real['sessions'];
    let runs = 0;

    // One workspace for all runs (making sessions is most of a short run's time): each run starts
    // from an empty index.
    beforeAll(async () => {
      dirs = await makeTempDirs('ckpt-owner-model-');
      [store, peer] = await Promise.all([openStore({ dir: dirs.store, lockTimeoutMs: 60_000 }), Peer.start()]);
      store.ctx.options.defer = defer;
      const ws = await store.openWorkspace(dirs.workspace);
      sessions = { a1: await ws.create({ id: 'a1', baseline: false }), a2: await ws.create({ id: 'a2', baseline: false }) };
      const opened = await peer.call({ op: 'open', dir: dirs.store, root: dirs.workspace, session: 'b1' });
      expect(opened.workspace, 'B opened the same workspace').toBe(ws.id);
    });
    afterAll(async () => {
      await peer?.stop();
      if (store) delete store.ctx.options.defer;
      await store?.close();
      await dirs?.cleanup();
    });

    async function setup(): Promise<{ model: Model; real: Real }> {
      // What a failed run left queued runs now, so that no batch of it is left behind.
      while (items.length > 0) await items.shift()!().catch(() => {});
      await store.ctx.backend.remove(`${sessions.a1.ctx.workspace.key}/owners.json`);
      const n = ++runs;
      return {
        model: { committed: new Map(), items: 0, lastRunFailed: false, seq: 0 },
        real: { store, sessions, items, defer, peer, tag: `run${n}-${Date.now()}`, lastHi: 0 },
      };
    }

    it(
      'every read equals the model: latest commit wins, queued writes seen by this process only, blobs stored when spilled',
      async () => {
        await fc.assert(
          fc.asyncProperty(fc.commands(commandArbs, { maxCommands: options.maxCommands }), async (cmds) => {
            const s = await setup();
            await fc.asyncModelRun(() => s, cmds);
            // Drained, both processes read the same committed map.
            await new ARunQueue(true).run(s.model, s.real);
            expectOwners(await readA(s.real, false), s.model.committed, "A's read after the drain");
            const b = await readB(s.real);
            expectOwners(b, s.model.committed, "B's read after the drain");
            await expectBlobsStored(s.real, b, "B's read after the drain");
          }),
          { numRuns: options.runs },
        );
      },
      options.timeoutMs,
    );
  });
}

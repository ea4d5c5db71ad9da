// ckpt's git readers against corrupt and hostile git files (DESIGN §10 "Scans": ckpt reads git's
// index, packs, loose objects, alternates and config itself, never spawning git). Real files made
// by git (indexes v2/v3/v4 with extensions, packs with offset and ref deltas, loose objects) are
// mutated — bit flips, truncation, extension, overwritten words, spliced bytes — and hand-made packs
// carry what git never writes (a delta based on itself, ref-delta cycles within and across packs,
// huge sizes, alternates loops). Each call must return (no throw where the API promises undefined),
// in bounded time and memory, and a blob read is undefined or hashes to its id. End to end: a
// baseline scan references git's blobs, git's files are then corrupted, the files change, and
// `ckpt scan` + `ckpt restore` (children with a kill timeout) give back the tree exactly, or fail
// with a coded error — never wrong bytes, never a crash. `npm test` runs a short version;
// CKPT_RELIABILITY_FULL=1 many more runs (CKPT_GIT_FUZZ_RUNS and CKPT_GIT_FUZZ_E2E_RUNS override them).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutConversion } from '../../src/workspace/git-convert.js';
import { loadGitIndex, parseGitIndexTable } from '../../src/workspace/git-index.js';
import { openGitObjects } from '../../src/workspace/git-objects.js';
import { findGitDirs } from '../../src/workspace/git-repo.js';
import { CKPT_BIN } from '../helpers/cli.js';
import { makeTempDirs, type TempDirs } from '../helpers/temp.js';
import { RELIABILITY_FULL } from '../reliability/figures.js';
import { blobId, deltaVarint, makeSampleRepo, objectFiles, sampleFiles, writePack, type SampleRepo } from './git-files.js';

const RUNS = Number(process.env.CKPT_GIT_FUZZ_RUNS ?? (RELIABILITY_FULL ? 1500 : 60));
const E2E_RUNS = Number(process.env.CKPT_GIT_FUZZ_E2E_RUNS ?? (RELIABILITY_FULL ? 60 : 2));
/**
 * No single read may take longer (a hang or an exponential walk fails here, not at the test timeout);
 * a read that spends the whole 8 GiB budget of git-pack.ts (full runs only) may take ~15 s.
 */
const CALL_MS = RELIABILITY_FULL ? 30_000 : 3_000;

/** A mutation of a file's bytes. */
type Mutation =
  | { kind: 'flip'; at: number; bit: number }[]
  | { kind: 'truncate'; at: number }
  | { kind: 'extend'; bytes: number[] }
  | { kind: 'word'; at: number; value: number }
  | { kind: 'splice'; at: number; del: number; bytes: number[] };

const frac = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.array(fc.record({ kind: fc.constant('flip' as const), at: frac.map((f) => f), bit: fc.integer({ min: 0, max: 7 }) }), { minLength: 1, maxLength: 6 }),
  fc.record({ kind: fc.constant('truncate' as const), at: frac.map((f) => f) }),
  fc.record({ kind: fc.constant('extend' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 64 }) }),
  fc.record({ kind: fc.constant('word' as const), at: frac.map((f) => f), value: fc.constantFrom(0, 1, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0xfffffffe, 12, 0x10000) }),
  fc.record({ kind: fc.constant('splice' as const), at: frac.map((f) => f), del: fc.integer({ min: 0, max: 40 }), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 40 }) }),
);

/** `data` with mutation `m` applied; positions are fractions of the length, so one mutation fits any file. */
function mutate(data: Buffer, m: Mutation): Buffer {
  const pos = (f: number) => Math.min(data.length, Math.floor(f * data.length));
  if (Array.isArray(m)) {
    const out = Buffer.from(data);
    for (const f of m) {
      const at = Math.min(out.length - 1, pos(f.at));
      if (at >= 0) out[at] = (out[at] as number) ^ (1 << f.bit);
    }
    return out;
  }
  switch (m.kind) {
    case 'truncate':
      return data.subarray(0, pos(m.at));
    case 'extend':
      return Buffer.concat([data, Buffer.from(m.bytes)]);
    case 'word': {
      const out = Buffer.from(data);
      const at = Math.min(pos(m.at) & ~3, Math.max(0, out.length - 4));
      if (out.length >= 4) out.writeUInt32BE(m.value >>> 0, at);
      return out;
    }
    case 'splice': {
      const at = pos(m.at);
      return Buffer.concat([data.subarray(0, at), Buffer.from(m.bytes), data.subarray(Math.min(data.length, at + m.del))]);
    }
  }
}

/** Rewritten entries of a v2 pack index's offset table: large-offset references, offsets in and out of the pack, another entry's. */
const idxOffset = fc.array(fc.record({ entry: frac, value: fc.oneof(fc.constantFrom(0, 11, 12, 13, 0x7fffffff, 0x80000000, 0x80000001, 0x80000003, 0xffffffff), fc.nat(), frac.map((f) => -1 - Math.floor(f * 1e6))) }), { minLength: 1, maxLength: 3 });

function mutateIdxOffsets(data: Buffer, edits: { entry: number; value: number }[]): Buffer {
  const out = Buffer.from(data);
  const n = out.readUInt32BE(8 + 255 * 4);
  const table = 8 + 1024 + n * 24;
  for (const { entry, value } of edits) {
    const k = Math.floor(entry * n);
    // A negative value copies another entry's offset (two entries at one place).
    const v = value < 0 ? out.readUInt32BE(table + 4 * ((-value - 1) % n)) : value;
    out.writeUInt32BE(v >>> 0, table + 4 * k);
  }
  return out;
}

/** Where each entry's name varint (v4 prefix compression) starts in a v4 index. */
function v4StripOffsets(data: Buffer): number[] {
  const out: number[] = [];
  let pos = 12;
  for (let n = data.readUInt32BE(8); n > 0; n--) {
    const flags = data.readUInt16BE(pos + 60);
    pos += 62 + (flags & 0x4000 ? 2 : 0);
    out.push(pos);
    while ((data[pos] as number) & 0x80) pos++;
    pos = data.indexOf(0, pos + 1) + 1;
  }
  return out;
}

/** Runs `f`, failing when it throws or takes longer than CALL_MS. */
function bounded<T>(what: string, f: () => T): T {
  const t0 = performance.now();
  let out: T;
  try {
    out = f();
  } catch (e) {
    throw new Error(`${what} threw: ${(e as Error).stack ?? String(e)}`);
  }
  const ms = performance.now() - t0;
  if (ms > CALL_MS) throw new Error(`${what} took ${Math.round(ms)} ms`);
  return out;
}

const temps: TempDirs[] = [];
afterAll(async () => {
  for (const t of temps.splice(0)) await t.cleanup();
});

describe('git readers on mutated real git files', () => {
  const repos: SampleRepo[] = [];
  beforeAll(async () => {
    const t = await makeTempDirs('ckpt-gitfuzz-');
    temps.push(t);
    repos.push(makeSampleRepo(join(t.base, 'v2'), { indexVersion: 2, loose: true }));
    repos.push(makeSampleRepo(join(t.base, 'v3'), { indexVersion: 3, refDeltas: true }));
    repos.push(makeSampleRepo(join(t.base, 'v4'), { indexVersion: 4, refDeltas: true, loose: true }));
    for (const r of repos) pristineBlobs.set(r, openGitObjects(join(r.dir, '.git')).readBlobs(r.allBlobs) as Buffer[]);
  });
  const pristineBlobs = new Map<SampleRepo, Buffer[]>();

  it('the index (v2, v3, v4 with extensions): parse and load return or give undefined, entries stay consistent', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), mutation, (r, m) => {
        const repo = repos[r]!;
        const path = join(repo.dir, '.git', 'index');
        const pristine = fs.readFileSync(path);
        const bad = mutate(pristine, m);
        const table = bounded('parseGitIndexTable', () => parseGitIndexTable(bad));
        if (table) {
          for (let j = 0; j < table.count; j++) {
            expect(table.paths[j]).not.toContain('\0');
            expect(table.oid(j)).toMatch(/^[0-9a-f]{40}$/);
          }
        }
        fs.writeFileSync(path, bad);
        try {
          bounded('loadGitIndex', () => loadGitIndex(repo.dir));
        } finally {
          fs.writeFileSync(path, pristine);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('a v4 index whose name varints (prefix compression) are rewritten: undefined or consistent', () => {
    const repo = repos[2]!;
    const pristine = fs.readFileSync(join(repo.dir, '.git', 'index'));
    const at = v4StripOffsets(pristine);
    expect(at.length).toBeGreaterThan(2);
    const varint = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 7 }).map((b) => b.map((x, k) => (k < b.length - 1 ? x | 0x80 : x & 0x7f)));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: at.length - 1 }), varint, fc.boolean(), (k, bytes, keepOld) => {
        const v = at[k] as number;
        const bad = Buffer.concat([pristine.subarray(0, v), Buffer.from(bytes), pristine.subarray(keepOld ? v : v + 1)]);
        const table = bounded('parseGitIndexTable', () => parseGitIndexTable(bad));
        if (table) {
          expect(table.paths.length).toBeLessThanOrEqual(at.length);
          for (const p of table.paths) expect(p.length).toBeLessThan(4096);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('packs, pack indexes and loose objects: has, objectSizes, readBlobs and seedBlob never throw, and every blob read hashes to its id', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), fc.constantFrom('idx', 'idx-offset', 'pack', 'loose'), frac, mutation, idxOffset, (r, which, pick, m, offset) => {
        const repo = repos[r]!;
        const files = objectFiles(repo.dir)[which === 'idx-offset' ? 'idx' : (which as 'idx' | 'pack' | 'loose')];
        if (files.length === 0) return;
        const path = files[Math.floor(pick * files.length)]!;
        const pristine = fs.readFileSync(path);
        fs.chmodSync(path, 0o644);
        fs.writeFileSync(path, which === 'idx-offset' ? mutateIdxOffsets(pristine, offset) : mutate(pristine, m));
        try {
          const objects = openGitObjects(join(repo.dir, '.git'));
          bounded('has', () => repo.allBlobs.map((oid) => objects.hasHex(oid)));
          // Sizes from the headers (a scan's check of line-ending conversions): a number or undefined.
          for (const size of bounded('objectSizes', () => objects.objectSizes(repo.allBlobs.map((oid) => Buffer.from(oid, 'hex'))))) {
            if (size !== undefined) expect(Number.isSafeInteger(size) && size >= 0).toBe(true);
          }
          const read = bounded('readBlobs', () => objects.readBlobs(repo.allBlobs));
          read.forEach((data, k) => {
            if (data) expect(blobId(data)).toBe(repo.allBlobs[k]);
          });
          // Seeding every blob with its right content (as a scan does with what it just read), then
          // reading again: still verified.
          const contents = pristineBlobs.get(repo)!;
          bounded('seedBlob', () => repo.allBlobs.forEach((oid, k) => k % 2 === 0 && objects.seedBlob(oid, contents[k]!)));
          bounded('readBlobs after a seed', () => objects.readBlobs(repo.allBlobs)).forEach((data, k) => {
            if (data) expect(blobId(data)).toBe(repo.allBlobs[k]);
          });
        } finally {
          fs.writeFileSync(path, pristine);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('config with include / includeIf and attributes files: checkoutConversion answers in bounded time', () => {
    const repo = repos[0]!;
    const dirs = findGitDirs(repo.dir)!;
    const configPath = join(dirs.commondir, 'config');
    const pristine = fs.readFileSync(configPath);
    const extra = join(dirs.commondir, 'extra.inc');
    const fragment = fc.constantFrom(
      '[include]\n\tpath = config\n',
      '[include]\n\tpath = extra.inc\n',
      '[includeIf "gitdir:~/"]\n\tpath = ../.git/config\n',
      '[include]\n\tpath = /dev/zero\n',
      '[include]\n\tpath = ~/nothing\n',
      '[core]\n\tautocrlf = true\n',
      '[core]\n\tautocrlf = false\n',
      '[core]\n\teol = crlf\n',
      '[core]\n\tattributesFile = extra.attr\n',
      '[core "sub"]\n\tautocrlf = true\n',
      '[core]\n\tautocrlf = "tr\\\nue" ; comment\n',
      '[\n',
      '\\\n',
      '"\n',
      'path = config\n',
    );
    const attrLine = fc.constantFrom('*.txt eol=crlf\n', '"a b" filter=lfs\n', '!x ident\n', '[attr]m ident\n*.md m\n', '[attr]m m\n*.c m\n', '\\\n', 'dir/** working-tree-encoding=UTF-16\n', '** -text\n', '*.sh\n', '[[[ filter=x\n');
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 8 }), fc.array(fragment, { maxLength: 5 }), fc.array(attrLine, { maxLength: 6 }), (main, inc, attrs) => {
        fs.writeFileSync(configPath, Buffer.concat([pristine, Buffer.from(main.join(''))]));
        fs.writeFileSync(extra, inc.join(''));
        fs.writeFileSync(join(dirs.commondir, 'extra.attr'), attrs.join(''));
        fs.mkdirSync(join(dirs.commondir, 'info'), { recursive: true });
        fs.writeFileSync(join(dirs.commondir, 'info', 'attributes'), attrs.reverse().join(''));
        try {
          const c = bounded('checkoutConversion', () => checkoutConversion(dirs, repo.dir, [], { HOME: repo.dir }));
          if (typeof c === 'function') bounded('converts', () => ['big.txt', 'dir/a.txt', 'a b', 'x'].map((p) => c(p)));
        } finally {
          fs.writeFileSync(configPath, pristine);
          fs.rmSync(join(dirs.commondir, 'info', 'attributes'), { force: true });
        }
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});

describe('a hostile .git file, commondir and alternates text', () => {
  it('findGitDirs, loadGitIndex and openGitObjects answer without throwing', async () => {
    const t = await makeTempDirs('ckpt-gitfuzz-dotgit-');
    temps.push(t);
    const repo = makeSampleRepo(join(t.base, 'real'), { commits: 1 });
    const ws = join(t.base, 'wt');
    fs.mkdirSync(ws);
    const target = fc.constantFrom('.', '.git', '..', '/dev/zero', '/dev/null', '/nonexistent', join(repo.dir, '.git'), join(repo.dir, '.git', 'index'), join(repo.dir, '.git', 'objects'), 'a\nb', '');
    const text = fc.oneof(target, fc.string({ maxLength: 40 }));
    fc.assert(
      fc.property(fc.oneof(target.map((p) => `gitdir: ${p}\n`), text), fc.option(text), fc.option(text), (dotGit, commondir, alternates) => {
        fs.rmSync(join(ws, '.git'), { recursive: true, force: true });
        fs.writeFileSync(join(ws, '.git'), dotGit);
        const common = join(repo.dir, '.git', 'commondir');
        const alt = join(repo.dir, '.git', 'objects', 'info', 'alternates');
        fs.mkdirSync(join(alt, '..'), { recursive: true });
        if (commondir !== null) fs.writeFileSync(common, commondir);
        if (alternates !== null) fs.writeFileSync(alt, alternates);
        try {
          const dirs = bounded('findGitDirs', () => findGitDirs(ws));
          bounded('loadGitIndex', () => loadGitIndex(ws));
          if (dirs) {
            const objects = bounded('openGitObjects', () => openGitObjects(dirs.commondir));
            const read = bounded('readBlobs', () => objects.readBlobs(repo.allBlobs));
            read.forEach((d, k) => d && expect(blobId(d)).toBe(repo.allBlobs[k]));
          }
        } finally {
          fs.rmSync(common, { force: true });
          fs.rmSync(alt, { force: true });
        }
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});

describe('hand-made hostile packs and alternates', () => {
  let base: string;
  beforeAll(async () => {
    const t = await makeTempDirs('ckpt-gitfuzz-hostile-');
    temps.push(t);
    base = t.base;
  });
  const blob = Buffer.alloc(70_000, 'x');
  const blobOid = blobId(blob);
  const copyAll = (size: number) => Buffer.concat([deltaVarint(blob.length), deltaVarint(size), Buffer.alloc(Math.ceil(size / 65536), 0x80)]);
  const wanted = 'ab'.repeat(20);
  const other = 'cd'.repeat(20);
  let n = 0;
  /** A fresh objects folder with `packs` written into it. */
  const objectsWith = (packs: Parameters<typeof writePack>[2][]): string => {
    const objects = join(base, `o${n++}`, 'objects');
    packs.forEach((entries, k) => writePack(join(objects, 'pack'), `p${k}`, entries));
    return objects;
  };
  const cases: [string, () => string][] = [
    ['an offset delta based on itself', () => objectsWith([[{ id: wanted, type: 'ofs', back: 0, data: copyAll(65536) }]])],
    ['an offset delta before the pack start', () => objectsWith([[{ id: wanted, type: 'ofs', back: 1 << 20, data: copyAll(65536) }]])],
    ['a ref delta based on itself', () => objectsWith([[{ id: wanted, type: 'ref', ref: wanted, data: copyAll(65536) }]])],
    ['a ref-delta cycle in one pack', () => objectsWith([[{ id: wanted, type: 'ref', ref: other, data: copyAll(65536) }, { id: other, type: 'ref', ref: wanted, data: copyAll(65536) }]])],
    ['a ref-delta cycle across two packs', () => objectsWith([[{ id: wanted, type: 'ref', ref: other, data: copyAll(65536) }], [{ id: other, type: 'ref', ref: wanted, data: copyAll(65536) }]])],
    ['a blob whose header says 4 GiB', () => objectsWith([[{ id: wanted, type: 'blob', size: 2 ** 32, data: Buffer.from('tiny') }]])],
    ['a blob whose header says 2^60 bytes', () => objectsWith([[{ id: wanted, type: 'blob', size: 2 ** 60, data: Buffer.from('tiny') }]])],
    ['a delta that builds a 3 GiB object from a 200-byte pack entry', () => objectsWith([[{ id: blobOid, type: 'blob', data: blob }, { id: wanted, type: 'ofs', ofs: 0, data: copyAll(3 * 1024 ** 3) }]])],
    [
      'a chain of 5,000 small offset deltas (deeper than git allows)',
      () => {
        const small = Buffer.from('small base\n');
        const step = Buffer.concat([deltaVarint(small.length), deltaVarint(small.length), Buffer.from([small.length]), small]);
        const entries: Parameters<typeof writePack>[2] = [{ id: blobId(small), type: 'blob', data: small }];
        for (let k = 1; k <= 5000; k++) entries.push({ id: k === 5000 ? wanted : k.toString(16).padStart(40, 'e'), type: 'ofs', ofs: k - 1, data: step });
        return objectsWith([entries]);
      },
    ],
    ...(RELIABILITY_FULL
      ? ([
          [
            'a chain of 40 offset deltas each rebuilding 512 MiB (the read budget stops it)',
            () => {
              const size = 512 * 1024 * 1024;
              const entries: Parameters<typeof writePack>[2] = [{ id: blobOid, type: 'blob', data: blob }];
              for (let k = 1; k <= 40; k++) entries.push({ id: k === 40 ? wanted : k.toString(16).padStart(40, 'e'), type: 'ofs', ofs: k - 1, data: Buffer.concat([deltaVarint(k === 1 ? blob.length : size), deltaVarint(size), Buffer.alloc(size / 65536, 0x80)]) });
              return objectsWith([entries]);
            },
          ],
        ] as [string, () => string][])
      : []),
    ['a delta whose base size is wrong', () => objectsWith([[{ id: blobOid, type: 'blob', data: blob }, { id: wanted, type: 'ofs', ofs: 0, data: Buffer.concat([deltaVarint(5), deltaVarint(1), Buffer.from([1, 65])]) }]])],
    [
      'alternates in a loop (a -> b -> a, and a to itself)',
      () => {
        const a = objectsWith([[{ id: wanted, type: 'ref', ref: other, data: copyAll(65536) }]]);
        const b = objectsWith([[{ id: other, type: 'ref', ref: wanted, data: copyAll(65536) }]]);
        fs.mkdirSync(join(a, 'info'), { recursive: true });
        fs.mkdirSync(join(b, 'info'), { recursive: true });
        fs.writeFileSync(join(a, 'info', 'alternates'), `${b}\n${a}\n.\n`);
        fs.writeFileSync(join(b, 'info', 'alternates'), `${a}\n../../${a.split('/').slice(-2).join('/')}\n`);
        return a;
      },
    ],
    [
      'alternates nested deeper than git allows, each with a ref delta on the next',
      () => {
        const chain = Array.from({ length: 9 }, (_, k) => objectsWith([[{ id: k === 0 ? wanted : `${k}`.padStart(40, '0'), type: 'ref', ref: `${k + 1}`.padStart(40, '0'), data: copyAll(65536) }]]));
        chain.forEach((o, k) => {
          fs.mkdirSync(join(o, 'info'), { recursive: true });
          if (k + 1 < chain.length) fs.writeFileSync(join(o, 'info', 'alternates'), `${chain[k + 1]}\n`);
        });
        return chain[0]!;
      },
    ],
  ];
  for (const [name, make] of cases) {
    it(`${name}: read as missing, promptly, within the size cap`, { timeout: 120_000 }, () => {
      const objects = make();
      const store = openGitObjects(join(objects, '..'));
      const rss = process.memoryUsage().rss;
      expect(bounded('readBlobs', () => store.readBlobs([wanted, other]))).toEqual([undefined, undefined]);
      bounded('objectSizes', () => store.objectSizes([Buffer.from(wanted, 'hex'), Buffer.from(other, 'hex')]));
      expect(bounded('seedBlob', () => store.seedBlob(blobOid, blob))).toBeTypeOf('boolean');
      expect(bounded('readBlobs after a seed', () => store.readBlobs([wanted]))).toEqual([undefined]);
      // The size cap (512 MiB per object) bounds what one read may allocate.
      expect(process.memoryUsage().rss - rss).toBeLessThan(1.5 * 1024 ** 3);
    });
  }
});

describe('scan and restore after git files are corrupted (CLI, end to end)', () => {
  const ckpt = (dirs: TempDirs, args: string[]) => {
    const r = spawnSync(process.execPath, [CKPT_BIN, '--store', dirs.store, '--workspace', dirs.workspace, ...args], { cwd: dirs.workspace, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL', env: { ...process.env, NO_COLOR: '1', CKPT_NO_DAEMON: '1' } });
    return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  };
  const tree = (root: string): Map<string, string> => {
    const out = new Map<string, string>();
    const walk = (rel: string) => {
      for (const e of fs.readdirSync(join(root, rel), { withFileTypes: true })) {
        const p = rel ? `${rel}/${e.name}` : e.name;
        if (p === '.git') continue;
        if (e.isDirectory()) walk(p);
        else out.set(p, `${(fs.lstatSync(join(root, p)).mode & 0o777).toString(8)} ${fs.readFileSync(join(root, p)).toString('base64')}`);
      }
    };
    walk('');
    return out;
  };
  const target = fc.constantFrom('index', 'idx', 'idx-offset', 'pack', 'loose', 'config', 'packed-refs', 'HEAD');

  it('gives back the tree exactly, or fails with a coded error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 4 }), target, frac, mutation, idxOffset, fc.boolean(), fc.boolean(), async (version, which, pick, m, offset, deleteAll, older) => {
        const dirs = await makeTempDirs('ckpt-gitfuzz-e2e-');
        try {
          const repo = makeSampleRepo(dirs.workspace, { indexVersion: version as 2 | 3 | 4, refDeltas: version !== 2, loose: true });
          const before = tree(repo.dir);
          const created = ckpt(dirs, ['session', 'new', '--json']);
          expect(created.code, created.stderr).toBe(0);
          // Corrupt one of git's files after the baseline referenced git's blobs.
          const files = which === 'index' || which === 'config' || which === 'packed-refs' || which === 'HEAD' ? [join(repo.dir, '.git', which)] : objectFiles(repo.dir)[which === 'idx-offset' ? 'idx' : (which as 'idx' | 'pack' | 'loose')];
          const path = files[Math.floor(pick * files.length)];
          if (path && fs.existsSync(path)) {
            fs.chmodSync(path, 0o644);
            fs.writeFileSync(path, which === 'idx-offset' ? mutateIdxOffsets(fs.readFileSync(path), offset) : mutate(fs.readFileSync(path), m));
          }
          expect(ckpt(dirs, ['turn', '--json']).code).toBe(0);
          // Deleted, rewritten, or (`older`) checked out as an earlier commit had it: content git
          // holds, which the scan hands to git's reader as a seed (GitObjects.seedBlob).
          const changed = new Map<string, string | undefined>();
          const earlier = sampleFiles(1);
          for (const [p, v] of before) {
            const text = older ? (earlier.get(p) ?? 'changed\n') : 'changed\n';
            if (deleteAll || p.includes('a')) fs.rmSync(join(repo.dir, p));
            else fs.writeFileSync(join(repo.dir, p), text);
            changed.set(p, deleteAll || p.includes('a') ? undefined : `${v.split(' ')[0]} ${Buffer.from(text).toString('base64')}`);
          }
          const scanned = ckpt(dirs, ['scan', '--json']);
          expect(scanned.signal, scanned.stderr).toBeNull();
          if (scanned.code !== 0) {
            expect(JSON.parse(scanned.stderr).error.code, scanned.stderr).toMatch(/^[A-Z_]+$/);
            return;
          }
          const restored = ckpt(dirs, ['restore', '1', '--json', '--force', '--yes']);
          expect(restored.signal, restored.stderr).toBeNull();
          if (restored.code !== 0) {
            expect(JSON.parse(restored.stderr).error.code, restored.stderr).toMatch(/^[A-Z_]+$/);
            return;
          }
          // Every file comes back with the baseline's bytes, except one whose before-content git lost
          // after the baseline referenced it: the scan says so (`skipped`, git-object-missing, DESIGN
          // §10 "Scans") and the restore leaves what is there — never other bytes.
          const skipped = new Set(((JSON.parse(scanned.stdout).skipped ?? []) as { path: string; why: string }[]).filter((k) => k.why.startsWith('git-object-missing')).map((k) => k.path));
          const after = tree(repo.dir);
          for (const [p, v] of before) {
            if (skipped.has(p)) expect([v, undefined, changed.get(p)], p).toContain(after.get(p));
            else expect(after.get(p), p).toBe(v);
          }
          for (const p of after.keys()) expect(before.has(p), p).toBe(true);
        } finally {
          await dirs.cleanup();
        }
      }),
      { numRuns: E2E_RUNS },
    );
  }, 30_000 * E2E_RUNS);
});

// Real and hostile git files for the git-reader fuzz tests (git-readers.fuzz.test.ts): a repository
// made by spawning git (several commits, so packs hold offset and ref deltas; an index in v2, v3 or
// v4 with extensions; loose objects), and a writer of packs and pack indexes of our own for what git
// never writes (delta loops, a delta based on itself, ref-delta cycles across packs, huge sizes).
// The readers verify nothing but an object's id, so an index written here needs no valid checksums.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Files of the sample repository: some similar (delta chains), one large, one in a folder, one executable. */
export function sampleFiles(round: number): Map<string, string> {
  const files = new Map<string, string>();
  const line = (k: number) => `line ${k} of a file that changes a little every commit\n`;
  let text = '';
  for (let k = 0; k < 300; k++) text += line(k);
  files.set('big.txt', text + `round ${round}\n`);
  files.set('dir/a.txt', `a ${round}\n`.repeat(20));
  files.set('dir/sub/b.md', text.slice(0, 2000 + round * 37));
  files.set('c.sh', `#!/bin/sh\necho ${round}\n`);
  files.set('same.txt', 'same in every commit\n');
  return files;
}

export interface SampleRepo {
  dir: string;
  /** Every blob of the last commit, by path: its git id. */
  blobs: Map<string, string>;
  /** Every blob id in the repository (all commits). */
  allBlobs: string[];
}

/**
 * A work tree with `commits` commits, repacked (`git repack -adf --depth`, offset deltas; a second
 * pack with ref deltas when `refDeltas`), some loose objects left, and its index rewritten in
 * `indexVersion` with the TREE, REUC-free, UNTR, EOIE and IEOT extensions.
 */
export function makeSampleRepo(dir: string, options: { commits?: number; indexVersion?: 2 | 3 | 4; refDeltas?: boolean; loose?: boolean } = {}): SampleRepo {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  const commits = options.commits ?? 4;
  for (let round = 0; round < commits; round++) {
    for (const [path, content] of sampleFiles(round)) {
      fs.mkdirSync(join(dir, path, '..'), { recursive: true });
      fs.writeFileSync(join(dir, path), content);
      if (path.endsWith('.sh')) fs.chmodSync(join(dir, path), 0o755);
    }
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', `round ${round}`);
    if (round === Math.floor(commits / 2)) {
      // First half in a pack with ref deltas (no offset deltas), the rest packed below.
      if (options.refDeltas) git(dir, '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-adq', '--depth=50', '--window=50');
    }
  }
  if (options.refDeltas) git(dir, '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-dq', '--depth=50', '--window=50');
  else git(dir, 'repack', '-adfq', '--depth=50', '--window=50');
  if (options.loose) {
    fs.writeFileSync(join(dir, 'loose.txt'), 'a loose object\n'.repeat(9));
    git(dir, 'add', 'loose.txt');
  }
  // Work tree files older than the index: a scan references them by git blob id (not racily clean).
  const past = new Date(Date.now() - 60_000);
  for (const path of git(dir, 'ls-files').trim().split('\n')) fs.utimesSync(join(dir, path), past, past);
  git(dir, 'update-index', '--refresh');
  const v = options.indexVersion ?? 2;
  git(dir, 'config', 'core.untrackedCache', 'true');
  git(dir, '-c', 'index.recordEndOfIndexEntries=true', '-c', 'index.recordOffsetTable=true', '-c', 'index.threads=2', 'update-index', '--index-version', String(v), '--untracked-cache');
  git(dir, 'status', '--porcelain'); // writes the untracked cache extension
  const blobs = new Map<string, string>();
  for (const l of git(dir, 'ls-files', '-s').trim().split('\n')) {
    const m = /^\d+ ([0-9a-f]{40}) \d\t(.+)$/.exec(l);
    if (m) blobs.set(m[2] as string, m[1] as string);
  }
  const allBlobs = git(dir, 'cat-file', '--batch-all-objects', '--batch-check')
    .trim()
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f[1] === 'blob')
    .map((f) => f[0] as string);
  return { dir, blobs, allBlobs };
}

/** Files under `.git/objects` of a repository: pack indexes, packs, loose objects. */
export function objectFiles(dir: string): { idx: string[]; pack: string[]; loose: string[] } {
  const objects = join(dir, '.git', 'objects');
  const packDir = join(objects, 'pack');
  const names = fs.existsSync(packDir) ? fs.readdirSync(packDir) : [];
  const loose: string[] = [];
  for (const d of fs.readdirSync(objects)) if (/^[0-9a-f]{2}$/.test(d)) for (const f of fs.readdirSync(join(objects, d))) loose.push(join(objects, d, f));
  return {
    idx: names.filter((n) => n.endsWith('.idx')).map((n) => join(packDir, n)),
    pack: names.filter((n) => n.endsWith('.pack')).map((n) => join(packDir, n)),
    loose,
  };
}

export const blobId = (data: Uint8Array): string => createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');

/** One entry of a hand-made pack. `ofs`: offset-delta base (entry number); `ref`: ref-delta base id. */
export interface PackEntry {
  /** The id the pack index lists for this entry (for a delta: any id the test picks). */
  id: string;
  type: 'blob' | 'ofs' | 'ref';
  /** Inflated bytes: a blob's content, or a delta. */
  data: Buffer;
  /** Size in the entry header; defaults to data's length (a lie for "huge size" cases). */
  size?: number;
  ofs?: number;
  /** Offset back, overriding `ofs` (0: the entry itself). */
  back?: number;
  ref?: string;
}

function header(type: number, size: number): Buffer {
  const out: number[] = [];
  let c = (type << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    out.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  out.push(c);
  return Buffer.from(out);
}

function ofsBytes(back: number): Buffer {
  const out = [back & 0x7f];
  let n = Math.floor(back / 128);
  while (n > 0) {
    n -= 1;
    out.unshift(0x80 | (n & 0x7f));
    n = Math.floor(n / 128);
  }
  return Buffer.from(out);
}

/** A delta's size varint. */
export function deltaVarint(n: number): Buffer {
  const out: number[] = [];
  do {
    let c = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) c |= 0x80;
    out.push(c);
  } while (n > 0);
  return Buffer.from(out);
}

/** Writes `pack-<name>.pack` and a v2 `.idx` in `packDir` holding `entries`. */
export function writePack(packDir: string, name: string, entries: PackEntry[]): void {
  fs.mkdirSync(packDir, { recursive: true });
  const parts: Buffer[] = [];
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(entries.length, 8);
  parts.push(head);
  let at = 12;
  const offsets: number[] = [];
  for (const e of entries) {
    offsets.push(at);
    const typeNum = e.type === 'blob' ? 3 : e.type === 'ofs' ? 6 : 7;
    const bits: Buffer[] = [header(typeNum, e.size ?? e.data.length)];
    if (e.type === 'ofs') bits.push(ofsBytes(e.back ?? at - (offsets[e.ofs ?? 0] as number)));
    if (e.type === 'ref') bits.push(Buffer.from(e.ref ?? '', 'hex'));
    bits.push(deflateSync(e.data));
    const b = Buffer.concat(bits);
    parts.push(b);
    at += b.length;
  }
  const body = Buffer.concat(parts);
  const pack = Buffer.concat([body, createHash('sha1').update(body).digest()]);
  fs.writeFileSync(join(packDir, `pack-${name}.pack`), pack);
  const order = entries.map((e, k) => ({ id: Buffer.from(e.id, 'hex'), off: offsets[k] as number })).sort((a, b) => Buffer.compare(a.id, b.id));
  const fan = Buffer.alloc(1024);
  for (let b = 0; b < 256; b++) fan.writeUInt32BE(order.filter((o) => (o.id[0] as number) <= b).length, b * 4);
  const crc = Buffer.alloc(order.length * 4);
  const offs = Buffer.alloc(order.length * 4);
  order.forEach((o, k) => offs.writeUInt32BE(o.off, k * 4));
  const idxBody = Buffer.concat([Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]), fan, ...order.map((o) => o.id), crc, offs, pack.subarray(pack.length - 20)]);
  fs.writeFileSync(join(packDir, `pack-${name}.idx`), Buffer.concat([idxBody, createHash('sha1').update(idxBody).digest()]));
}

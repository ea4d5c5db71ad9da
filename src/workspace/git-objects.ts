// A git repository's object store as a scan reads it (DESIGN §10 "Scans"): the repository's own
// `objects/` folder and every alternate it borrows from (`git clone --shared` / `--reference`,
// `objects/info/alternates`, nested and relative, as git resolves them), each with loose objects and
// packs. `has` answers from the pack indexes and the loose fan-out folders (no object is read), so a
// scan references git only for objects that are really there; `readBlob` reads one blob (loose, or in
// place from a pack: git-pack.ts, which caches delta bases per store) and checks its id, `readBlobs`
// a batch of them with each pack file opened once. Nothing here writes to the repository.
import * as fs from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { inflateSync } from 'node:zlib';
import { GitPack, inflatePrefix, MAX_READ_OBJECTS, type ExternalBase, type GitObject, type ReadBudget } from './git-pack.js';
import { gitBlobId } from './git-repo.js';
import { readRegularFile, readSmallText } from '../small-text.js';

/** git refuses alternates nested deeper than this (odb.c), and so does ckpt. */
const MAX_ALTERNATE_DEPTH = 5;
/** No object (or delta base) inflates past this: a corrupt or hostile object must not exhaust memory. */
export const MAX_OBJECT_BYTES = 512 * 1024 * 1024;

export interface GitObjects {
  /** Objects folders searched, in git's order: the repository's own, then its alternates (depth first). */
  readonly dirs: readonly string[];
  /** What was wrong with the alternates (a missing folder, nesting too deep): reported by scans. */
  readonly problems: readonly string[];
  /** True when object `oid` (20 raw bytes at `bytes[offset]`) is present, loose or packed. */
  has(bytes: Uint8Array, offset: number): boolean;
  hasHex(oid: string): boolean;
  /** The blob's bytes, verified to hash to `oid`; undefined when it is missing, unreadable or wrong. */
  readBlob(oid: string): Promise<Buffer | undefined>;
  /** readBlob of each of `oids` (in that order), with every pack file opened once for the batch. */
  readBlobs(oids: readonly string[]): (Buffer | undefined)[];
  /**
   * The size of each object `raw` (20 bytes each) as its header says, without reading its content
   * (GitPack.sizeOf, or a loose object's first bytes); undefined where it is missing or unreadable.
   * Every pack file is opened once for the batch.
   */
  objectSizes(raws: readonly Uint8Array[]): (number | undefined)[];
  /**
   * Hands over the content of blob `oid` that the caller holds and has hashed to that id (a file the
   * scan just read): reads whose delta chain passes through it stop there (DESIGN §10 "Scans").
   * Kept for the life of this object. False when no pack holds the blob.
   */
  seedBlob(oid: string, data: Buffer): boolean;
}

/** The object store of the repository whose common git folder is `commondir`. */
export function openGitObjects(commondir: string): GitObjects {
  const problems: string[] = [];
  const dirs = objectDirs(join(commondir, 'objects'), problems);
  const stores = dirs.map((d) => new ObjectDir(d));
  const locate = (bytes: Uint8Array, offset: number): number => stores.findIndex((s) => s.has(bytes, offset));
  /**
   * The object from any folder (where the indexes say it is first); `hops` bounds ref-delta bases
   * across packs, `budget` what the whole read may inflate and rebuild (git-pack.ts MAX_READ_BYTES).
   */
  const readAny = (raw: Buffer, hops: number, budget: ReadBudget, accept?: (obj: GitObject) => boolean): GitObject | undefined => {
    if (hops > 64) throw new Error('ref-delta bases loop across packs');
    const found = locate(raw, 0);
    const order = found >= 0 ? [found, ...stores.keys()].filter((k, n) => n === 0 || k !== found) : [...stores.keys()];
    // Every copy is tried in turn (another pack, a loose object, an alternate), as git does: a
    // corrupt copy of an object git also holds intact is not a lost object.
    let failed: unknown;
    for (const k of order) {
      try {
        const obj = stores[k]!.read(raw, (base, b) => readAny(base, hops + 1, b), budget, accept);
        if (obj) return obj;
      } catch (e) {
        if (budget.objects > MAX_READ_OBJECTS) throw e;
        failed ??= e;
      }
    }
    if (failed !== undefined) throw failed;
    return undefined;
  };
  return {
    dirs,
    problems,
    has: (bytes, offset) => locate(bytes, offset) >= 0,
    hasHex(oid) {
      const raw = rawOid(oid);
      return raw !== undefined && locate(raw, 0) >= 0;
    },
    readBlob(oid) {
      return Promise.resolve(readBlobs([oid])[0]);
    },
    readBlobs,
    objectSizes(raws) {
      try {
        return raws.map((raw) => {
          for (const s of stores) {
            const size = s.sizeOf(raw);
            if (size !== undefined) return size;
          }
          return undefined;
        });
      } finally {
        for (const s of stores) s.close();
      }
    },
    seedBlob(oid, data) {
      const raw = rawOid(oid);
      if (!raw) return false;
      let seeded = false;
      for (const s of stores) if (s.seed(raw, { type: 'blob', data })) seeded = true;
      return seeded;
    },
  };

  function readBlobs(oids: readonly string[]): (Buffer | undefined)[] {
    try {
      return oids.map((oid) => {
        const raw = rawOid(oid);
        if (!raw) return undefined;
        try {
          // Verified as each copy is read: a copy that does not hash to the id is passed over.
          return readAny(raw, 0, { bytes: 0, objects: 0 }, (obj) => obj.type === 'blob' && gitBlobId(obj.data) === oid)?.data;
        } catch {
          return undefined; // unreadable or malformed: missing as far as ckpt can tell
        }
      });
    } finally {
      for (const s of stores) s.close();
    }
  }
}

function rawOid(oid: string): Buffer | undefined {
  return /^[0-9a-f]{40}$/.test(oid) ? Buffer.from(oid, 'hex') : undefined;
}

/** `objects` followed by its alternates, depth first, each folder once (by real path). */
function objectDirs(objects: string, problems: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (dir: string, depth: number): void => {
    let real: string;
    try {
      real = fs.realpathSync(dir);
      if (!fs.statSync(real).isDirectory()) throw new Error('not a folder');
    } catch {
      problems.push(`git object folder ${dir} does not exist (an alternate of a shared clone that was moved or removed?)`);
      return;
    }
    if (seen.has(real)) return;
    seen.add(real);
    out.push(real);
    const text = readSmallText(join(real, 'info', 'alternates'), { follow: true });
    if (text === undefined) return; // no alternates
    const entries = parseAlternates(text);
    if (entries.length > 0 && depth >= MAX_ALTERNATE_DEPTH) {
      problems.push(`${join(real, 'info', 'alternates')}: alternates nested too deep, ignored (as git does)`);
      return;
    }
    // A relative entry is relative to the objects folder whose alternates file names it.
    for (const e of entries) add(isAbsolute(e) ? e : resolve(real, e), depth + 1);
  };
  add(objects, 0);
  return out;
}

/** The entries of an `objects/info/alternates` file: one path a line, `#` comments, C-quoted when in quotes. */
export function parseAlternates(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const l = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (l === '' || l.startsWith('#')) continue;
    const path = l.startsWith('"') ? unquoteC(l) : l;
    if (path) out.push(path.length > 1 ? path.replace(/\/+$/, '') : path);
  }
  return out;
}

/** git's C-style quoting (`"a\\tb\\303\\244"`); undefined when malformed. */
function unquoteC(s: string): string | undefined {
  const bytes: number[] = [];
  const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 1; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '"') return i === s.length - 1 ? Buffer.from(bytes).toString('utf8') : undefined;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const d = s[++i];
    if (d === undefined) return undefined;
    if (simple[d] !== undefined) bytes.push(simple[d]);
    else if (/^[0-3][0-7][0-7]$/.test(s.slice(i, i + 3))) {
      bytes.push(parseInt(s.slice(i, i + 3), 8));
      i += 2;
    } else return undefined;
  }
  return undefined;
}

/** One objects folder: its packs and its loose fan-out folders, read when first asked. */
class ObjectDir {
  private packs: GitPack[] | undefined;
  private readonly loose = new Map<number, Set<string>>();

  constructor(readonly dir: string) {}

  private packList(): GitPack[] {
    if (!this.packs) {
      let names: string[] = [];
      try {
        names = fs.readdirSync(join(this.dir, 'pack')).filter((n) => n.endsWith('.idx'));
      } catch {
        // no packs
      }
      // A malformed or unreadable index is left out: its objects count as missing.
      this.packs = names.map((n) => GitPack.open(join(this.dir, 'pack', n))).filter((p): p is GitPack => p !== undefined);
    }
    return this.packs;
  }

  has(bytes: Uint8Array, offset: number): boolean {
    for (const p of this.packList()) if (p.find(bytes, offset) >= 0) return true;
    const fan = bytes[offset] as number;
    let names = this.loose.get(fan);
    if (!names) {
      try {
        names = new Set(fs.readdirSync(join(this.dir, fan.toString(16).padStart(2, '0'))));
      } catch {
        names = new Set();
      }
      this.loose.set(fan, names);
    }
    return names.size > 0 && names.has(Buffer.from(bytes.subarray(offset + 1, offset + 20)).toString('hex'));
  }

  /** Seeds every pack here that holds object `raw` (GitPack.seed). */
  seed(raw: Buffer, obj: GitObject): boolean {
    let seeded = false;
    for (const p of this.packList()) if (p.seed(raw, obj)) seeded = true;
    return seeded;
  }

  /** The object's size from the first pack that holds it, else from a loose copy's header. */
  sizeOf(raw: Uint8Array): number | undefined {
    for (const p of this.packList()) {
      const size = p.sizeOf(raw);
      if (size !== undefined) return size;
    }
    const hex = Buffer.from(raw).toString('hex');
    // Never a FIFO or a device planted in an object's place (small-text.ts); the header is in the
    // first bytes: zlib("<type> <size>\0...").
    const head = readRegularFile(join(this.dir, hex.slice(0, 2), hex.slice(2)), { follow: true, maxBytes: 256, prefix: true });
    if (head === undefined) return undefined;
    const text = inflatePrefix(head);
    const nul = text.indexOf(0);
    const m = /^(blob|tree|commit|tag) (\d+)$/.exec(text.toString('latin1', 0, nul < 0 ? 0 : nul));
    return m ? Number(m[2]) : undefined;
  }

  /** Closes the pack files reads left open. */
  close(): void {
    for (const p of this.packs ?? []) p.close();
  }

  /**
   * The object, from a pack or loose (the first copy `accept` takes, when given); undefined when it
   * is not here. Throws when it is here but no copy is readable.
   */
  read(raw: Buffer, external: ExternalBase, budget: ReadBudget, accept?: (obj: GitObject) => boolean): GitObject | undefined {
    let failed: unknown;
    for (const p of this.packList()) {
      try {
        const obj = p.read(raw, external, budget);
        if (obj && (!accept || accept(obj))) return obj;
      } catch (e) {
        if (budget.objects > MAX_READ_OBJECTS) throw e;
        failed ??= e;
      }
    }
    const loose = this.readLoose(raw);
    if (loose && (!accept || accept(loose))) return loose;
    if (failed !== undefined) throw failed;
    return undefined;
  }

  /** The loose object `raw`; undefined when there is none. Throws when it is malformed. */
  private readLoose(raw: Buffer): GitObject | undefined {
    const hex = raw.toString('hex');
    // Never a FIFO or a device planted in an object's place (small-text.ts).
    const file = readRegularFile(join(this.dir, hex.slice(0, 2), hex.slice(2)), { follow: true, maxBytes: 2 * MAX_OBJECT_BYTES });
    if (file === undefined) return undefined;
    // A loose object: zlib("<type> <size>\0<content>").
    const whole = inflateSync(file, { maxOutputLength: MAX_OBJECT_BYTES + 64 });
    const nul = whole.indexOf(0);
    const m = /^(blob|tree|commit|tag) (\d+)$/.exec(whole.toString('latin1', 0, nul < 0 ? 0 : nul));
    if (!m || Number(m[2]) !== whole.length - nul - 1) throw new Error(`malformed loose object ${hex}`);
    return { type: m[1] as GitObject['type'], data: whole.subarray(nul + 1) };
  }
}

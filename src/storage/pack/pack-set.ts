// The in-memory cache of pack indexes for one blob store. Indexes are loaded lazily and kept; the
// list of packs is re-read (one `children('packs')`) when an id is not found, because another process
// may have committed a pack since. Lookups that only serve deduplication may use a throttled reload:
// missing a just-committed pack there costs a duplicate copy, never a wrong answer.
import { CkptError, isCkptError } from '../../errors.js';
import { decodePackIndex, type PackIndex } from '../../format/pack-index.js';
import type { StoreBackend } from '../backend.js';

export const PACKS_DIR = 'packs';
export const packKey = (name: string): string => `${PACKS_DIR}/${name}.pack`;
export const indexKey = (name: string): string => `${PACKS_DIR}/${name}.idx`;
export const PACK_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `miss`: reload the pack list on a miss; `throttled`: at most once per interval; `never`: cache only. */
export type Refresh = 'miss' | 'throttled' | 'never';

export interface PackLocation {
  pack: string;
  offset: number;
  length: number;
}

export interface PackSet {
  locate(id: string, refresh: Refresh): Promise<PackLocation | undefined>;
  /** Re-reads the pack list: loads new indexes, drops removed ones. */
  refresh(): Promise<void>;
  /** Committed pack names (as of the last refresh), oldest name first. */
  names(): string[];
  index(name: string): PackIndex | undefined;
  /** Packs whose index could not be read, with why (as of the last refresh). */
  broken(): ReadonlyMap<string, CkptError>;
  /** Registers a pack this process just committed, without reading it back. */
  add(name: string, index: PackIndex): void;
  forget(name: string): void;
}

export interface PackSetOptions {
  backend: StoreBackend;
  /** Minimum time between throttled reloads (default 1 s). */
  throttleMs?: number;
}

export function createPackSet(options: PackSetOptions): PackSet {
  const { backend } = options;
  const throttleMs = options.throttleMs ?? 1_000;
  const indexes = new Map<string, PackIndex>();
  const bad = new Map<string, CkptError>();
  let loadedOnce = false;
  let lastRefresh = 0;
  let inFlight: Promise<void> | undefined;
  let newestFirst: string[] | undefined;

  async function load(): Promise<void> {
    const started = Date.now();
    const names = (await backend.children(PACKS_DIR))
      .filter((n) => n.endsWith('.idx'))
      .map((n) => n.slice(0, -'.idx'.length))
      .filter((n) => PACK_NAME.test(n));
    const present = new Set(names);
    newestFirst = undefined;
    for (const name of [...indexes.keys()]) if (!present.has(name)) indexes.delete(name);
    bad.clear();
    for (const name of names) {
      if (indexes.has(name)) continue;
      const buf = await backend.read(indexKey(name));
      if (!buf) continue; // removed between the listing and the read (a pack rewrite)
      try {
        indexes.set(name, decodePackIndex(buf, name));
      } catch (err) {
        if (!isCkptError(err)) throw err;
        bad.set(name, err);
      }
    }
    newestFirst = undefined;
    loadedOnce = true;
    lastRefresh = started;
  }

  function refresh(): Promise<void> {
    // Concurrent callers share one reload.
    inFlight ??= load().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  function find(id: string): PackLocation | undefined {
    // Newest packs first: a rewrite leaves its replacement beside the old pack for a moment.
    newestFirst ??= [...indexes.keys()].sort().reverse();
    for (const pack of newestFirst) {
      const hit = indexes.get(pack)?.find(id);
      if (hit) return { pack, ...hit };
    }
    return undefined;
  }

  return {
    async locate(id, mode) {
      if (!loadedOnce) await refresh();
      const hit = find(id);
      if (hit || mode === 'never') return hit;
      if (mode === 'throttled' && Date.now() - lastRefresh < throttleMs) return undefined;
      await refresh();
      return find(id);
    },
    refresh,
    names: () => [...indexes.keys()].sort(),
    index: (name) => indexes.get(name),
    broken: () => bad,
    add(name, index) {
      if (!PACK_NAME.test(name)) throw new CkptError('INTERNAL', `bad pack name ${name}`);
      indexes.set(name, index);
      newestFirst = undefined;
    },
    forget(name) {
      indexes.delete(name);
      newestFirst = undefined;
    },
  };
}

// The slice of ckpt's public library API (src/index.ts) the benchmark drives, loaded at run time so
// the harness runs — and reports "not implemented yet" per operation — while the library is being
// written. Every method is optional here on purpose: `need()` turns a missing one into an error.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface CaptureResult {
  tag: string;
  files: unknown[];
}
export interface ScanResult {
  tag: string | null;
  files: unknown[];
  [stat: string]: unknown;
}

/** The counters a scan result reports (scanned, hashed, gitReferenced, stored, baseline), when it has them. */
export function scanStats(result: ScanResult | undefined): Record<string, unknown> | null {
  if (!result) return null;
  const out: Record<string, unknown> = { files: result.files.length };
  for (const k of ['scanned', 'hashed', 'gitReferenced', 'stored', 'baseline', 'truncated']) {
    if (result[k] !== undefined) out[k] = result[k];
  }
  return out;
}
export interface RestoreResult {
  restored: unknown[];
  deleted: unknown[];
  skipped: unknown[];
  drift: unknown[];
  undo?: string | null;
}

export interface CkptSession {
  id?: string;
  turn?(options?: { messageCount?: number; text?: string }): Promise<unknown>;
  capture?(paths: string[], options?: { tool?: string }): Promise<CaptureResult>;
  settle?(paths: string[], options?: { tag?: string }): Promise<unknown>;
  scan?(options?: { tool?: string }): Promise<ScanResult>;
  restore?(tag: string, options?: { force?: boolean }): Promise<RestoreResult>;
  append?(events: Record<string, unknown>[]): Promise<unknown>;
}
export interface CkptWorkspace {
  createSession?(options?: { title?: string; id?: string; baseline?: boolean }): Promise<CkptSession>;
  getSession?(id: string): Promise<CkptSession>;
  /** The names the library first shipped (`ws.create`, `ws.get`). */
  create?(options?: { title?: string; id?: string; baseline?: boolean }): Promise<CkptSession>;
  get?(id: string): Promise<CkptSession>;
}
export interface CkptStore {
  openWorkspace?(root: string): Promise<CkptWorkspace>;
  close?(): Promise<void> | void;
}
export interface CkptModule {
  openStore(options: { dir: string }): Promise<CkptStore>;
  [name: string]: unknown;
}

/** Raised when the library does not (yet) provide what an operation needs. */
export class NotImplementedError extends Error {
  constructor(what: string) {
    super(`not implemented yet: ${what}`);
    this.name = 'NotImplementedError';
  }
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let loaded: Promise<CkptModule> | undefined;
let loadedModule: CkptModule | undefined;

/**
 * The library, or a rejection saying what is missing. Loaded once per run from `src/index.ts`, or
 * from the module named by `CKPT_BENCH_LIB` (e.g. another checkout's `src/index.ts` or a `dist/index.js`).
 */
export function loadCkpt(): Promise<CkptModule> {
  loaded ??= (async () => {
    const entry = process.env.CKPT_BENCH_LIB ? path.resolve(process.env.CKPT_BENCH_LIB) : path.join(REPO_ROOT, 'src', 'index.ts');
    if (!existsSync(entry)) throw new NotImplementedError(`${path.relative(REPO_ROOT, entry)} (openStore)`);
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`cannot load ${path.relative(REPO_ROOT, entry)}: ${(err as Error).message.split('\n')[0]}`);
    }
    if (typeof mod.openStore !== 'function') throw new NotImplementedError('openStore export in src/index.ts');
    loadedModule = mod as unknown as CkptModule;
    return loadedModule;
  })();
  return loaded;
}

type Method<T, K extends keyof T> = NonNullable<T[K]>;

/**
 * `obj[name]` bound to `obj` — else the first of `aliases` the object has, else (for a session) a
 * top-level export `name(session, …args)` of the library — or a NotImplementedError naming `label.name`.
 */
export function need<T extends object, K extends keyof T & string>(obj: T, name: K, label: string, aliases: (keyof T & string)[] = []): Method<T, K> {
  for (const n of [name, ...aliases]) {
    const fn = obj[n];
    if (typeof fn === 'function') return (fn as (...args: unknown[]) => unknown).bind(obj) as Method<T, K>;
  }
  const top = label === 'session' ? loadedModule?.[name] : undefined;
  if (typeof top === 'function') {
    return ((...args: unknown[]) => (top as (...a: unknown[]) => unknown)(obj, ...args)) as Method<T, K>;
  }
  throw new NotImplementedError(label === 'session' ? `session.${name}() (nor ${name}(session, …) exported from src/index.ts)` : `${label}.${name}()`);
}

/** A session's id, wherever the library keeps it. */
export function sessionId(session: CkptSession): string {
  const s = session as Record<string, unknown>;
  const meta = (s.metadata ?? s.meta ?? s.info) as Record<string, unknown> | undefined;
  const id = s.id ?? meta?.id;
  if (typeof id !== 'string') throw new NotImplementedError('session.id');
  return id;
}

export async function closeStore(store: CkptStore | undefined): Promise<void> {
  if (store && typeof store.close === 'function') await store.close();
}

// The workspace walker of scans: lists every folder with the lstat numbers of its entries (list-dir.ts),
// prunes ignored folders without entering them, loads each folder's rule files as it enters it, and
// stops at a deadline, reporting the folders it did not reach. It never follows symlinks and never
// enters a `.git` folder (a nested repository's files are walked as normal files).
//
// On large trees a worker thread lists and stats some folders while this thread does the others and
// hands every listing to the visitor; without one, everything runs synchronously (sync calls are
// measurably faster than promises in this loop). A listing is always visited whole, so the entries
// of one folder reach the visitor together and in the order the filesystem lists them.
import { join } from 'node:path';
import { DEFAULT_IGNORED_DIRS, IGNORE_FILE_NAMES, readText, type IgnoreRules, type RuleFrame } from './ignore-rules.js';
import { isStageName } from './stage-name.js';
import { listDir, statNames, MISSING, STAT_FIELDS, UNREADABLE, type DirListing, type ListPool } from './list-dir.js';

export type EntryKind = 'file' | 'symlink';

export interface WalkVisitor {
  /** A folder's listing is about to be visited; `token` is what dir() returned for it (-1 for the root). */
  enterDir(rel: string, token: number): void;
  /** The listing of the folder entered last is done. */
  leaveDir(token: number): void;
  /**
   * Slot of `rel` in what the caller already knows (its previous index), or -1. Known paths whose
   * rules did not change since the previous walk (`rulesChanged` false) are not tested against the
   * ignore rules again, so what the caller keeps of an ignored name is known only where they did.
   */
  known(rel: string, rulesChanged: boolean): number;
  /**
   * A non-folder entry that is not ignored, with its lstat numbers at `stats[offset..offset+5)`
   * (size is UNREADABLE when lstat failed). `slot` is what known() returned; `name` is the last
   * component of `rel`.
   */
  entry(rel: string, abs: string, stats: Float64Array, offset: number, slot: number, name: string): void;
  /**
   * A folder that is not ignored (listed later), with its lstat mode (type bits included); returns a
   * token handed back to enterDir/leaveDir.
   */
  dir(rel: string, slot: number, mode: number): number;
  /**
   * Names the caller knows in folder `rel` (its previous index, newer records): looked at one by one
   * when the folder cannot be listed but may be searched (a 0311 drop box).
   */
  knownNames?(rel: string): string[];
}

export interface WalkOptions {
  root: string;
  rules: IgnoreRules;
  /** `performance.now()` value after which the walk stops (unreached folders are reported). */
  deadline?: number;
  /** Rule-file texts per folder from the previous walk (see WalkResult.ruleTexts); undefined: unknown. */
  previousRules?: ReadonlyMap<string, string>;
  /**
   * A worker that lists folders in parallel, created once `after` entries were seen (large trees:
   * for small ones the thread costs more than it saves). The caller owns (closes) what create() made.
   */
  parallel?: { after: number; create: () => ListPool | undefined };
}

export interface WalkResult {
  /** Folders listed but not visited because the deadline passed or they could not be read. */
  pending: string[];
  /** Why a folder could not be listed (the deadline aside): pending, or in `unlisted`. */
  unreadable: { path: string; why: string }[];
  /**
   * Folders that could not be listed but whose known names were looked at one by one: visited with
   * those found (what is new there stays unseen), not pending.
   */
  unlisted: string[];
  /** Ignored folders (not entered) and ignored files seen. */
  ignoredDirs: string[];
  ignoredFiles: string[];
  /** Rule-file texts of every folder that has some (`''` = root sources), for the next walk. */
  ruleTexts: Map<string, string>;
  truncated: boolean;
  dirs: number;
}

interface Frame {
  rel: string;
  frame: RuleFrame;
  /** True when the rules that apply here differ from the previous walk's (or are unknown). */
  dirty: boolean;
  token: number;
}

const ROOT_KEY = '';
/** Folders in flight on the worker, and how many folders this thread does between yields to it. */
const MAX_IN_FLIGHT = 4;
const YIELD_EVERY = 4;

export function rootRulesText(rules: IgnoreRules): string {
  return JSON.stringify([rules.storeRel ?? null, [...rules.rootSources].sort((a, b) => (a[0] < b[0] ? -1 : 1))]);
}

const yieldToEvents = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function walkWorkspace(options: WalkOptions, visitor: WalkVisitor): Promise<WalkResult> {
  const { root, rules, deadline, previousRules, parallel } = options;
  let pool: ListPool | undefined;
  let entries = 0;
  const result: WalkResult = {
    pending: [],
    unreadable: [],
    unlisted: [],
    ignoredDirs: [],
    ignoredFiles: [],
    ruleTexts: new Map(),
    truncated: false,
    dirs: 0,
  };
  const rootText = rootRulesText(rules);
  result.ruleTexts.set(ROOT_KEY, rootText);
  const rootDirty = previousRules === undefined || previousRules.get(ROOT_KEY) !== rootText;
  const storeRel = rules.storeRel;
  const ruleNames: readonly string[] = IGNORE_FILE_NAMES;
  const absOf = (rel: string): string => (rel === '' ? root : `${root}/${rel}`);

  function visit(top: Frame, listing: DirListing): void {
    if (listing.error !== undefined) {
      // Gone since its parent was listed: its former content is deleted, which the caller sees.
      if (listing.error === 'ENOENT' || listing.error === 'ENOTDIR') return;
      result.unreadable.push({ path: top.rel, why: `unreadable: ${listing.error}` });
      // A folder that may be searched but not listed still shows what ckpt knows there, by name: an
      // edit inside a 0311 folder is not hidden (fsedge probe, 2026-12-06).
      const names = visitor.knownNames?.(top.rel);
      const byName = names && names.length > 0 ? statNames(absOf(top.rel), names) : undefined;
      if (!byName) {
        result.pending.push(top.rel);
        return;
      }
      result.unlisted.push(top.rel);
      listing = byName;
    }
    result.dirs++;
    const dirAbs = absOf(top.rel);
    const { names, stats } = listing;
    let frame = top.frame;
    let dirty = top.dirty;
    if (top.rel !== '') {
      // Rule files of this folder: looked up in the listing, read only when present.
      let texts: (string | undefined)[] | undefined;
      for (let i = 0; i < names.length; i++) {
        const r = ruleNames.indexOf(names[i] as string);
        if (r >= 0 && (stats[i * STAT_FIELDS + 4]! & 0o170000) !== 0o040000) {
          (texts ??= ruleNames.map(() => undefined))[r] = readText(join(dirAbs, names[i] as string));
        }
      }
      const text = texts ? JSON.stringify(texts) : undefined;
      if (text !== undefined) {
        result.ruleTexts.set(top.rel, text);
        frame = rules.child(frame, top.rel, texts as (string | undefined)[]);
      }
      if (!dirty && previousRules !== undefined && previousRules.get(top.rel) !== text) dirty = true;
    }
    const prefix = top.rel === '' ? '' : `${top.rel}/`;
    const testAll = frame.active || storeRel !== undefined;
    visitor.enterDir(top.rel, top.token);
    entries += names.length;
    for (let i = 0, o = 0; i < names.length; i++, o += STAT_FIELDS) {
      const name = names[i] as string;
      const size = stats[o] as number;
      if (size === MISSING) continue; // vanished since the listing: the caller sees it as gone
      const rel = prefix + name;
      const isDir = size !== UNREADABLE && ((stats[o + 4] as number) & 0o170000) === 0o040000;
      if (isDir) {
        if (DEFAULT_IGNORED_DIRS.has(name)) {
          result.ignoredDirs.push(rel);
          continue;
        }
        const slot = visitor.known(rel, dirty);
        if (testAll && (dirty || slot < 0) && rules.ignored(frame, rel, true)) {
          result.ignoredDirs.push(rel);
          continue;
        }
        stack.push({ rel, frame, dirty, token: visitor.dir(rel, slot, stats[o + 4] as number) });
        continue;
      }
      if (isStageName(name)) continue; // a concurrent restore's file in flight, never content (stage-name.ts)
      const slot = visitor.known(rel, dirty);
      if (testAll && (dirty || slot < 0) && rules.ignored(frame, rel, false)) {
        result.ignoredFiles.push(rel);
        continue;
      }
      visitor.entry(rel, `${dirAbs}/${name}`, stats, o, slot, name);
    }
    visitor.leaveDir(top.token);
  }

  const stack: Frame[] = [{ rel: '', frame: rules.rootFrame, dirty: rootDirty, token: -1 }];
  const ready: { top: Frame; listing: DirListing }[] = [];
  const inFlight = new Set<Frame>();
  let wake: (() => void) | undefined;
  let sinceYield = 0;
  while (stack.length > 0 || inFlight.size > 0 || ready.length > 0) {
    if (deadline !== undefined && performance.now() > deadline) {
      result.truncated = true;
      // Listings that arrive later are dropped: those folders count as not reached.
      result.pending.push(...stack.map((f) => f.rel), ...[...inFlight].map((f) => f.rel), ...ready.map((r) => r.top.rel));
      break;
    }
    if (!pool && parallel && entries >= parallel.after) pool = parallel.create();
    const done = ready.pop();
    if (done) {
      visit(done.top, done.listing);
      continue;
    }
    if (stack.length === 0) {
      await new Promise<void>((resolve) => (wake = resolve));
      continue;
    }
    if (pool && inFlight.size < MAX_IN_FLIGHT && stack.length > 1) {
      const top = stack.shift() as Frame; // the far end of the stack: a different subtree than ours
      inFlight.add(top);
      void pool.list(absOf(top.rel)).then((listing) => {
        if (!inFlight.delete(top)) return;
        ready.push({ top, listing });
        wake?.();
        wake = undefined;
      });
      continue;
    }
    const top = stack.pop() as Frame;
    visit(top, listDir(absOf(top.rel)));
    if (pool && ++sinceYield >= YIELD_EVERY) {
      sinceYield = 0;
      await yieldToEvents();
    }
  }
  inFlight.clear();
  return result;
}

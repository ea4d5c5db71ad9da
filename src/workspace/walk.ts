// The workspace walker of scans: a synchronous depth-first readdir walk (sync calls are measurably
// faster than promises in this loop: no per-entry allocation of a promise or a stat object) that
// prunes ignored folders without entering them, loads each folder's rule files as it enters it, and
// stops at a deadline, reporting the folders it did not reach. It never follows symlinks and never
// enters a `.git` folder (a nested repository's files are walked as normal files).
import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_IGNORED_DIRS, IGNORE_FILE_NAMES, readText, type IgnoreRules, type RuleFrame } from './ignore-rules.js';

export type EntryKind = 'file' | 'symlink';

export interface WalkVisitor {
  /**
   * Slot of `rel` in what the caller already knows (its previous index), or -1. Known paths whose
   * rules did not change since the previous walk are not tested against the ignore rules again.
   */
  known(rel: string): number;
  /** A file or symlink that is not ignored. `slot` is what known() returned. */
  entry(rel: string, abs: string, kind: EntryKind, slot: number): void;
  /** A folder that is not ignored (called before its entries). */
  dir(rel: string, slot: number): void;
}

export interface WalkOptions {
  root: string;
  rules: IgnoreRules;
  /** `performance.now()` value after which the walk stops (unreached folders are reported). */
  deadline?: number;
  /** Rule-file texts per folder from the previous walk (see WalkResult.ruleTexts); undefined: unknown. */
  previousRules?: ReadonlyMap<string, string>;
}

export interface WalkResult {
  /** Folders listed but not entered because the deadline passed or they could not be read. */
  pending: string[];
  /** Why a pending folder was not read (absent: the deadline). */
  unreadable: { path: string; why: string }[];
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
}

const ROOT_KEY = '';

export function rootRulesText(rules: IgnoreRules): string {
  return JSON.stringify([rules.storeRel ?? null, [...rules.rootSources].sort((a, b) => (a[0] < b[0] ? -1 : 1))]);
}

export function walkWorkspace(options: WalkOptions, visitor: WalkVisitor): WalkResult {
  const { root, rules, deadline, previousRules } = options;
  const result: WalkResult = {
    pending: [],
    unreadable: [],
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
  const stack: Frame[] = [{ rel: '', frame: rules.rootFrame, dirty: rootDirty }];
  const ruleNames: readonly string[] = IGNORE_FILE_NAMES;

  while (stack.length > 0) {
    const top = stack.pop() as Frame;
    if (deadline !== undefined && performance.now() > deadline) {
      result.truncated = true;
      result.pending.push(top.rel, ...stack.map((f) => f.rel));
      break;
    }
    const dirAbs = top.rel === '' ? root : join(root, top.rel);
    let entries: Dirent[];
    try {
      entries = readdirSync(dirAbs, { withFileTypes: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Gone since its parent was listed: its former content is deleted, which the caller sees.
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      result.pending.push(top.rel);
      result.unreadable.push({ path: top.rel, why: `unreadable: ${code ?? String(err)}` });
      continue;
    }
    result.dirs++;
    let frame = top.frame;
    let dirty = top.dirty;
    if (top.rel !== '') {
      // Rule files of this folder: looked up in the listing, read only when present.
      let texts: (string | undefined)[] | undefined;
      for (const e of entries) {
        const i = ruleNames.indexOf(e.name);
        if (i >= 0 && !e.isDirectory()) (texts ??= ruleNames.map(() => undefined))[i] = readText(join(dirAbs, e.name));
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
    for (const e of entries) {
      const name = e.name;
      const rel = prefix + name;
      if (e.isDirectory()) {
        if (DEFAULT_IGNORED_DIRS.has(name)) {
          result.ignoredDirs.push(rel);
          continue;
        }
        const slot = visitor.known(rel);
        if (testAll && (dirty || slot < 0) && rules.ignored(frame, rel, true)) {
          result.ignoredDirs.push(rel);
          continue;
        }
        visitor.dir(rel, slot);
        stack.push({ rel, frame, dirty });
        continue;
      }
      const kind: EntryKind | undefined = e.isFile() ? 'file' : e.isSymbolicLink() ? 'symlink' : undefined;
      if (kind === undefined) continue; // sockets, fifos, devices: nothing ckpt can record or restore
      const slot = visitor.known(rel);
      if (testAll && (dirty || slot < 0) && rules.ignored(frame, rel, false)) {
        result.ignoredFiles.push(rel);
        continue;
      }
      visitor.entry(rel, dirAbs === root ? join(root, name) : `${dirAbs}/${name}`, kind, slot);
    }
  }
  return result;
}

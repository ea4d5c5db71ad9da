// Which workspace paths ckpt never scans, captures by scan or touches on restore (DESIGN §2, §9
// `ckpt scan`): the defaults (`.git/`, `node_modules/`, the store itself when it lies inside the
// workspace), `.git/info/exclude`, `.gitignore` files at every level (including those of ancestor
// folders up to the top of an enclosing git work tree) and `.ckptignore` files at every level, with
// gitignore semantics (the deepest file that has an opinion about a path decides; negations work;
// nothing below an ignored folder can be re-included). The same rules apply to every scan.
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { createIgnoreMatcher, type IgnoreMatcher } from './ignore-matcher.js';
import { readSmallText } from '../small-text.js';
import { isStageName } from './stage-name.js';

/** git's core.ignorecase default: true where filesystems are case-insensitive by default. */
const IGNORE_CASE = process.platform === 'darwin' || process.platform === 'win32';

/** Folder names never entered, at any depth. */
export const DEFAULT_IGNORED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);
/** Names of the per-folder rule files, in increasing precedence. */
export const IGNORE_FILE_NAMES = ['.gitignore', '.ckptignore'] as const;

/** The rules in force in one folder: its own matcher (if it has rule files) chained to its parent's. */
export interface RuleFrame {
  readonly parent: RuleFrame | undefined;
  /** Workspace-relative folder (`''` for the root) the matcher's patterns are relative to. */
  readonly base: string;
  /** Prefix prepended to workspace paths for this matcher (ancestor folders above the root). */
  readonly prefix: string;
  readonly matcher: IgnoreMatcher | undefined;
  /** True when some frame of the chain has a matcher: otherwise no path needs testing. */
  readonly active: boolean;
}

export interface IgnoreRulesOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Real path of the store: ignored when it lies inside the workspace. */
  storeDir?: string;
  /** Extra gitignore-style patterns relative to the root (tests, options). */
  extra?: readonly string[];
  /** Reads a rule file (absolute path; undefined when absent): the rules of another time (default: the file now). */
  read?: (abs: string) => string | undefined;
}

export interface IgnoreRules {
  /** Workspace-relative path of the store when it lies inside the workspace (ignored with its content). */
  readonly storeRel: string | undefined;
  /** The frame of the root folder (root rule files, info/exclude, ancestors' .gitignore files). */
  readonly rootFrame: RuleFrame;
  /** Text of every rule file read for the root frame, for change detection (`name -> text`). */
  readonly rootSources: ReadonlyMap<string, string>;
  /** The frame for folder `dirRel` given the texts of its own rule files (undefined: none). */
  child(parent: RuleFrame, dirRel: string, texts: readonly (string | undefined)[]): RuleFrame;
  /** True when `rel` (a child of the frame's folder; `isDir` for folders) is ignored. */
  ignored(frame: RuleFrame, rel: string, isDir: boolean): boolean;
  /** Full check of an arbitrary workspace-relative path (every ancestor folder too); loads rule files. */
  isIgnoredPath(rel: string, isDir?: boolean): boolean;
}

/** Reads a rule file of the work tree (not through a symlink, never a FIFO or device: small-text.ts), or undefined. */
export function readText(abs: string): string | undefined {
  return readSmallText(abs);
}

/** The top of the git work tree enclosing `root` (the folder holding `.git`), if any. */
export function findGitTop(root: string): string | undefined {
  for (let dir = root; ; dir = dirname(dir)) {
    if (lexists(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** True for a `.git` folder or file (a worktree's), also through a symlink; never opened (a FIFO there must not block). */
function lexists(abs: string): boolean {
  try {
    const st = statSync(abs);
    return st.isDirectory() || st.isFile();
  } catch {
    return false;
  }
}

function hasRules(text: string): boolean {
  return text.split(/\r?\n/).some((line) => {
    const t = line.trim();
    return t !== '' && !t.startsWith('#');
  });
}

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

/**
 * The store's folder relative to the workspace root (real path, as the root is), when it lies inside
 * it: never recorded nor restored. Its path is resolved first: one given through a symlink, or named
 * `..something`, is inside too (a probe found both recorded as workspace changes).
 */
export function storeBeneath(root: string, storeDir: string): string | undefined {
  const real = realStoreDir(storeDir);
  // Pure string work on two paths that rarely change (every capture asks): worked out once per pair.
  const key = `${root}\0${real}`;
  if (storesBeneath.has(key)) return storesBeneath.get(key);
  const rel = relative(root, real);
  const beneath = rel === '' ? '' : rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? undefined : toPosix(rel);
  if (storesBeneath.size >= 64) storesBeneath.clear();
  storesBeneath.set(key, beneath);
  return beneath;
}

/** storeBeneath's answers by root and real store folder. */
const storesBeneath = new Map<string, string | undefined>();

/** A store folder's real path, resolved once per process (every capture asks); as given while it is not made yet. */
const realStoreDirs = new Map<string, string>();
function realStoreDir(storeDir: string): string {
  let real = realStoreDirs.get(storeDir);
  if (real === undefined) {
    try {
      real = realpathSync(storeDir);
      realStoreDirs.set(storeDir, real);
    } catch {
      return storeDir;
    }
  }
  return real;
}

export function createIgnoreRules(options: IgnoreRulesOptions): IgnoreRules {
  const { root } = options;
  const read = options.read ?? readText;
  const storeRel = options.storeDir ? storeBeneath(root, options.storeDir) : undefined;
  const rootSources = new Map<string, string>();

  // Ancestors of the root up to the git top: their .gitignore files apply, relative to their folder.
  let frame: RuleFrame | undefined;
  const gitTop = findGitTop(root);
  if (gitTop !== undefined) {
    const exclude = read(join(gitTop, '.git', 'info', 'exclude'));
    const above = toPosix(relative(gitTop, root));
    if (exclude !== undefined) rootSources.set('.git/info/exclude', exclude);
    frame = makeFrame(undefined, '', above ? `${above}/` : '', exclude !== undefined ? [exclude] : []);
    if (above) {
      const parts = above.split('/');
      for (let i = 0; i < parts.length; i++) {
        const dirAbs = join(gitTop, ...parts.slice(0, i));
        const text = read(join(dirAbs, '.gitignore'));
        if (text === undefined) continue;
        rootSources.set(`${toPosix(relative(root, dirAbs))}/.gitignore`, text);
        frame = makeFrame(frame, '', `${parts.slice(i).join('/')}/`, [text]);
      }
    }
  }
  const rootTexts = IGNORE_FILE_NAMES.map((name) => {
    const text = read(join(root, name));
    if (text !== undefined) rootSources.set(name, text);
    return text;
  });
  if (options.extra?.length) rootTexts.push(options.extra.join('\n'));
  const rootFrame = makeFrame(frame, '', '', rootTexts);

  function makeFrame(parent: RuleFrame | undefined, base: string, prefix: string, texts: readonly (string | undefined)[]): RuleFrame {
    // Only texts with a rule count: comment-only files (git's default info/exclude) test nothing.
    const present = texts.filter((t): t is string => t !== undefined && hasRules(t));
    // One text: the matcher splits it into lines (ignore-matcher.ts).
    // Case-sensitive as git is on a case-sensitive filesystem (core.ignorecase false): the package's
    // default would make `*.[aos]` ignore `sha1ppc.S`, whose changes would then go unrecorded.
    const matcher = present.length > 0 ? createIgnoreMatcher(present.join('\n'), IGNORE_CASE) : undefined;
    return { parent, base, prefix, matcher, active: matcher !== undefined || (parent?.active ?? false) };
  }

  function ignored(frame: RuleFrame, rel: string, isDir: boolean): boolean {
    if (storeRel !== undefined && (rel === storeRel || storeRel === '')) return true;
    // A concurrent restore's staging file is in flight, not content: recorded by a scan, a later
    // restore would recreate it as a file (and a scan would report it created, then deleted).
    if (!isDir && isStageName(rel.slice(rel.lastIndexOf('/') + 1))) return true;
    for (let f: RuleFrame | undefined = frame; f; f = f.parent) {
      if (!f.matcher) continue;
      const local = f.base === '' ? rel : rel.slice(f.base.length + 1);
      const r = f.matcher.test(`${f.prefix}${local}${isDir ? '/' : ''}`);
      if (r.ignored) return true;
      if (r.unignored) return false;
    }
    return false;
  }

  const frames = new Map<string, RuleFrame>([['', rootFrame]]);
  function frameOf(dirRel: string): RuleFrame {
    const known = frames.get(dirRel);
    if (known) return known;
    const parentRel = dirRel.includes('/') ? dirRel.slice(0, dirRel.lastIndexOf('/')) : '';
    const parent = frameOf(parentRel);
    const texts = IGNORE_FILE_NAMES.map((n) => read(join(root, dirRel, n)));
    const f = texts.some((t) => t !== undefined) ? makeFrame(parent, dirRel, '', texts) : parent;
    frames.set(dirRel, f);
    return f;
  }

  return {
    storeRel,
    rootFrame,
    rootSources,
    child: (parent, dirRel, texts) => (texts.some((t) => t !== undefined) ? makeFrame(parent, dirRel, '', texts) : parent),
    ignored,
    isIgnoredPath(rel, isDir = false) {
      const parts = rel.split('/');
      for (let i = 0; i < parts.length; i++) {
        const name = parts[i] as string;
        const sub = parts.slice(0, i + 1).join('/');
        const dirHere = i < parts.length - 1 || isDir;
        if (dirHere && DEFAULT_IGNORED_DIRS.has(name)) return true;
        if (ignored(frameOf(parts.slice(0, i).join('/')), sub, dirHere)) return true;
      }
      return false;
    },
  };
}

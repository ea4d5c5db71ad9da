// Whether git may convert content on checkout or on `git add` in a work tree (DESIGN §10 "git blobs
// only where the work tree holds them"). A file whose lstat matches its git index entry is referenced
// by the entry's blob id — sound only when the file holds the blob's bytes. A checkout that converts
// (LF -> CRLF by `core.autocrlf=true`, `eol=crlf` or `core.eol=crlf`; an `ident` expansion; a smudge
// `filter` such as git-lfs or git-crypt; a `working-tree-encoding`) writes other bytes and records
// their stat; so does an add that normalizes (CRLF -> LF by `text`, `text=auto`, any `eol`,
// `core.autocrlf=input`; a clean filter): the blob would then be restored in place of what the user had. This reads what git reads (config at
// every level, following includes; every attributes source) and answers which paths a checkout may
// have converted — conservatively: a path it may have converted is hashed like a plain folder's.
// Pure reads, never a spawned git.
import ignore, { type Ignore } from 'ignore';
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { GitDirs } from './git-repo.js';
import { MAX_TEXT_BYTES, readRegularFile, readSmallText } from '../small-text.js';
import { openGitObjects, type GitObjects } from './git-objects.js';
import { gitBlobId } from './git-repo.js';

type Env = Record<string, string | undefined>;

/** The core settings that bear on checkout conversion; undefined where nothing sets them. */
interface CoreSettings {
  autocrlf?: string;
  eol?: string;
  attributesFile?: string;
  /**
   * More config reads than MAX_CONFIG_READS: a file that includes itself a few times fans out
   * exponentially up to the depth limit (three self-includes took 7.5 s, four several minutes, on
   * every scan); what such a config sets is not known, so everything counts as converted.
   */
  unreadable?: boolean;
}

/** Include depth git itself allows (deeper, git stops: "exceeded maximum include depth"). */
const MAX_INCLUDE_DEPTH = 10;
/** Config files read for one answer, includes counted each time: past this, everything counts as converted. */
const MAX_CONFIG_READS = 1000;

/**
 * What a checkout in this work tree may convert: `none`; `all` (a config setting converts every text
 * file, or an attributes line ckpt cannot match safely); or the paths a predicate names (relative to
 * the work tree top, `/`-separated). The predicate over-matches, never under-matches: attribute
 * patterns are tested as gitignore patterns (the `ignore` package, case-insensitive), which match
 * everything gitattributes' do and more (a folder's contents too); an attribute a later line unsets
 * is still counted. `trackedAttributes`: every `.gitattributes` git's index lists (relative to the
 * top, with its staged blob, read too where the work tree's differs); `root`: the workspace (its
 * folders up to the top are read for untracked attribute files).
 */
export function checkoutConversion(dirs: GitDirs, root: string, trackedAttributes: readonly TrackedFile[], env: Env = process.env): CheckoutConversion {
  return checkoutConversions(dirs, root, trackedAttributes, env).any;
}

/**
 * checkoutConversion (`any`), and within it `opaque`: the paths whose conversion a size check cannot
 * rule out. Line endings (`text`, `eol`, `crlf`, `core.autocrlf`, `core.eol`) always change a file's
 * size when they change its bytes — a checkout only turns LF into CRLF, an add only CRLF into LF —
 * so a file of its blob's size holds its blob's bytes. A filter, a `working-tree-encoding`, `ident`
 * (an expanded `$Id: … $` in a blob is rewritten at the same size) or a replace ref may write
 * anything.
 */
export function checkoutConversions(dirs: GitDirs, root: string, trackedAttributes: readonly TrackedFile[], env: Env = process.env): { any: CheckoutConversion; opaque: CheckoutConversion } {
  const core = coreSettings(dirs, env);
  // A replace ref makes a checkout write another object's bytes than the id the index records.
  if (core.unreadable || (env.GIT_NO_REPLACE_OBJECTS === undefined && hasReplaceRefs(dirs.commondir))) return { any: 'all', opaque: 'all' };
  // `input` converts on `git add` (CRLF to LF), `true` both ways: a work-tree file may not hold its blob.
  const lineEndings = (core.autocrlf !== undefined && (isTrue(core.autocrlf) || core.autocrlf.trim().toLowerCase() === 'input')) || core.eol?.toLowerCase() === 'crlf';
  const home = env.HOME ?? homedir();
  // Each source with the folder its patterns are relative to ('' : the top), and whether it lies in
  // the work tree (then, as git does, not read through a symlink).
  const sources: [file: string, base: string, inTree: boolean, oid?: string][] = [];
  if (env.GIT_ATTR_NOSYSTEM === undefined || !isTrue(env.GIT_ATTR_NOSYSTEM)) sources.push(['/etc/gitattributes', '', false]);
  sources.push([core.attributesFile !== undefined ? expandHome(core.attributesFile, home) : join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'attributes'), '', false]);
  sources.push([join(dirs.commondir, 'info', 'attributes'), '', false]);
  for (const { path: rel, oid } of trackedAttributes) sources.push([join(dirs.top, rel), rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '', true, oid]);
  for (let dir = root; ; dir = dirname(dir)) {
    const base = relative(dirs.top, dir);
    if (base.startsWith('..') || isAbsolute(base)) break;
    sources.push([join(dir, '.gitattributes'), base.split(sep).join('/'), true]);
    if (base === '') break;
  }
  const read: { base: string; lines: AttributeLine[] }[] = [];
  const macros = new Map<string, string[]>();
  const seen = new Set<string>();
  let objects: GitObjects | undefined;
  for (const [file, base, inTree, oid] of sources) {
    if (seen.has(`${file}\0${oid ?? ''}`)) continue;
    seen.add(`${file}\0${oid ?? ''}`);
    const texts: Buffer[] = [];
    const bytes = readRegularFile(file, { follow: !inTree, maxBytes: MAX_TEXT_BYTES });
    if (bytes) texts.push(bytes);
    // A checkout reads a tracked .gitattributes from the index first: its staged version counts too
    // when the work tree's differs (edited, removed).
    if (oid !== undefined && (!bytes || gitBlobId(bytes) !== oid)) {
      const staged = (objects ??= openGitObjects(dirs.commondir)).readBlobs([oid])[0];
      if (staged && staged.length <= MAX_TEXT_BYTES) texts.push(staged);
    }
    for (const text of texts) {
      const parsed = parseAttributes(text.toString('utf8'));
      for (const [name, tokens] of parsed.macros) macros.set(name, [...(macros.get(name) ?? []), ...tokens]);
      read.push({ base, lines: parsed.lines });
    }
  }
  const opaque = pathsNamed(read, macros, (t) => tokenConverts(t) === 'opaque');
  return { any: lineEndings || opaque === 'all' ? 'all' : pathsNamed(read, macros, (t) => tokenConverts(t) !== false), opaque };
}

/** The paths the attribute lines with a token `converts` (directly or through a macro) name. */
function pathsNamed(read: readonly { base: string; lines: AttributeLine[] }[], macros: ReadonlyMap<string, string[]>, converts: (token: string) => boolean): CheckoutConversion {
  const converting = convertingMacros(macros, converts);
  const matchers: { base: string; matcher: Ignore }[] = [];
  for (const { base, lines } of read) {
    const patterns = lines.filter((l) => l.tokens.some((t) => converts(t) || converting.has(t))).map((l) => l.pattern);
    if (patterns.length === 0) continue;
    // A quoted or `!` pattern reads differently as a gitignore pattern: not matched, everything counts.
    if (patterns.some((pt) => pt === undefined || pt.startsWith('!'))) return 'all';
    try {
      matchers.push({ base, matcher: ignore().add(patterns as string[]) });
    } catch {
      return 'all';
    }
  }
  if (matchers.length === 0) return 'none';
  return (path) =>
    matchers.some(({ base, matcher }) => {
      if (base !== '' && !path.startsWith(`${base}/`)) return false;
      try {
        return matcher.ignores(base === '' ? path : path.slice(base.length + 1));
      } catch {
        return true;
      }
    });
}

/** True when `git replace` refs exist (loose or packed). */
function hasReplaceRefs(commondir: string): boolean {
  try {
    if (readdirSync(join(commondir, 'refs', 'replace')).length > 0) return true;
  } catch {
    // no such folder: none loose
  }
  return /^[0-9a-f]{40,64} refs\/replace\//m.test(readSmallText(join(commondir, 'packed-refs'), { follow: true }) ?? '');
}

/** A file git's index lists: its path relative to the work tree top and its blob id. */
export interface TrackedFile {
  path: string;
  oid: string;
}

/** See checkoutConversion. */
export type CheckoutConversion = 'none' | 'all' | ((topRel: string) => boolean);

interface AttributeLine {
  /** Undefined for a quoted pattern (C-style quoting gitignore patterns do not have). */
  pattern: string | undefined;
  tokens: string[];
}

/** The lines of an attributes file: patterns with their attribute tokens, and `[attr]` macro definitions. */
function parseAttributes(text: string): { lines: AttributeLine[]; macros: Map<string, string[]> } {
  const lines: AttributeLine[] = [];
  const macros = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('"')) {
      lines.push({ pattern: undefined, tokens: line.slice(closingQuote(line) + 1).split(/\s+/).filter(Boolean) });
      continue;
    }
    const [first = '', ...tokens] = line.split(/\s+/);
    if (first.startsWith('[attr]')) macros.set(first.slice(6), [...(macros.get(first.slice(6)) ?? []), ...tokens]);
    else lines.push({ pattern: first, tokens });
  }
  return { lines, macros };
}

/** Macro names whose definition sets an attribute `converts` names, directly or through another macro. */
function convertingMacros(macros: ReadonlyMap<string, string[]>, converts: (token: string) => boolean): Set<string> {
  const out = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, tokens] of macros) {
      if (!out.has(name) && tokens.some((t) => converts(t) || out.has(t))) {
        out.add(name);
        grew = true;
      }
    }
  }
  return out;
}

/**
 * Whether an attribute token converts on checkout or on `git add`, and how: `text` (set or `auto`),
 * any `eol` (it implies `text`) and the old `crlf` normalize CRLF to LF when a file is added, so a
 * CRLF file stays CRLF in the work tree, clean to git, with an LF blob; they change the size with
 * the bytes (`size`). A filter, an encoding or `ident` may write other bytes of the same size
 * (`opaque`).
 */
function tokenConverts(token: string): 'size' | 'opaque' | false {
  const eq = token.indexOf('=');
  const attr = (eq < 0 ? token : token.slice(0, eq)).toLowerCase();
  const value = eq < 0 ? undefined : token.slice(eq + 1);
  if (attr === 'filter' || attr === 'working-tree-encoding') return value !== undefined && 'opaque';
  // A blob may hold an expanded `$Id: <40 hex> $` (committed before the attribute applied): a
  // checkout rewrites it with the blob's own id, at the same size.
  if (attr === 'ident') return value === undefined && 'opaque';
  return (attr === 'eol' || attr === 'text' || attr === 'crlf') && 'size';
}

function closingQuote(line: string): number {
  for (let i = 1; i < line.length; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === '"') return i;
  }
  return line.length;
}

/** core.autocrlf, core.eol and core.attributesFile as git resolves them: system, global, local, worktree, environment; the last wins. */
function coreSettings(dirs: GitDirs, env: Env): CoreSettings {
  const out: CoreSettings = {};
  const home = env.HOME ?? homedir();
  const files: string[] = [];
  if (env.GIT_CONFIG_NOSYSTEM === undefined || !isTrue(env.GIT_CONFIG_NOSYSTEM)) files.push(env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig');
  if (env.GIT_CONFIG_GLOBAL !== undefined) files.push(env.GIT_CONFIG_GLOBAL);
  else files.push(join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'config'), join(home, '.gitconfig'));
  files.push(join(dirs.commondir, 'config'), join(dirs.gitdir, 'config.worktree'));
  const reads = { count: 0 };
  for (const file of files) readConfig(file, home, out, 0, reads);
  // `git -c` and GIT_CONFIG_COUNT reach the git an agent runs; they are seen here when inherited.
  const count = Number(env.GIT_CONFIG_COUNT ?? 0);
  for (let i = 0; i < count && i < 1000; i++) {
    const key = env[`GIT_CONFIG_KEY_${i}`];
    if (key !== undefined) setCore(out, key, env[`GIT_CONFIG_VALUE_${i}`] ?? 'true', home, undefined);
  }
  for (const m of (env.GIT_CONFIG_PARAMETERS ?? '').matchAll(/'([^']*)'(?:='([^']*)')?/g)) {
    const [key, value] = m[2] !== undefined ? [m[1] as string, m[2]] : splitKeyValue(m[1] as string);
    setCore(out, key, value, home, undefined);
  }
  return out;
}

function splitKeyValue(text: string): [string, string] {
  const eq = text.indexOf('=');
  return eq < 0 ? [text, 'true'] : [text.slice(0, eq), text.slice(eq + 1)];
}

/** Reads one config file into `out` in order, following `include.path` and every `includeIf.*.path` (conservatively, whatever the condition). */
function readConfig(file: string, home: string, out: CoreSettings, depth: number, reads: { count: number }): void {
  if (out.unreadable) return;
  if (++reads.count > MAX_CONFIG_READS) {
    out.unreadable = true;
    return;
  }
  const text = readSmallText(file, { follow: true });
  if (text === undefined || depth > MAX_INCLUDE_DEPTH) return;
  let section = '';
  for (const raw of text.replace(/\\\r?\n/g, '').split('\n')) {
    let line = raw.trim();
    const header = /^\[\s*([^\]\s"]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$/.exec(line);
    if (header) {
      const name = (header[1] as string).toLowerCase();
      // `[section "sub"]` and the old `[section.sub]` are subsections: only include's may match.
      section = /\s+"/.test(line.slice(0, line.indexOf(']'))) ? `${name}.*` : name;
      line = (header[2] as string).trim();
      if (line === '') continue;
    }
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!m) continue;
    const value = m[2] === undefined ? 'true' : configValue(m[2]);
    const key = `${section}.${(m[1] as string).toLowerCase()}`;
    if ((section === 'include' || section === 'includeif.*') && key.endsWith('.path')) {
      const target = expandHome(value, home);
      readConfig(isAbsolute(target) ? target : resolve(dirname(file), target), home, out, depth + 1, reads);
    } else setCore(out, key, value, home, file);
  }
}

function setCore(out: CoreSettings, key: string, value: string, home: string, file: string | undefined): void {
  switch (key.toLowerCase()) {
    case 'core.autocrlf':
      out.autocrlf = value;
      break;
    case 'core.eol':
      out.eol = value;
      break;
    case 'core.attributesfile': {
      const path = expandHome(value, home);
      out.attributesFile = isAbsolute(path) || file === undefined ? path : resolve(dirname(file), path);
      break;
    }
  }
}

/** A config value: quotes removed, escapes resolved, an unquoted comment cut. */
function configValue(text: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && i + 1 < text.length) {
      const n = text[++i] as string;
      out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
    } else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return out.trim();
}

function isTrue(value: string): boolean {
  return ['true', 'yes', 'on', '1'].includes(value.trim().toLowerCase());
}

function expandHome(path: string, home: string): string {
  return path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : path;
}

// Whether a checkout may convert content: config at every level (includes, the environment, last
// wins) and every attributes source, on folders laid out as git lays them out.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutConversion, type CheckoutConversion, type TrackedFile } from './git-convert.js';
import { gitBlobId } from './git-repo.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A work tree with `.git`, an empty HOME, and no system files (by the environment git honours). */
function layout(files: Record<string, string> = {}) {
  const base = mkdtempSync(join(tmpdir(), 'ckpt-convert-'));
  made.push(base);
  const top = join(base, 'repo');
  const home = join(base, 'home');
  for (const [rel, text] of Object.entries({ 'repo/.git/config': '[core]\n\tbare = false\n', 'home/.keep': '', ...files })) {
    mkdirSync(dirname(join(base, rel)), { recursive: true });
    writeFileSync(join(base, rel), text);
  }
  const dirs = { top, gitdir: join(top, '.git'), commondir: join(top, '.git') };
  const env = { HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_ATTR_NOSYSTEM: '1' };
  return {
    base,
    top,
    dirs,
    env,
    conversion: (tracked: string[] = [], root = top, extra: Record<string, string> = {}) => checkoutConversion(dirs, root, staged(top, tracked), { ...env, ...extra }),
    /** True when anything may convert (the answer is not `none`). */
    converts: (tracked: string[] = [], root = top, extra: Record<string, string> = {}) => checkoutConversion(dirs, root, staged(top, tracked), { ...env, ...extra }) !== 'none',
  };
}

/** Tracked files as the index lists them, staged as they are in the work tree (their blob ids match). */
function staged(top: string, paths: string[]): TrackedFile[] {
  return paths.map((path) => ({ path, oid: gitBlobId(readFileSync(join(top, path))) }));
}

/** The paths of `paths` a conversion names. */
function named(c: CheckoutConversion, paths: string[]): string[] {
  return paths.filter((p) => (c === 'all' ? true : c === 'none' ? false : c(p)));
}

describe('attribute text', () => {
  it('names what converts on checkout, and only that', () => {
    // On checkout, or on add (text, text=auto, any eol, the old crlf normalize CRLF to LF).
    for (const text of ['*.txt text eol=crlf', '*.bin filter=lfs diff=lfs merge=lfs -text', '*.c ident', '*.ps1 working-tree-encoding=UTF-16LE', '[attr]big filter=lfs\n*.psd big', '"a b.txt" eol=CRLF', '  *.x   ident  ', '* text=auto', '*.sh text eol=lf', '*.txt text', '*.c eol=lf', '*.c crlf=input', '[attr]norm text\n*.x norm']) {
      expect(layout({ 'repo/.gitattributes': text }).converts(), text).toBe(true);
    }
    for (const text of ['', '# *.txt eol=crlf', '*.png binary', '*.c -text', '*.c -crlf', '*.c !text', '*.c -ident', '*.c !filter', '*.md diff=markdown linguist-documentation', '*.bin -filter -text', 'ident', '"ident eol=crlf"']) {
      expect(layout({ 'repo/.gitattributes': text }).converts(), text).toBe(false);
    }
  });
});

describe('checkoutConversion', () => {
  it('is false for a plain repository', () => {
    expect(layout().converts()).toBe(false);
  });

  it('reads core.autocrlf and core.eol at every level, the last one winning', () => {
    expect(layout({ 'repo/.git/config': '[core]\n\tautocrlf = true\n' }).conversion()).toBe('all');
    expect(layout({ 'repo/.git/config': '[core]\n\tautocrlf = input\n' }).conversion()).toBe('all'); // on add
    expect(layout({ 'repo/.git/config': '[core]\n\tautocrlf\n' }).converts()).toBe(true);
    expect(layout({ 'repo/.git/config': '[Core] eol = "CRLF" # the old way\n' }).converts()).toBe(true);
    expect(layout({ 'home/.gitconfig': '[core]\n  autocrlf = yes\n' }).converts()).toBe(true);
    expect(layout({ 'home/.config/git/config': '[core]\nautocrlf=on\n' }).converts()).toBe(true);
    // The repository's own setting comes after the global one.
    expect(layout({ 'home/.gitconfig': '[core]\nautocrlf = true\n', 'repo/.git/config': '[core]\nautocrlf = false\n' }).converts()).toBe(false);
    expect(layout({ 'repo/.git/config.worktree': '[core]\nautocrlf = true\n' }).converts()).toBe(true);
    // A subsection is not [core].
    expect(layout({ 'repo/.git/config': '[core "x"]\nautocrlf = true\n[remote "origin"]\neol = crlf\n' }).converts()).toBe(false);
  });

  it('a git replace ref (loose or packed) names every path, unless GIT_NO_REPLACE_OBJECTS', () => {
    const loose = layout({ 'repo/.git/refs/replace/0123456789012345678901234567890123456789': '9876543210987654321098765432109876543210\n' });
    expect(loose.conversion()).toBe('all');
    expect(loose.conversion([], loose.top, { GIT_NO_REPLACE_OBJECTS: '1' })).toBe('none');
    expect(layout({ 'repo/.git/packed-refs': '# pack-refs with: peeled fully-peeled sorted\n0123456789012345678901234567890123456789 refs/replace/9876543210987654321098765432109876543210\n' }).conversion()).toBe('all');
  });

  it('follows include.path and includeIf paths (~, relative) and reads the environment', () => {
    expect(layout({ 'home/.gitconfig': '[include]\n\tpath = ~/more.inc\n', 'home/more.inc': '[core]\nautocrlf = true\n' }).converts()).toBe(true);
    expect(layout({ 'home/.gitconfig': '[includeIf "gitdir:~/work/"]\n\tpath = sub/work.inc\n', 'home/sub/work.inc': '[core]\neol = crlf\n' }).converts()).toBe(true);
    // An include that includes itself stops at git's depth.
    expect(layout({ 'home/.gitconfig': '[include]\npath = ~/.gitconfig\n' }).converts()).toBe(false);
    // One that includes itself four times would be read 4^11 times (minutes, every scan): past 1,000
    // reads the answer is `all`, at once.
    const t0 = performance.now();
    expect(layout({ 'repo/.git/config': `[include]\n${'\tpath = config\n'.repeat(4)}` }).conversion()).toBe('all');
    expect(performance.now() - t0).toBeLessThan(2_000);
    const l = layout();
    expect(l.converts([], l.top, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.autocrlf', GIT_CONFIG_VALUE_0: 'true' })).toBe(true);
    expect(l.converts([], l.top, { GIT_CONFIG_PARAMETERS: "'core.eol'='crlf'" })).toBe(true);
    expect(l.converts([], l.top, { GIT_CONFIG_PARAMETERS: "'core.autocrlf=true'" })).toBe(true);
    expect(l.converts([], l.top, { GIT_CONFIG_PARAMETERS: "'core.autocrlf'='false'" })).toBe(false);
    const g = layout({ 'elsewhere.cfg': '[core]\nautocrlf = true\n' });
    expect(g.converts([], g.top, { GIT_CONFIG_GLOBAL: join(g.base, 'elsewhere.cfg') })).toBe(true);
  });

  it('reads every attributes source: tracked files anywhere, the folders above the workspace, info/attributes, the global file', () => {
    const tracked = layout({ 'repo/lib/deep/.gitattributes': '*.bin filter=lfs\n' });
    expect(tracked.converts()).toBe(false); // not listed by the index, not above the workspace
    expect(tracked.converts(['lib/deep/.gitattributes'])).toBe(true);
    const above = layout({ 'repo/.gitattributes': '*.c ident\n', 'repo/pkg/app/x': '' });
    expect(above.converts([], join(above.top, 'pkg', 'app'))).toBe(true);
    expect(layout({ 'repo/.git/info/attributes': '* eol=crlf\n' }).converts()).toBe(true);
    expect(layout({ 'home/.config/git/attributes': '*.txt filter=crypt\n' }).converts()).toBe(true);
    const custom = layout({ 'home/.gitconfig': '[core]\n\tattributesFile = ~/attrs\n', 'home/attrs': '*.x working-tree-encoding=UTF-16\n' });
    expect(custom.converts()).toBe(true);
    expect(layout({ 'repo/.gitattributes': '*.png binary\n*.md -text diff=markdown\n' }).converts()).toBe(false);
  });

  it('names the paths the converting lines match, relative to their file (macros too); a pattern it cannot match safely names all', () => {
    const paths = ['a.bat', 'a.txt', 'lib/deep/x.bin', 'lib/x.bin', 'x.bin', 'art/a.psd', 'a.psd', 'pkg/app/m.c', 'pkg/m.c'];
    expect(named(layout({ 'repo/.gitattributes': '*.bat eol=crlf\n*.md diff=markdown\n' }).conversion(), paths)).toEqual(['a.bat']);
    expect(named(layout({ 'repo/lib/deep/.gitattributes': '*.bin filter=lfs\n' }).conversion(['lib/deep/.gitattributes']), paths)).toEqual(['lib/deep/x.bin']);
    expect(named(layout({ 'repo/.gitattributes': '[attr]big filter=lfs -text\n[attr]huge big\n*.psd huge\n*.bat -big\n' }).conversion(), paths)).toEqual(['art/a.psd', 'a.psd']);
    expect(named(layout({ 'repo/.gitattributes': '/pkg/app/*.c ident\n' }).conversion(), paths)).toEqual(['pkg/app/m.c']);
    // A folder pattern matches nothing in gitattributes; here it names the folder's files (more, never less).
    expect(named(layout({ 'repo/.git/info/attributes': 'lib/ filter=x\n' }).conversion(), paths)).toEqual(['lib/deep/x.bin', 'lib/x.bin']);
    expect(layout({ 'repo/.gitattributes': '"a b.txt" eol=crlf\n' }).conversion()).toBe('all');
    expect(layout({ 'repo/.gitattributes': '!x eol=crlf\n' }).conversion()).toBe('all');
    // Case: gitattributes match case-sensitively; the check is case-insensitive (more, never less).
    expect(named(layout({ 'repo/.gitattributes': '*.BAT eol=crlf\n' }).conversion(), paths)).toEqual(['a.bat']);
  });
});

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDirs, type TempDirs } from '../../test/helpers/temp.js';
import { createIgnoreRules } from './ignore-rules.js';
import { walkWorkspace } from './walk.js';

let dirs: TempDirs[] = [];
afterEach(async () => {
  for (const d of dirs) await d.cleanup();
  dirs = [];
});

function tree(root: string, files: Record<string, string>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), c);
  }
}

async function walked(root: string, storeDir?: string): Promise<{ files: string[]; ignoredDirs: string[] }> {
  const rules = createIgnoreRules({ root, storeDir });
  const files: string[] = [];
  const visitor = { known: () => -1, dir: () => 0, enterDir: () => {}, leaveDir: () => {}, entry: (rel: string) => void files.push(rel) };
  const r = await walkWorkspace({ root, rules }, visitor);
  return { files: files.sort(), ignoredDirs: r.ignoredDirs.sort() };
}

describe('ignore rules and the walker', () => {
  it.skipIf(process.platform === 'darwin' || process.platform === 'win32')('match case-sensitively, as git does here (`*.[aos]` does not ignore `x.S`)', async () => {
    const d = await makeTempDirs('ckpt-ignore-');
    dirs.push(d);
    tree(d.workspace, { '.gitignore': '*.[aos]\n', 'ppc/sha1ppc.S': 'asm', 'ppc/x.o': 'obj', 'Build.LOG': 'b' });
    const rules = createIgnoreRules({ root: d.workspace });
    expect(rules.isIgnoredPath('ppc/sha1ppc.S')).toBe(false);
    expect(rules.isIgnoredPath('ppc/x.o')).toBe(true);
    expect((await walked(d.workspace)).files).toEqual(['.gitignore', 'Build.LOG', 'ppc/sha1ppc.S']);
  });

  it('applies .gitignore at every level with negation, .ckptignore, info/exclude, defaults and the store', async () => {
    const d = await makeTempDirs('ckpt-ignore-');
    dirs.push(d);
    const root = d.workspace;
    tree(root, {
      '.gitignore': '*.log\n!important.log\n/only-root.txt\nbuild/\n',
      '.ckptignore': 'private/\n',
      '.git/info/exclude': 'excluded\n',
      '.git/HEAD': 'ref',
      'a.log': '', 'important.log': '', 'only-root.txt': '', 'sub/only-root.txt': '',
      'build/x': '', 'private/key': '', 'excluded': '', 'node_modules/p/i.js': '',
      'sub/.gitignore': '!a.log\nlocal\n', 'sub/a.log': '', 'sub/local': '', 'sub/deeper/local': '',
      'store/blobs/x': '', 'keep.txt': '',
    });
    const { files, ignoredDirs } = await walked(root, join(root, 'store'));
    expect(files).toEqual(['.ckptignore', '.gitignore', 'important.log', 'keep.txt', 'sub/.gitignore', 'sub/a.log', 'sub/only-root.txt']);
    expect(ignoredDirs).toEqual(['.git', 'build', 'node_modules', 'private', 'store']);
    const rules = createIgnoreRules({ root, storeDir: join(root, 'store') });
    expect(rules.isIgnoredPath('sub/deeper/local')).toBe(true);
    expect(rules.isIgnoredPath('sub/a.log')).toBe(false);
    expect(rules.isIgnoredPath('x/node_modules/y.js')).toBe(true);
    expect(rules.isIgnoredPath('build/new/file')).toBe(true);
    expect(rules.isIgnoredPath('store/anything')).toBe(true);
  });

  it('a workspace inside a repository obeys the .gitignore files above it', async () => {
    const d = await makeTempDirs('ckpt-ignore-');
    dirs.push(d);
    tree(d.workspace, { '.git/HEAD': 'ref', '.gitignore': 'pkg/app/gen/\n*.tmp\n', 'pkg/.gitignore': 'app/secret\n', 'pkg/app/gen/x': '', 'pkg/app/a.tmp': '', 'pkg/app/secret': '', 'pkg/app/ok.ts': '' });
    expect((await walked(join(d.workspace, 'pkg', 'app'))).files).toEqual(['ok.ts']);
  });
});

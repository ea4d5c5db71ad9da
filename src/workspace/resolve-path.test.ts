import fc from 'fast-check';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertRelativePath, resolveBeneath } from './resolve-path.js';

let base: string;
let root: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'ckpt-resolve-')));
  root = join(base, 'ws');
  await mkdir(join(root, 'src/deep'), { recursive: true });
  await mkdir(join(base, 'outside'));
  await writeFile(join(root, 'src/a.ts'), 'a');
  await symlink(join(base, 'outside'), join(root, 'out-link'));
  await symlink(join(root, 'src'), join(root, 'src-link'));
  await symlink(join(base, 'nowhere'), join(root, 'dangling'));
  await symlink('../outside/secret', join(root, 'leaf-link'));
});
afterAll(() => rm(base, { recursive: true, force: true }));

describe('resolveBeneath', () => {
  it('accepts relative, absolute-inside and not-yet-existing paths, stored relative with /', async () => {
    expect((await resolveBeneath(root, 'src/a.ts')).rel).toBe('src/a.ts');
    expect((await resolveBeneath(root, join(root, 'src/a.ts'))).rel).toBe('src/a.ts');
    expect((await resolveBeneath(root, 'new/dir/file.txt')).rel).toBe('new/dir/file.txt');
    expect((await resolveBeneath(root, './src/../src/deep/x')).rel).toBe('src/deep/x');
    expect((await resolveBeneath(root, 'a.ts', join(root, 'src'))).rel).toBe('src/a.ts');
  });

  it('refuses a sibling whose name begins with the name of the root, and the root itself', async () => {
    await mkdir(join(base, 'ws2'), { recursive: true });
    await expect(resolveBeneath(root, join(base, 'ws2/x.ts'))).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    await expect(resolveBeneath(root, '../ws2/x.ts')).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    await expect(resolveBeneath(root, root)).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    expect((await resolveBeneath(`${root}/`, 'src/a.ts')).rel).toBe('src/a.ts');
  });

  it('resolves symlinked ancestors that stay inside, and keeps a leaf symlink unfollowed', async () => {
    expect((await resolveBeneath(root, 'src-link/a.ts')).rel).toBe('src/a.ts');
    expect((await resolveBeneath(root, 'leaf-link')).rel).toBe('leaf-link');
    expect((await resolveBeneath(root, 'out-link')).rel).toBe('out-link');
  });

  it.each(['..', '../x', 'src/../../x', '/etc/passwd', 'out-link/secret', 'out-link/new/file', '.', 'dangling/x'])(
    'refuses %j with PATH_ESCAPE',
    async (p) => {
      await expect(resolveBeneath(root, p)).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    },
  );

  it('never returns a path outside the root (property)', async () => {
    const segment = fc.constantFrom('..', '.', 'src', 'deep', 'out-link', 'src-link', 'x', 'a.ts', 'dangling');
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), fc.boolean(), async (segs, absolute) => {
        const input = absolute ? join(root, ...segs) : segs.join('/');
        try {
          const { rel, abs } = await resolveBeneath(root, input);
          expect(abs.startsWith(`${root}/`)).toBe(true);
          expect(rel.split('/')).not.toContain('..');
          expect(() => assertRelativePath(rel)).not.toThrow();
          expect(rel.startsWith('out-link/')).toBe(false);
        } catch (err) {
          expect((err as { code: string }).code).toBe('PATH_ESCAPE');
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('assertRelativePath', () => {
  it.each(['', '/a', 'a/../b', './a', 'a//b', 'a/'])('refuses %j', (p) => {
    expect(() => assertRelativePath(p)).toThrowError(expect.objectContaining({ code: 'PATH_ESCAPE' }));
  });
  it('accepts clean paths', () => {
    expect(assertRelativePath('src/a.ts')).toBe('src/a.ts');
  });
});

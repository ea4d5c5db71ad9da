import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ancestorsOf, checkParentChainSync, checkParentChainsSync, readPresent, readPresentImages } from './present.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ckpt-present-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('parent chains', () => {
  it('ancestorsOf lists every folder above a path, outermost first', () => {
    expect(ancestorsOf('a/b/c.txt')).toEqual(['a', 'a/b']);
    expect(ancestorsOf('top.txt')).toEqual([]);
  });

  it('checkParentChainsSync answers for each path what checkParentChainSync does alone', () => {
    mkdirSync(join(root, 'a/b'), { recursive: true });
    mkdirSync(join(root, 'outside'));
    symlinkSync(join(root, 'outside'), join(root, 'a/link'));
    writeFileSync(join(root, 'a/file'), 'x');
    const rels = ['top', 'a/x', 'a/b/x', 'a/b/x', 'a/link/x', 'a/link/deeper/x', 'a/file/x', 'a/new/x', 'a/new/deeper/x', 'gone/x', 'a/b/new/x'];
    expect(checkParentChainsSync(root, rels)).toEqual(rels.map((r) => checkParentChainSync(root, r)));
  });
});

describe('readPresentImages', () => {
  it('answers for each path what readPresent does alone (chains checked a slice at a time)', async () => {
    mkdirSync(join(root, 'a/b'), { recursive: true });
    mkdirSync(join(root, 'outside'));
    writeFileSync(join(root, 'outside/x'), 'outside');
    symlinkSync(join(root, 'outside'), join(root, 'a/link'));
    writeFileSync(join(root, 'a/file'), 'x');
    writeFileSync(join(root, 'a/b/x'), 'bx');
    writeFileSync(join(root, 'top'), 'top');
    const rels = ['top', 'a/x', 'a/b/x', 'a/link/x', 'a/file/x', 'a/new/x', 'gone/x'];
    // More than one slice, the same folders in each.
    for (let i = 0; i < 40; i++) rels.push(`a/b/f${i}`, `a/link/f${i}`);
    for (let i = 0; i < 40; i += 3) writeFileSync(join(root, `a/b/f${i}`), `f${i}`);
    const images = await readPresentImages(root, rels, 1 << 20);
    expect([...images.keys()]).toEqual(rels);
    for (const rel of rels) expect(images.get(rel)).toEqual(await readPresent(root, rel, 1 << 20));
    expect(images.get('a/link/x')).toMatchObject({ state: 'skipped', at: 'a/link' });
    expect(images.get('a/b/f3')).toMatchObject({ state: 'file' });
  });
});

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ancestorsOf, checkParentChainSync, checkParentChainsSync } from './present.js';

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

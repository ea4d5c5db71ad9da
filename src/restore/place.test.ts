import { closeSync, linkSync, lstatSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { placeEntries } from './place.js';
import { stagePath } from './stage.js';
import type { PlannedEntry } from './plan-restore.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ckpt-place-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (path: string): PlannedEntry => ({ path, action: 'write', blob: 'b'.repeat(64), mode: 0o644 });
const contentOf = (entries: readonly PlannedEntry[]) => (i: number) => Buffer.from(`new ${entries[i]!.path}\n`);
const allNames = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? allNames(join(dir, d.name)).map((n) => `${d.name}/${n}`) : [d.name]));

describe('placeEntries over existing files', () => {
  it('replaces each file atomically (a reader of the old file keeps it) and leaves no second name behind', async () => {
    mkdirSync(join(root, 'src'));
    const paths = Array.from({ length: 40 }, (_, i) => (i % 2 ? `src/f${i}.ts` : `f${i}.ts`));
    for (const p of paths) writeFileSync(join(root, p), `old ${p}\n`);
    // Someone's own hard link to one of them, and a descriptor open on another: both keep the old bytes.
    linkSync(join(root, 'f0.ts'), join(root, 'mine.ts'));
    const held = openSync(join(root, 'src/f1.ts'), 'r');
    const entries = paths.map(write);
    const out = await placeEntries(root, 'abcdef0123456789', entries, contentOf(entries));
    expect(out.restored).toEqual(paths);
    expect(out.skipped).toEqual([]);
    for (const p of paths) expect(readFileSync(join(root, p), 'utf8')).toBe(`new ${p}\n`);
    expect(readFileSync(join(root, 'mine.ts'), 'utf8')).toBe('old f0.ts\n');
    expect(lstatSync(join(root, 'mine.ts')).nlink).toBe(1);
    const buf = Buffer.alloc(64);
    expect(buf.subarray(0, readSync(held, buf, 0, 64, 0)).toString()).toBe('old src/f1.ts\n');
    closeSync(held);
    expect(allNames(root).sort()).toEqual([...paths, 'mine.ts'].sort());
  });

  it('still replaces a file whose second name is taken (a leftover of an interrupted run)', async () => {
    writeFileSync(join(root, 'a.txt'), 'old\n');
    const entries = [write('a.txt')];
    const id = 'abcdef0123456789';
    // The name the replaced file would get: a leftover there makes the link fail, and the rename frees the file itself.
    writeFileSync(stagePath(root, 'a.txt', id, 'd0'), 'leftover\n');
    const out = await placeEntries(root, id, entries, contentOf(entries));
    expect(out.restored).toEqual(['a.txt']);
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('new a.txt\n');
    expect(readFileSync(stagePath(root, 'a.txt', id, 'd0'), 'utf8')).toBe('leftover\n');
  });
});

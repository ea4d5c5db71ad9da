import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TempDirs } from '../../test/helpers/temp.js';
import { useLibWorld } from '../../test/helpers/lib-session.js';
import type { Session } from '../api/session.js';
import { keepContent } from './kept-content.js';
import { readPresent } from './present.js';

let dirs: TempDirs;
let session: Session;
const w = (rel: string) => join(dirs.workspace, rel);
/** Past the window in which a file counts as just changed (racy). */
const settleTicks = () => new Promise((r) => setTimeout(r, 120));

useLibWorld('ckpt-kept-content-', (world) => ({ dirs, session } = world));

describe('content kept from the plan for the recovery capture', () => {
  it('hands back the bytes only while the file is the one read', async () => {
    for (const f of ['same', 'rewritten', 'chmodded', 'grown']) await writeFile(w(f), 'v1\n');
    await settleTicks();
    const kept = keepContent();
    for (const f of ['same', 'rewritten', 'chmodded', 'grown']) await readPresent(dirs.workspace, f, 1 << 20, kept);
    await writeFile(w('rewritten'), 'v2\n'); // same size, later mtime
    await chmod(w('chmodded'), 0o600);
    await writeFile(w('grown'), 'v1 and more\n');
    expect(kept.take('same', w('same'))?.data.toString()).toBe('v1\n');
    expect(kept.take('same', w('same'))).toBeUndefined(); // taken once
    expect(kept.take('rewritten', w('rewritten'))).toBeUndefined();
    expect(kept.take('chmodded', w('chmodded'))).toBeUndefined();
    expect(kept.take('grown', w('grown'))).toBeUndefined();
  });

  it('keeps nothing of a file changed just before the read, nor beyond its budget', async () => {
    await writeFile(w('old'), 'old\n');
    await settleTicks();
    await writeFile(w('fresh'), 'fresh\n');
    const kept = keepContent();
    await readPresent(dirs.workspace, 'fresh', 1 << 20, kept);
    await readPresent(dirs.workspace, 'old', 1 << 20, kept);
    expect(kept.take('fresh', w('fresh'))).toBeUndefined();
    expect(kept.take('old', w('old'))?.data.toString()).toBe('old\n');
    const small = keepContent(2);
    await readPresent(dirs.workspace, 'old', 1 << 20, small);
    expect(small.take('old', w('old'))).toBeUndefined();
  });

  it('a file changed between the plan and the recovery capture is captured as it is then (drift)', async () => {
    await writeFile(w('a.txt'), 'v1\n');
    await session.turn();
    await session.capture(['a.txt']);
    await writeFile(w('a.txt'), 'v2\n');
    await session.settle(['a.txt']);
    await settleTicks();
    // After the plan read a.txt (v2, kept) and before the capture: a same-size write.
    const r = await session.restore('1', { force: true, checkPlan: async () => writeFile(w('a.txt'), 'v3\n') });
    expect(r.drift).toEqual(['a.txt']);
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v1\n');
    await session.restore(r.undo!, { force: true });
    expect(await readFile(w('a.txt'), 'utf8')).toBe('v3\n');
  });
});

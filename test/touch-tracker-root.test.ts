// The daemon's touch tracker when the workspace root itself is replaced (`mv ws ws.old && cp -a
// ws.old ws`): the root's watch follows the old folder, so a daemon probe saw every later watched scan
// of that workspace come back empty. The next take answers undefined (a full scan) and watches anew.
import { cpSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createTouchTracker } from '../src/daemon/touch-tracker.js';
import { makeTempDirs } from './helpers/temp.js';

const settle = () => new Promise((r) => setTimeout(r, 100));

it('a replaced root: the next take asks for a full scan, and later changes are seen again', async () => {
  const dirs = await makeTempDirs('ckpt-touch-root-');
  const root = dirs.workspace;
  writeFileSync(join(root, 'a.txt'), 'a');
  const tracker = createTouchTracker({ root });
  try {
    expect(await tracker.take()).toBeUndefined(); // before the watches: unknown
    writeFileSync(join(root, 'a.txt'), 'a2');
    await settle();
    expect(await tracker.take()).toEqual(new Set(['a.txt']));
    renameSync(root, `${root}.old`);
    cpSync(`${root}.old`, root, { recursive: true });
    writeFileSync(join(root, 'a.txt'), 'in the new folder');
    await settle();
    expect(await tracker.take()).toBeUndefined();
    writeFileSync(join(root, 'b.txt'), 'b');
    await settle();
    expect(await tracker.take()).toEqual(new Set(['b.txt']));
  } finally {
    tracker.close();
  }
});

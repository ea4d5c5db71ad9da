// Folder permission bits (issue 26, found by the real-Claude suite): a folder made `mkdir -m 700`
// that the agent moves or removes comes back with its mode, and an agent's chmod of an existing
// folder is undone — by restore, and the restore's undo gives the later modes back. Scans record a
// folder's mode (created, deleted, a mode change); a folder recorded without one (older stores) is
// made with the umask's and its mode never counts as a change.
import { chmod, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaptureEvent } from '../src/format/event.js';
import { capture } from '../src/capture/capture.js';
import { settle } from '../src/capture/settle.js';
import { startTurn } from '../src/capture/turn.js';
import { restore } from '../src/restore/index.js';
import { entryForImage } from '../src/restore/plan-restore.js';
import { scan } from '../src/scan/index.js';
import { sameImage } from '../src/format/same-image.js';
import { makeScanWorld, treeOf } from './fixtures/scan-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeScanWorld);

/** Every folder beneath `root` with its permission bits (the store and .git left out). */
async function folderModes(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(rel: string): Promise<void> {
    for (const name of (await readdir(join(root, rel))).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const info = await lstat(join(root, r));
      if (!info.isDirectory() || name === '.git' || name === '.ckpt-store') continue;
      out[r] = (info.mode & 0o7777).toString(8);
      await walk(r);
    }
  }
  await walk('');
  return out;
}

describe('folder modes', () => {
  it('mkdir -m 700, chmod of a folder, then the folder moved or removed: every turn restores the modes, every undo too', async () => {
    const w = await world();
    await w.write('src/a.txt', 'a');
    await w.write('keep.txt', 'k');
    await chmod(w.at('src'), 0o755);
    await scan(w.session);
    const lastCapture = async () => (await w.session.events()).filter((e): e is CaptureEvent => e.type === 'capture').at(-1)!;
    const snap = async () => ({ tree: await treeOf(w.root), modes: await folderModes(w.root) });

    const at1 = await snap();
    await startTurn(w.session);
    await mkdir(w.at('private'));
    await chmod(w.at('private'), 0o700);
    await w.write('private/s.txt', 's');
    await mkdir(w.at('pub'));
    await chmod(w.at('src'), 0o711);
    await scan(w.session, { tool: 'Bash' });
    // The scan's capture holds the folder's mode before the chmod (its own change kind).
    expect((await lastCapture()).files.find((f) => f.path === 'src')).toMatchObject({ state: 'dir', mode: 0o755 });

    const at2 = await snap();
    expect(at2.modes).toMatchObject({ private: '700', src: '711' });
    await startTurn(w.session);
    await rename(w.at('private'), w.at('private2'));
    await rm(w.at('pub'), { recursive: true });
    await chmod(w.at('src'), 0o755);
    await scan(w.session, { tool: 'Bash' });
    const second = await lastCapture();
    expect(second.files.find((f) => f.path === 'private')).toMatchObject({ state: 'dir', mode: 0o700 });
    expect(second.files.find((f) => f.path === 'src')).toMatchObject({ state: 'dir', mode: 0o711 });
    const end = await snap();

    for (const [tag, want] of [['2', at2], ['1', at1]] as const) {
      const r = await restore(w.session, tag);
      expect(await snap(), `restore ${tag}`).toEqual(want);
      await restore(w.session, r.undo!);
      expect(await snap(), `undo of restore ${tag}`).toEqual(end);
    }
  });

  // Found by a restore-promise probe: a capture of a file below a folder implies the folder (no mode);
  // a later record of the folder itself (its removal, its chmod) holds its mode, which was dropped.
  for (const then of ['removed', 'chmod', 'tool capture, then chmod'] as const) {
    it(`a 0700 folder implied by a capture of its file, then ${then}: a restore gives it 0700 again`, async () => {
      const w = await world();
      await w.write('d1/f', 'x');
      await chmod(w.at('d1'), 0o700);
      await scan(w.session);
      await startTurn(w.session);
      const at1 = { tree: await treeOf(w.root), modes: await folderModes(w.root) };
      if (then === 'tool capture, then chmod') {
        await capture(w.session, ['d1/f'], { tool: 'Edit' });
        await w.write('d1/f', 'y');
        await settle(w.session, ['d1/f']);
      } else {
        await w.write('d1/f', 'y');
        await scan(w.session);
      }
      if (then === 'removed') await rm(w.at('d1'), { recursive: true });
      else await chmod(w.at('d1'), 0o750);
      await scan(w.session);
      await restore(w.session, '1', {});
      expect({ tree: await treeOf(w.root), modes: await folderModes(w.root) }).toEqual(at1);
    });
  }

  it('a folder recorded without a mode (older stores) is made with the default one and its mode is no change', () => {
    expect(entryForImage({ path: 'd', state: 'dir' })).toEqual({ path: 'd', action: 'mkdir' });
    expect(entryForImage({ path: 'd', state: 'dir', mode: 0o700 })).toEqual({ path: 'd', action: 'mkdir', mode: 0o700 });
    expect(sameImage({ path: 'd', state: 'dir' }, { path: 'd', state: 'dir', mode: 0o700 })).toBe(true);
    expect(sameImage({ path: 'd', state: 'dir', mode: 0o755 }, { path: 'd', state: 'dir', mode: 0o700 })).toBe(false);
  });
});

// Whatever capture accepts, restore restores (issue 10 item 4): legal POSIX names with a backslash,
// a newline, a carriage return or a leading dash go through capture, scan and restore like any other;
// a name that is not valid UTF-8 cannot be named by ckpt at all, so it is reported skipped by capture
// and scan and never deleted by a restore.
import { readlinkSync, symlinkSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';
import { restore } from '../src/restore/index.js';
import { scan } from '../src/scan/index.js';
import { makeWorld, snapshot } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);
const ODD = ['back\\slash.txt', 'dir\\x/inner.txt', 'new\nline.txt', 'carriage\rreturn.txt', '-leading-dash.txt', 'tab\there.txt', ' space '];

describe('odd but legal names', () => {
  it('are restored by a tool-call restore (capture/settle) and by a scan-based restore', async () => {
    const w = await world();
    for (const name of ODD) await w.write(name, `original ${name}`);
    await w.turn();
    const before = await snapshot(w.root);
    await w.tool(ODD.slice(0, 3), async () => {
      for (const name of ODD.slice(0, 3)) await w.write(name, 'changed by a tool');
    });
    const r = await restore(w.session, '1');
    expect(r.skipped).toEqual([]);
    expect(r.restored.sort()).toEqual(ODD.slice(0, 3).sort());
    expect(await snapshot(w.root)).toEqual(before);

    // The same through scans (shell side effects): a baseline, then changes and deletes.
    await scan(w.session);
    await w.turn();
    for (const name of ODD) await w.remove(name);
    await w.write('created\\by shell', 'x');
    const s = await scan(w.session);
    expect(s.files.map((f) => f.path).sort()).toEqual([...ODD, 'created\\by shell'].sort());
    const back = await restore(w.session, '2');
    expect(back.skipped).toEqual([]);
    expect(await snapshot(w.root)).toEqual(before);
  });

  it('a name that is not UTF-8 is reported skipped by capture and scan, and never deleted', async () => {
    const w = await world();
    const raw = Buffer.concat([Buffer.from(w.root + '/'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]);
    await writeFile(raw, 'bytes ckpt cannot name');
    await scan(w.session);
    await w.turn();
    const [name] = (await readdir(w.root)).filter((n) => n.includes('\uFFFD'));
    // Capture by the only name Node can give it: not recorded as absent (a restore would "delete" it).
    const c = await w.session.capture([name!]);
    expect(c.files).toEqual([{ path: name, state: 'skipped', why: 'name-not-utf8' }]);
    await writeFile(raw, 'changed');
    await w.write('other.txt', 'x');
    const s = await scan(w.session);
    expect(s.skipped).toEqual(expect.arrayContaining([expect.objectContaining({ path: name })]));
    await restore(w.session, '1', { force: true });
    expect(await readFile(raw, 'utf8')).toBe('changed');
    expect(await readdir(w.root)).not.toContain('other.txt');
  });

  it('a symlink whose target is not UTF-8 is skipped by capture and scan, never rewritten with another target', async () => {
    // Found by a filesystem probe: `tgt\xff\xfe` was recorded and restored as `tgt\uFFFD\uFFFD`.
    const w = await world();
    const bad = Buffer.concat([Buffer.from('tgt'), Buffer.from([0xff, 0xfe])]);
    const link = join(w.root, 'l');
    symlinkSync(bad, link);
    await scan(w.session);
    await w.turn();
    const c = await w.session.capture(['l']);
    expect(c.files).toEqual([{ path: 'l', state: 'skipped', why: 'target-not-utf8' }]);
    await w.session.settle(['l']);
    await w.remove('l');
    symlinkSync(Buffer.concat([Buffer.from('tgt'), Buffer.from([0xfe, 0xff])]), link);
    const s = await scan(w.session);
    expect(s.skipped).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'l', why: 'target-not-utf8' })]));
    await restore(w.session, '1', { force: true });
    expect(readlinkSync(link, { encoding: 'buffer' })).toEqual(Buffer.concat([Buffer.from('tgt'), Buffer.from([0xfe, 0xff])]));
  });
});


describe('names that are Object.prototype members', () => {
  it('`constructor`, `toString` and `__proto__` are plain owner-index keys: no bogus conflict, records kept', async () => {
    const w = await world();
    const names = ['constructor', 'toString', '__proto__'];
    for (const n of names) await w.write(n, 'v0');
    await w.turn();
    await w.tool(names, async () => {
      for (const n of names) await w.write(n, 'v1');
    });
    for (const n of names) await w.write(n, 'by hand');
    const c = await w.session.capture(names);
    expect(c.conflicts).toBeUndefined();
    const events = await w.session.events();
    expect(events.filter((e) => e.type === 'conflict')).toEqual([]);
    const wsDir = join(w.dirs.store, 'workspaces', (await readdir(join(w.dirs.store, 'workspaces')))[0]!);
    const owners = JSON.parse(await readFile(join(wsDir, 'owners.json'), 'utf8'));
    expect(Object.keys(owners).sort()).toEqual([...names].sort());
  });
});

// A change nobody recorded (a hand edit) must be recorded before ckpt takes the present as known —
// else `restore N --force` gives the hand edit back as prompt N's state. Three ways a history probe
// (2026-12-07) found to skip that: a second session's capture with no turn of its own, a folder made
// by hand and then named by a tool, and a fork whose first record names the present (DESIGN §10
// "A capture by a session that never knew the path").
import { lstat, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeWorld, snapshot } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';

const world = useWorlds(makeWorld);

describe('a change nobody recorded is recorded before the present is taken as known', () => {
  it("a second session's capture before any turn of its own: the first session's restore gives its prompt back", async () => {
    const w = await world();
    await w.write('a', 'one\n');
    await w.session.turn(); // prompt 1 of A: a = one, no b
    const b = await w.ws.create({ title: 'second agent' });
    await writeFile(w.at('a'), 'hand\n');
    await writeFile(w.at('b'), 'hand\n');
    await b.capture(['a', 'b'], { tool: 'Write' });
    await writeFile(w.at('a'), 'agent\n');
    await writeFile(w.at('b'), 'agent\n');
    await b.settle(['a', 'b']);
    await w.session.restore('1', { force: true });
    expect(await readFile(w.at('a'), 'utf8')).toBe('one\n');
    expect(existsSync(w.at('b'))).toBe(false);
  });

  it('a folder made by hand, then named by a tool: the restore removes it, with what was made in it', async () => {
    const w = await world();
    await w.write('a', 'one\n');
    await w.session.turn();
    await mkdir(w.at('e'));
    await mkdir(w.at('f'));
    await writeFile(w.at('f/inside'), 'by hand\n');
    await w.session.capture(['e', 'f'], { tool: 'Bash' });
    await w.session.settle(['e', 'f']);
    await w.session.restore('1', { force: true });
    expect(existsSync(w.at('e'))).toBe(false);
    expect(existsSync(w.at('f'))).toBe(false);
    expect(await readFile(w.at('a'), 'utf8')).toBe('one\n');
  });

  it('a folder replaced by hand with a symlink during a turn, then written through by a tool: the hand change comes first', async () => {
    const w = await world();
    await w.write('lib/a.js', 'a\n');
    await w.write('tgt/t.js', 't\n');
    await w.session.turn();
    await rm(w.at('lib'), { recursive: true });
    await symlink('tgt', w.at('lib'));
    const beforeWrite = await snapshot(w.root);
    const c = await w.session.capture(['lib/agent.js'], { tool: 'Write' });
    await writeFile(w.at('lib/agent.js'), 'agent\n');
    await w.session.settle(['lib/agent.js']);
    // The hand change is the user's capture before the tool's (1.1), so the tool's tag is the tree just before its write.
    expect(c.tag).toBe('1.2');
    await w.session.restore(c.tag!, { force: true });
    expect(await snapshot(w.root)).toEqual(beforeWrite);
    await w.session.restore('1', { force: true });
    expect((await lstat(w.at('lib'))).isDirectory()).toBe(true);
    expect(await readFile(w.at('lib/a.js'), 'utf8')).toBe('a\n');
  });

  it('a fork made at an earlier prompt over a hand edit: the parent still restores its later prompt', async () => {
    const w = await world();
    await w.session.turn(); // prompt 1: no a
    await w.write('a', 'five\n');
    await w.session.turn(); // prompt 2: a = five (recorded by the turn's scan)
    await writeFile(w.at('a'), 'hand\n');
    const fork = await w.ws.fork(w.session.id, { atTag: '1' });
    await w.session.restore('2', { force: true });
    expect(await readFile(w.at('a'), 'utf8')).toBe('five\n');
    // The fork still sees its point: no a.
    await fork.restore('1', { force: true });
    expect(existsSync(w.at('a'))).toBe(false);
  });
});

// A fork at a tag `N.K` starts where `restore N.K` would put the workspace: just before capture N.K,
// so another session's write between prompt N and that capture is part of the fork point (a probe,
// 2026-12-07: the fork took prompt N's tree, and its `restore 1.1` undid the other session's write).
// Through the library, the CLI (`session fork --at`), and MCP/HTTP share the store's path.
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeWorld } from './fixtures/restore-world.js';
import { useWorlds } from './helpers/worlds.js';
import { runCli } from './helpers/cli.js';

const world = useWorlds(makeWorld);

describe('a fork at N.K', () => {
  for (const via of ['library', 'cli'] as const) {
    it(`is placed after another session's capture made between prompt N and capture N.K (${via})`, async () => {
      const w = await world();
      await w.write('a', 'one\n');
      await w.session.turn(); // A's prompt 1: a = one
      const b = await w.ws.create({ title: 'B' });
      await b.turn();
      await b.capture(['a'], { tool: 'Write' });
      await writeFile(w.at('a'), 'B\n');
      await b.settle(['a']); // B writes a = B after A's prompt 1
      await w.tool(['c'], () => writeFile(w.at('c'), 'c\n')); // A's capture 1.1: the workspace then has a = B, no c
      let forkId: string;
      if (via === 'library') forkId = (await w.ws.fork(w.session.id, { atTag: '1.1' })).id;
      else {
        const r = await runCli(['--store', w.dirs.store, 'session', 'fork', '--at', '1.1', '--session', w.session.id, '--json'], { cwd: w.root });
        expect(r.code, r.stderr).toBe(0);
        forkId = r.json().session.id;
        // The hint names the fork record's tag, which is the fork point; `@seq` lies before B's capture.
        for (const command of ['log', 'status']) {
          const text = await runCli(['--store', w.dirs.store, '--session', forkId, command], { cwd: w.root });
          expect(text.stdout, command).toMatch(/recorded as 1\.1; restore 1\.1 puts them back|\(restore 1\.1 puts them back\)/);
        }
      }
      const fork = await w.ws.get(forkId);
      await fork.restore('1.1', { force: true });
      expect(await readFile(w.at('a'), 'utf8')).toBe('B\n');
      expect(existsSync(w.at('c'))).toBe(false);
    });
  }
});

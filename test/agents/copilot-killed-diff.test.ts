// The real GitHub Copilot CLI killed in the middle of a `bash` tool call (DESIGN §10 "diff looks
// too"): the command's writes got no after-tool scan, so no capture names them. `ckpt diff 2` lists
// them (`unrecorded`) exactly as `ckpt restore 2 --dry-run` plans them — before, `restore 2` refused
// DRIFT on files `diff 2` did not show — and the forced restore gives prompt 2's tree back.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeCliAgentWorld, type CliAgentWorld } from './harness/cli-agents.js';
import { diffTrees, snapshotTree } from './harness/tree-snapshot.js';

const P1 = 'Fix the greeting';
const P2 = 'Regenerate the fixtures';

let w: CliAgentWorld;

beforeAll(async () => {
  w = await makeCliAgentWorld('copilot', {
    files: { 'src/a.txt': 'alpha\n', 'src/b.txt': 'one\n', 'run.sh': '#!/bin/sh\necho run\n' },
    script: (ws) => ({
      [P1]: [{ tool: 'edit', args: { path: `${ws}/src/a.txt`, old_str: 'alpha', new_str: 'ALPHA' } }, { text: 'Done.' }],
      // The shell writes, then the agent dies under it (Copilot refuses a `kill` command of its own:
      // a script outside the project kills the shell's nearest ancestor that is the Copilot binary).
      [P2]: [
        { tool: 'bash', args: { command: `mkdir -p gen && echo fixture > gen/f1.txt && echo changed >> src/b.txt && rm run.sh && sh ${join(dirname(ws), 'home', 'stop-agent.sh')}`, description: 'regenerate' } },
        { text: 'Done.' },
      ],
    }),
  });
}, 600_000);
afterAll(() => w?.close());

it('a Copilot CLI killed mid-bash: diff 2 lists what restore 2 refuses and puts back', async () => {
  await w.prompt(P1);
  await writeFile(
    join(w.home, 'stop-agent.sh'),
    'p=$$\nwhile [ "$p" -gt 1 ]; do\n  p=$(ps -o ppid= -p "$p" | tr -d " ")\n  case "$(readlink /proc/$p/exe)" in *copilot*) kill -9 "$p"; exit 0;; esac\ndone\n',
  );
  const atP2 = await snapshotTree(w.ws, ['.git']);
  await expect(w.prompt(P2)).rejects.toThrow(/exited/);
  expect(await readFile(join(w.ws, 'gen/f1.txt'), 'utf8')).toBe('fixture\n');
  const diff = await w.json(['diff', '2']);
  const shown = (diff.changes as { path: string; status: string; unrecorded?: boolean }[]).map((c) => `${c.path}:${c.status}${c.unrecorded ? ' unrecorded' : ''}`);
  expect(shown).toEqual(['gen:A unrecorded', 'gen/f1.txt:A unrecorded', 'run.sh:D unrecorded', 'src/b.txt:M unrecorded']);
  const dry = await w.json(['restore', '2', '--dry-run']);
  expect([...dry.restored, ...dry.deleted].sort()).toEqual(['gen', 'gen/f1.txt', 'run.sh', 'src/b.txt']);
  expect(dry.wouldRefuse.code).toBe('DRIFT');
  const r = await w.ckpt(['restore', '2', '--yes', '--force', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(diffTrees(atP2, await snapshotTree(w.ws, ['.git']))).toEqual([]);
}, 1_200_000);

// `ckpt demo`: a scripted agent session in a scratch folder, narrated step by step. It uses only the
// public API, exactly as an agent integration would: turns, captures before writes, settles after,
// a scan after a shell command, a diff, a restore, and the undo of that restore. It checks each
// outcome and fails loudly if ckpt did not do what it promised.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptError, restore, scan, type Session, type Store } from '../index.js';

export interface DemoReport {
  workspace: string;
  store: string;
  session: string;
  steps: { step: string; detail: Record<string, unknown> }[];
}

/** `command` is how the reader runs ckpt (printed in the closing hint). */
export async function runDemo(store: Store, say: (line: string) => void, command = 'ckpt'): Promise<DemoReport> {
  const root = await mkdtemp(join(tmpdir(), 'ckpt-demo-'));
  const report: DemoReport = { workspace: root, store: store.dir, session: '', steps: [] };
  const step = (name: string, text: string, detail: Record<string, unknown> = {}) => {
    report.steps.push({ step: name, detail });
    say(text);
  };
  const file = (rel: string) => join(root, rel);
  const read = (rel: string) => readFile(file(rel), 'utf8').catch(() => null);
  await mkdir(file('src'));
  await writeFile(file('src/app.ts'), 'export function main() {\n  console.log("hello");\n}\n');
  await writeFile(file('README.md'), '# demo app\n');
  const ws = await store.openWorkspace(root);
  const session = await ws.create({ title: 'ckpt demo' });
  report.session = session.id;
  step('setup', `workspace ${root}\nstore     ${store.dir}\nsession   ${session.id}`);
  await scan(session, { tool: 'baseline' });

  await session.turn({ messageCount: 1, text: 'add a greeting' });
  step('turn', '\nturn 1 — user: "add a greeting"');
  await agentWrite(session, 'src/app.ts', 'import { greet } from "./greet";\nexport function main() {\n  console.log(greet("world"));\n}\n', 'Edit', step);
  await agentWrite(session, 'src/greet.ts', 'export const greet = (name: string) => `hello, ${name}`;\n', 'Write', step);

  await session.turn({ messageCount: 3, text: 'clean up the repo' });
  step('turn', '\nturn 2 — user: "clean up the repo"');
  await rm(file('README.md'));
  await mkdir(file('build'));
  await writeFile(file('build/out.js'), 'console.log("hello, world")\n');
  const scanned = await scan(session, { tool: 'Bash' });
  step('scan', `  Bash  rm README.md; mkdir build; echo … > build/out.js  → scan ${scanned.tag}: ${scanned.files.map((f) => f.path).join(', ')}`, { tag: scanned.tag, files: scanned.files.map((f) => f.path) });

  const diff = await session.diff('1');
  step('diff', `\nckpt diff 1  (everything since turn 1 began)\n${diff.changes.map((c) => `  ${c.status} ${c.path}  +${c.added} -${c.removed}`).join('\n')}`, { changes: diff.changes });

  await writeFile(file('notes.txt'), 'my own notes, never captured\n');
  const restored = await restore(session, '1');
  expect((await read('src/app.ts'))?.includes('console.log("hello")'), 'src/app.ts is back to its turn-1 content');
  expect((await read('README.md')) === '# demo app\n', 'README.md, deleted by the shell, is back');
  expect((await read('src/greet.ts')) === null && (await read('build/out.js')) === null, 'files created since turn 1 are gone');
  expect((await read('notes.txt')) !== null, 'a file ckpt never captured is untouched');
  step(
    'restore',
    `\nckpt restore 1\n  restored ${restored.restored.join(', ')}\n  deleted  ${restored.deleted.join(', ')}\n  notes.txt (never captured) left alone\n  undo tag ${restored.undo}`,
    { restored: restored.restored, deleted: restored.deleted, undo: restored.undo },
  );

  const undone = await restore(session, restored.undo!);
  expect((await read('src/greet.ts')) !== null && (await read('README.md')) === null, 'the undo brings back the state before the restore');
  step('undo', `\nckpt restore ${restored.undo}  (undo the restore)\n  restored ${undone.restored.join(', ')}\n  deleted  ${undone.deleted.join(', ')}`, {
    restored: undone.restored,
    deleted: undone.deleted,
  });

  const log = await session.checkpoints();
  step('log', `\nckpt log\n${log.map((c) => `  ${c.tag.padEnd(5)} ${c.tool.padEnd(8)} ${c.files.map((f) => `${f.path}(${f.state})`).join(' ')}`).join('\n')}`, { checkpoints: log.length });
  say(`\nAll steps checked. Explore it yourself: cd ${root} && ${command} --store ${store.dir} log`);
  return report;
}

async function agentWrite(session: Session, rel: string, content: string, tool: string, step: (n: string, t: string, d?: Record<string, unknown>) => void) {
  const captured = await session.capture([rel], { tool });
  await writeFile(join(session.workspaceRoot, rel), content);
  await session.settle([rel]);
  step('capture', `  ${tool.padEnd(5)} ${rel}  → captured ${captured.tag} (${captured.files[0]?.state} before)`, { tag: captured.tag, path: rel });
}

function expect(ok: boolean | undefined, what: string): void {
  if (!ok) throw new CkptError('INTERNAL', `demo check failed: ${what}`);
}

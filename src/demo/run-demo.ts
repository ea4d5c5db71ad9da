// `ckpt demo`: a scripted agent session in a scratch folder, narrated step by step. It uses only the
// public API, exactly as an agent integration would: turns, captures before writes, settles after,
// a scan after a shell command, a diff, a restore, and the undo of that restore. It checks each
// outcome and fails loudly if ckpt did not do what it promised. The scratch folder and the demo's
// session are removed at the end (also on failure) unless `keep` is set.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptError, formatLog, listCheckpoints, listRewinds, listTurns, restore, scan, type LogStyle, type Session, type Store } from '../index.js';

export interface DemoReport {
  workspace: string;
  store: string;
  session: string;
  steps: { step: string; detail: Record<string, unknown> }[];
  /** The scratch folder and the session were kept (`keep`); otherwise both are gone. */
  kept: boolean;
}

export interface DemoOptions {
  /** The closing hint with `keep`: how to look at the kept folder (the CLI quotes it for the shell). */
  exploreHint?: (workspace: string) => string;
  /** Keep the scratch folder and the session to explore afterwards. */
  keep?: boolean;
  /** Colours for the log (the CLI passes its own on a terminal). */
  style?: LogStyle;
}

export async function runDemo(store: Store, say: (line: string) => void, options: DemoOptions = {}): Promise<DemoReport> {
  const root = await mkdtemp(join(tmpdir(), 'ckpt-demo-'));
  const report: DemoReport = { workspace: root, store: store.dir, session: '', steps: [], kept: Boolean(options.keep) };
  try {
    await script(store, root, report, say, options);
  } finally {
    if (!options.keep) {
      // The whole workspace goes (sessions, scan and owner indexes): `workspace list`, `stats` and the
      // web page show no trace of it; its few blobs are unreferenced then, freed by the next `ckpt gc`.
      await store.removeWorkspace(root).catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    }
  }
  if (options.keep) say(`\nAll steps checked. Explore it yourself: ${options.exploreHint?.(root) ?? `cd ${root} && ckpt --store ${store.dir} log`}`);
  else say(`\nAll steps checked; the scratch folder and its workspace in the store (the demo session with it) were removed (run with --keep to explore them).`);
  return report;
}

async function script(store: Store, root: string, report: DemoReport, say: (line: string) => void, options: DemoOptions): Promise<void> {
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
  // A restore looks first: notes.txt, written by hand since turn 1, is the user's own work (drift).
  const refused = await restore(session, '1').then(
    () => undefined,
    (err: unknown) => (err instanceof CkptError && err.code === 'DRIFT' ? err : Promise.reject(err)),
  );
  expect(refused !== undefined && (refused.data as { drift?: string[] }).drift?.includes('notes.txt') === true, 'the restore refuses to overwrite notes.txt, written by hand since');
  expect((await read('notes.txt')) !== null && (await read('src/greet.ts')) !== null, 'a refused restore changes nothing');
  step('refused', `\nckpt restore 1\n  refused (${refused!.code}): notes.txt was written by hand since turn 1 — nothing was changed`, { refused: refused!.code });
  const restored = await restore(session, '1', { force: true });
  expect((await read('src/app.ts'))?.includes('console.log("hello")'), 'src/app.ts is back to its turn-1 content');
  expect((await read('README.md')) === '# demo app\n', 'README.md, deleted by the shell, is back');
  expect((await read('src/greet.ts')) === null && (await read('build/out.js')) === null, 'files created since turn 1 are gone');
  expect((await read('notes.txt')) === null, 'notes.txt, written since turn 1, is gone too: the workspace is exactly turn 1\'s');
  step(
    'restore',
    `\nckpt restore 1 --force\n  restored ${restored.restored.join(', ')}\n  deleted  ${restored.deleted.join(', ')}\n  undo tag ${restored.undo} (it keeps notes.txt)`,
    { restored: restored.restored, deleted: restored.deleted, undo: restored.undo },
  );

  const undone = await restore(session, restored.undo!);
  expect((await read('src/greet.ts')) !== null && (await read('README.md')) === null, 'the undo brings back the state before the restore');
  expect((await read('notes.txt')) === 'my own notes, never captured\n', 'the undo brings back notes.txt');
  step('undo', `\nckpt restore ${restored.undo}  (undo the restore)\n  restored ${undone.restored.join(', ')}\n  deleted  ${undone.deleted.join(', ')}`, {
    restored: undone.restored,
    deleted: undone.deleted,
  });

  const events = await session.events();
  const log = { checkpoints: listCheckpoints(events), turns: listTurns(events), rewinds: listRewinds(events) };
  const text = formatLog(log, { style: options.style })
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  step('log', `\nckpt log\n${text}`, { checkpoints: log.checkpoints.length });
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

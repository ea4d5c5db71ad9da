// Fuzz targets for store files read in place: a real store (sessions, a baseline pack, loose blobs, a
// restore whose plan is a blob, a fork, a hot snapshot, the owner and scan indexes, daemon files) has
// one file of a kind mutated — bytes, or a JSON value turned into a wrong type, a huge number or a
// hostile path — then a fresh process state opens it and runs what reads that file. Every outcome is
// a success or a CkptError other than INTERNAL; read-only operations leave the workspace alone;
// nothing is written outside the workspace; nothing hangs.
import { cp, lstat, mkdir, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { it } from 'vitest';
import { daemonToken, openStore, runningDaemon, storeStats, verify } from '../../src/index.js';
import { applyByteMutation, applyJsonMutation, byteMutation, jsonMutation, type ByteMutation, type JsonMutation } from './mutations.js';
import { checkAsync, expectCodeAsync, withTimeout, type FuzzTally } from './fuzz-run.js';
import { runCli } from '../helpers/cli.js';

/** Every file under `root` (store keys), sorted. */
export async function listTree(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listTree(root, r)));
    else out.push(r);
  }
  return out.sort();
}

/** Path, kind, mode and content of everything under `root`: equal snapshots mean nothing changed. */
export async function treeSnapshot(root: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const entry of (await readdir(join(root, rel), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${entry.name}` : entry.name;
      const st = await lstat(join(root, r));
      if (entry.isDirectory()) {
        lines.push(`d ${r} ${st.mode}`);
        await walk(r);
      } else if (entry.isSymbolicLink()) lines.push(`l ${r} ${await readlink(join(root, r))}`);
      else lines.push(`f ${r} ${st.mode} ${(await readFile(join(root, r))).toString('base64')}`);
    }
  };
  await walk('');
  return lines.join('\n');
}

/** The kinds of store file, each with how to find its files in the template. */
const KINDS: Record<string, (f: string) => boolean> = {
  'store.json': (f) => f === 'store.json',
  'workspace.json': (f) => f.endsWith('/workspace.json'),
  'metadata.json': (f) => f.endsWith('/metadata.json'),
  'events.jsonl': (f) => f.endsWith('/events.jsonl'),
  'snapshot.json': (f) => f.endsWith('/snapshot.json'),
  'owners.json': (f) => f.endsWith('/owners.json'),
  'scan-index': (f) => /\/scan-index[^/]*$/.test(f),
  'pack-index': (f) => f.endsWith('.idx'),
  pack: (f) => f.endsWith('.pack'),
  'loose-blob': (f) => f.startsWith('blobs/'),
  'daemon-token': (f) => f === 'daemon/token',
  'daemon-claim': (f) => f === 'daemon/daemon.json',
};

const JSON_KINDS = new Set(['store.json', 'workspace.json', 'metadata.json', 'events.jsonl', 'snapshot.json', 'owners.json', 'daemon-claim']);

interface Template {
  base: string;
  store: string;
  workspace: string;
  outside: string;
  files: Record<string, string[]>;
}

/** Builds the store at `base`/store for the workspace `base`/ws (the root it records), then keeps a copy aside. */
async function buildTemplate(base: string): Promise<Template> {
  const store = join(base, 'store');
  const ws0 = join(base, 'ws');
  await mkdir(join(ws0, 'src'), { recursive: true });
  for (let i = 0; i < 70; i++) await writeFile(join(ws0, 'src', `f${i}.txt`), `file ${i}\n`.repeat(i + 1));
  const st = await openStore({ dir: store, retention: false });
  const ws = await st.openWorkspace(ws0);
  const s = await ws.create({ id: 'main', title: 'fuzz', info: { agent: 'test' } });
  await s.scan({ tool: 'Bash' }); // the baseline: a pack and the scan index
  await s.turn({ text: 'first' });
  await s.capture(['src/f1.txt'], { tool: 'Edit' });
  await writeFile(join(ws0, 'src', 'f1.txt'), 'changed\n');
  await s.settle(['src/f1.txt']);
  await s.turn({ text: 'second' });
  for (let i = 0; i < 70; i++) await writeFile(join(ws0, 'src', `f${i}.txt`), `edited ${i}\n`);
  await writeFile(join(ws0, 'src', 'new.txt'), 'new\n');
  await s.scan({ tool: 'Bash' });
  // Over 64 entries: the plan is kept in a blob.
  const r = await s.restore('2');
  await s.restore(r.undo!);
  // Enough events for a hot snapshot.
  await s.record(Array.from({ length: 210 }, (_, i) => ({ type: 'message', id: `m${i}`, text: `message ${i}` })));
  // A fresh handle decodes the whole log on its first capture and keeps a snapshot of it.
  await (await (await (await openStore({ dir: store, retention: false })).openWorkspace(ws0)).get('main')).capture(['src/f2.txt'], { tool: 'Edit' });
  await ws.fork('main', { atSeq: 4 });
  await daemonToken(st.ctx);
  await writeFile(join(store, 'daemon', 'daemon.json'), JSON.stringify({ pid: 2 ** 22 + 17, url: 'http://127.0.0.1:9', startedAt: new Date().toISOString() }));
  const template = { store: join(base, 'store-template'), workspace: join(base, 'ws-template') };
  await cp(store, template.store, { recursive: true });
  await cp(ws0, template.workspace, { recursive: true, verbatimSymlinks: true });
  const all = (await listTree(store)).filter((f) => !f.endsWith('.lock') && !f.includes('.lock/'));
  const files: Record<string, string[]> = {};
  for (const [kind, match] of Object.entries(KINDS)) files[kind] = all.filter(match);
  const outside = join(base, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'keep.txt'), 'outside the workspace');
  return { base, ...template, outside, files };
}

type StoreMutation = { json: true; m: JsonMutation; line: number } | { json: false; m: ByteMutation };

/** Runs every operation that reads store files; returns the outcome (ok or code) of each. */
async function battery(dirs: { store: string; workspace: string }, what: string): Promise<{ readOnlyChanged: boolean; outcomes: string[] }> {
  const outcomes: string[] = [];
  const run = async (name: string, fn: () => Promise<unknown>): Promise<void> => {
    const r = await expectCodeAsync(`${what}: ${name}`, 'any-but-internal', fn);
    outcomes.push(`${name}:${typeof r === 'string' ? r : 'ok'}`);
  };
  let readOnlyChanged = false;
  await run('open', async () => {
    const store = await openStore({ dir: dirs.store, retention: false });
    await run('token', () => daemonToken(store.ctx));
    await run('daemon', () => runningDaemon(store.ctx));
    await run('stats', () => storeStats(store.ctx));
    await run('verify', () => verify(store.ctx));
    await run('workspaces', () => store.listWorkspaces());
    const ws = await store.openWorkspace(dirs.workspace);
    await run('list', () => ws.list());
    await run('fork-session', async () => {
      const f = (await ws.list()).find((m) => m.id !== 'main');
      if (f) await (await ws.get(f.id)).checkpoints();
    });
    await run('session', async () => {
      const s = await ws.get('main'); // may finish an interrupted restore: inside the workspace only
      const settled = await treeSnapshot(dirs.workspace);
      await run('metadata', () => s.metadata());
      await run('status', () => s.status());
      await run('log', () => s.checkpoints());
      await run('events', () => s.events());
      await run('diff', () => s.diff('1', undefined, { patch: true }));
      await run('dry-run', () => s.restore('1', { dryRun: true }));
      readOnlyChanged = (await treeSnapshot(dirs.workspace)) !== settled;
      await run('capture', () => s.capture(['src/f3.txt'], { tool: 'Edit' }));
      await run('settle', () => s.settle(['src/f3.txt']));
      await run('scan', () => s.scan({ tool: 'Bash' }));
      await run('restore', () => s.restore('1', { force: true }));
    });
  });
  return { readOnlyChanged, outcomes };
}

/** The CLI's human output formats what the store holds: exit 1 (INTERNAL) or a signal is a defect. */
const CLI_COMMANDS = [['session', 'list'], ['session', 'tree'], ['session', 'show'], ['log', '--all'], ['status'], ['workspace', 'list'], ['verify'], ['conflicts']];

async function cliBattery(dirs: { store: string; workspace: string }, what: string): Promise<void> {
  for (const args of CLI_COMMANDS) {
    const r = await runCli(['--store', dirs.store, ...args], { cwd: dirs.workspace });
    if (r.code === 1 || r.code < 0 || r.code > 10) throw new Error(`${what}: ckpt ${args.join(' ')} exited ${r.code}: ${r.stderr.slice(0, 600)}`);
  }
}

async function copyTemplate(template: Template, dirs: { store: string; workspace: string }): Promise<void> {
  await rm(dirs.store, { recursive: true, force: true });
  await rm(dirs.workspace, { recursive: true, force: true });
  await cp(template.store, dirs.store, { recursive: true });
  await cp(template.workspace, dirs.workspace, { recursive: true, verbatimSymlinks: true });
}

function mutationFor(kind: string): fc.Arbitrary<StoreMutation> {
  return JSON_KINDS.has(kind)
    ? fc.oneof(fc.record({ json: fc.constant(true as const), m: jsonMutation, line: fc.nat() }), fc.record({ json: fc.constant(false as const), m: byteMutation }))
    : fc.record({ json: fc.constant(false as const), m: byteMutation });
}

async function mutateFile(template: Template, store: string, file: string, sm: StoreMutation): Promise<string> {
  const before = await readFile(join(template.store, file));
  const after = sm.json ? applyJsonMutation(before, sm.m, sm.line) : applyByteMutation(before, sm.m);
  await writeFile(join(store, file), after);
  return `${file} (${sm.json ? `json ${sm.m.kind}` : sm.m.kind})`;
}

export function registerStoreFuzz(tally: FuzzTally, runsPerKind: number, base: () => string, cliRunsPerKind = 0): void {
  let template: Template;
  let built: Promise<Template> | undefined;
  const ensureTemplate = async (): Promise<void> => {
    template = await (built ??= buildTemplate(base()));
  };

  it('store files of every kind, mutated in place', async () => {
    await ensureTemplate();
    const outsideBefore = await treeSnapshot(template.outside);
    const store = join(base(), 'store');
    const workspace = join(base(), 'ws');
    for (const [kind, files] of Object.entries(template.files)) {
      if (files.length === 0) {
        tally.defects.push(`store-file ${kind}: the template has no such file (the fuzz would test nothing)`);
        continue;
      }
      await checkAsync(
        tally,
        `store-file.${kind}`,
        fc.asyncProperty(fc.nat(), mutationFor(kind), async (pick, sm) => {
          await copyTemplate(template, { store, workspace });
          const what = await mutateFile(template, store, files[pick % files.length]!, sm);
          const { readOnlyChanged } = await withTimeout(battery({ store, workspace }, what), 30_000, what);
          if (readOnlyChanged) throw new Error(`${what}: a read-only operation changed the workspace`);
          if ((await treeSnapshot(template.outside)) !== outsideBefore) throw new Error(`${what}: wrote outside the workspace`);
        }),
        runsPerKind,
      );
    }
  }, 3_600_000);

  it('the CLI over store files of every kind, mutated in place', async () => {
    if (cliRunsPerKind === 0) return;
    await ensureTemplate();
    const store = join(base(), 'store');
    const workspace = join(base(), 'ws');
    for (const [kind, files] of Object.entries(template.files)) {
      if (files.length === 0) continue;
      await checkAsync(
        tally,
        `cli.${kind}`,
        fc.asyncProperty(fc.nat(), mutationFor(kind), async (pick, sm) => {
          await copyTemplate(template, { store, workspace });
          const what = await mutateFile(template, store, files[pick % files.length]!, sm);
          await withTimeout(cliBattery({ store, workspace }, what), 60_000, what);
        }),
        cliRunsPerKind,
      );
    }
  }, 3_600_000);

  it('hook processes fed mutated hook input', async () => {
    if (cliRunsPerKind === 0) return;
    await ensureTemplate();
    const store = join(base(), 'store');
    const workspace = join(base(), 'ws');
    const outsideBefore = await treeSnapshot(template.outside);
    await copyTemplate(template, { store, workspace });
    const inputs = hookInputs(workspace);
    await checkAsync(
      tally,
      'cli.hook',
      fc.asyncProperty(fc.nat(inputs.length - 1), fc.oneof(fc.record({ json: fc.constant(true as const), m: jsonMutation, line: fc.nat() }), fc.record({ json: fc.constant(false as const), m: byteMutation })), fc.constantFrom('claude', 'gemini'), async (i, sm, agent) => {
        const raw = Buffer.from(JSON.stringify(inputs[i]));
        const input = (sm.json ? applyJsonMutation(raw, sm.m, sm.line) : applyByteMutation(raw, sm.m)).toString('utf8');
        // Strict mode makes a failure visible as exit 2 with its code; exit 1 or INTERNAL is a defect.
        const r = await runCli(['--store', store, 'hook', agent, '--workspace', workspace], { cwd: workspace, input, env: { CKPT_HOOK_STRICT: '1' } });
        if (![0, 2].includes(r.code) || /INTERNAL/.test(r.stderr + r.stdout)) throw new Error(`hook ${agent} on ${input.slice(0, 300)}: exit ${r.code}: ${r.stderr.slice(0, 400)}`);
        if ((await treeSnapshot(template.outside)) !== outsideBefore) throw new Error(`hook ${agent} on ${input.slice(0, 300)}: wrote outside the workspace`);
      }),
      cliRunsPerKind * 10,
    );
  }, 3_600_000);
}

function hookInputs(cwd: string): Record<string, unknown>[] {
  const base = { session_id: 'fuzz-agent-1', cwd, transcript_path: join(cwd, '..', 'transcript.jsonl') };
  return [
    { ...base, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(cwd, 'src', 'f5.txt'), content: 'x' }, tool_use_id: 'tu1' },
    { ...base, hook_event_name: 'PostToolUse', tool_name: 'Edit', tool_input: { file_path: 'src/f5.txt' }, tool_use_id: 'tu1' },
    { ...base, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'tu2' },
    { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'do it' },
    { ...base, hook_event_name: 'SessionStart', source: 'startup' },
    { ...base, hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: 'short' },
    { ...base, hook_event_name: 'BeforeTool', tool_name: 'write_file', tool_input: { file_path: '../outside/keep.txt' } },
  ];
}

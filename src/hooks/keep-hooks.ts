// The agent's project hook settings, deleted by the tool call a scan just recorded, are put back when
// they held ckpt's hooks (DESIGN §10 "Probes and mends (2026-12-05, fourth session)"). An agent's
// ordinary git hygiene — `git clean -fdx`, `git stash -u` in a project where `.claude/` is not
// committed, as `ckpt init` leaves it — removed the file, and real Claude Code then ran every later
// prompt with no hook: nothing recorded, nothing said (a round-6 probe). The file goes back as a
// restore of it (and of the folders that went with it) to the scan's tag: recorded like any restore,
// so `restore N` stays exact and the put-back can be undone. Not a file `git stash -u` took: `git stash
// pop` brings it back, and would fail on a copy put back first (the agent is told instead).
import { execFile } from 'node:child_process';
import { join, relative, sep } from 'node:path';
import type { ScanResult, Session } from '../index.js';
import type { AgentSpec } from './agent-spec.js';
import { isCkptHookCommand, isCkptHookUrl } from './install/merge-hooks.js';
import { isCkptPlugin } from './install/opencode-plugin.js';

/** What `keepHooks` put back, for the hook's answer; undefined when nothing was. */
export async function keepHooks(spec: AgentSpec, session: Session, scan: Pick<ScanResult, 'tag' | 'files'>, projectDir: string): Promise<string | undefined> {
  if (!scan.tag || !scan.files?.length) return undefined;
  const root = session.workspaceRoot;
  const settings = new Set<string>();
  for (const file of [spec.settingsFiles.project, spec.settingsFiles.local]) {
    if (file === undefined) continue;
    const rel = relative(root, join(projectDir, file));
    if (rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep)) settings.add(rel.split(sep).join('/'));
  }
  // A scan's changes carry the after-state: what the path held before is read at the scan's tag.
  const gone = scan.files.filter((f) => f.change === 'deleted' && settings.has(f.path));
  const lost: string[] = [];
  for (const f of gone) {
    const before = await session.readFile(scan.tag, f.path).catch(() => undefined);
    if (before?.content && holdsCkptHooks(before.content.toString('utf8'), spec.name)) lost.push(f.path);
  }
  if (lost.length === 0) return undefined;
  const stashed: string[] = [];
  const back: string[] = [];
  for (const p of lost) ((await inNewestStash(root, p)) ? stashed : back).push(p);
  const said: string[] = [];
  if (stashed.length > 0) said.push(`${stashed.join(', ')} held ckpt's hooks and was stashed by ${scan.tag} (git stash -u): nothing is recorded until git stash pop brings it back`);
  if (back.length > 0) {
    // The folders that went with it (`.claude/` as a whole): made again by the same restore.
    const folders = scan.files.filter((f) => f.change === 'deleted' && back.some((p) => p.startsWith(`${f.path}/`))).map((f) => f.path);
    const r = await session.restore(scan.tag, { paths: [...folders, ...back] });
    said.push(`${back.join(', ')} held ckpt's hooks and was removed by ${scan.tag}; ckpt put it back (undo with: ckpt restore ${r.undo ?? scan.tag}). To remove ckpt's hooks, run ckpt init ${spec.name} --uninstall`);
  }
  return `${said.join('; ')}.`;
}

/** Whether git's newest stash holds `path` among its untracked files (what `git stash -u` took); false without git. */
function inNewestStash(root: string, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('git', ['-C', root, 'rev-parse', '--verify', '--quiet', `refs/stash^3:./${path}`], { timeout: 5_000 }, (err) => resolve(!err));
  });
}

/** True when a settings file's text holds one of ckpt's hooks for `agent` (any of its formats), or is ckpt's opencode plugin. */
export function holdsCkptHooks(text: string, agent: string): boolean {
  if (isCkptPlugin(text)) return true;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  const strings: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 8) return;
    if (typeof v === 'string') strings.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(value, 0);
  return strings.some((s) => isCkptHookCommand(s, agent) || isCkptHookUrl(s, agent));
}

// Runs the hook commands of a flat hooks file — Cursor's `.cursor/hooks.json`, GitHub Copilot's
// `.github/hooks/*.json` — as the agent would: for an event, every entry listed under it, its command
// (`bash` for the Copilot CLI, else `command`) through `sh -c` with the event JSON on stdin, the project
// as cwd and the agent's project-dir variable set, without CKPT_HOME.
import { readFile } from 'node:fs/promises';
import { runShell, type HookRun } from './agent-hooks.js';

export interface FlatHooks {
  file: { version?: number; hooks: Record<string, { command?: string; bash?: string }[]> };
  fire(event: string, payload: Record<string, unknown> | string, env?: NodeJS.ProcessEnv): Promise<HookRun[]>;
}

export async function loadFlatHooks(file: string, project: string, projectEnv: string, field: 'bash' | 'command' = 'command'): Promise<FlatHooks> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as FlatHooks['file'];
  const base = { ...process.env, [projectEnv]: project };
  delete base.CKPT_HOME;
  return {
    file: parsed,
    async fire(event, payload, env = {}) {
      const runs: HookRun[] = [];
      for (const entry of parsed.hooks[event] ?? []) {
        const command = entry[field] ?? entry.command!;
        runs.push({ command, ...(await runShell(command, { cwd: project, env: { ...base, ...env }, input: typeof payload === 'string' ? payload : JSON.stringify(payload) })) });
      }
      return runs;
    },
  };
}

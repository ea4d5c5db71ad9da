// Merging ckpt's hook entries into an agent's settings object, and taking exactly those out again
// (`ckpt init <agent>` / `--uninstall`). Claude Code and Gemini CLI share the shape
// `{"hooks": {"<Event>": [{"matcher"?: "...", "hooks": [{"type": "command", "command": "..."}]}]}}`.
// ckpt's entries are recognised by their command (`… ckpt… hook <agent>`); every other hook and
// setting is kept as it is, in its order. Pure: returns the new value and what changed.
import { CkptError } from '../../index.js';

export interface HookEntrySpec {
  event: string;
  /** Tool-name pattern (tool events); omitted for lifecycle events. */
  matcher?: string;
  /** Extra fields of the hook configuration (e.g. Gemini's `name`, a timeout). */
  extra?: Record<string, unknown>;
}

export interface MergeResult {
  value: Record<string, unknown>;
  changes: string[];
}

type Group = { matcher?: unknown; hooks?: unknown; [k: string]: unknown };
type Hook = { type?: unknown; command?: unknown; [k: string]: unknown };

/** True for a hook command that runs `ckpt hook <agent>` (any install location or flags). */
export function isCkptHookCommand(command: unknown, agent: string): boolean {
  return typeof command === 'string' && new RegExp(`ckpt(?:\\.js)?'?(?:\\s+--?[\\w-]+(?:[ =](?:'[^']*'|\\S+))?)*\\s+hook\\s+${agent}(?:\\s|$)`).test(command);
}

/** Adds ckpt's hooks (or updates an older ckpt command in place). Idempotent. */
export function installHooks(settings: Record<string, unknown>, entries: readonly HookEntrySpec[], command: string, agent: string, file: string): MergeResult {
  const value = structuredClone(settings);
  const changes: string[] = [];
  const hooks = hooksObject(value, file, true)!;
  for (const entry of entries) {
    const groups = eventGroups(hooks, entry.event, file, true)!;
    let found = false;
    for (const group of groups) {
      for (const hook of groupHooks(group, entry.event, file)) {
        if (!isCkptHookCommand(hook.command, agent)) continue;
        if (found) continue; // a duplicate stays untouched (uninstall removes it)
        found = true;
        if (hook.command !== command || (group.matcher ?? undefined) !== entry.matcher) {
          hook.command = command;
          if (entry.matcher === undefined) delete group.matcher;
          else group.matcher = entry.matcher;
          changes.push(`updated ${entry.event}${entry.matcher !== undefined ? ` (matcher ${entry.matcher})` : ''}`);
        }
      }
    }
    if (!found) {
      groups.push({ ...(entry.matcher !== undefined ? { matcher: entry.matcher } : {}), hooks: [{ type: 'command', command, ...entry.extra }] });
      changes.push(`added ${entry.event}${entry.matcher !== undefined ? ` (matcher ${entry.matcher})` : ''}`);
    }
  }
  return { value, changes };
}

/** Removes every hook that runs `ckpt hook <agent>`, and the groups and event lists left empty by that. */
export function uninstallHooks(settings: Record<string, unknown>, agent: string, file: string): MergeResult {
  const value = structuredClone(settings);
  const changes: string[] = [];
  const hooks = hooksObject(value, file, false);
  if (!hooks) return { value, changes };
  for (const event of Object.keys(hooks)) {
    const groups = eventGroups(hooks, event, file, false);
    if (!groups) continue;
    for (let g = groups.length - 1; g >= 0; g--) {
      const group = groups[g]!;
      const list = groupHooks(group, event, file);
      const kept = list.filter((h) => !isCkptHookCommand(h.command, agent));
      if (kept.length === list.length) continue;
      changes.push(`removed ${event}${typeof group.matcher === 'string' ? ` (matcher ${group.matcher})` : ''}`);
      if (kept.length === 0) groups.splice(g, 1);
      else group.hooks = kept;
    }
    if (groups.length === 0) delete hooks[event];
  }
  if (Object.keys(hooks).length === 0 && changes.length > 0) delete value.hooks;
  return { value, changes };
}

function hooksObject(value: Record<string, unknown>, file: string, create: boolean): Record<string, unknown> | undefined {
  if (value.hooks === undefined) {
    if (!create) return undefined;
    value.hooks = {};
  }
  if (typeof value.hooks !== 'object' || value.hooks === null || Array.isArray(value.hooks)) {
    throw new CkptError('INVALID_ARGUMENT', `"hooks" in ${file} is not an object; the file was left unchanged`, { file });
  }
  return value.hooks as Record<string, unknown>;
}

function eventGroups(hooks: Record<string, unknown>, event: string, file: string, create: boolean): Group[] | undefined {
  if (hooks[event] === undefined) {
    if (!create) return undefined;
    hooks[event] = [];
  }
  const groups = hooks[event];
  if (!Array.isArray(groups) || groups.some((g) => typeof g !== 'object' || g === null || Array.isArray(g))) {
    throw new CkptError('INVALID_ARGUMENT', `"hooks.${event}" in ${file} is not a list of hook groups; the file was left unchanged`, { file, event });
  }
  return groups as Group[];
}

function groupHooks(group: Group, event: string, file: string): Hook[] {
  if (group.hooks === undefined) return [];
  if (!Array.isArray(group.hooks) || group.hooks.some((h) => typeof h !== 'object' || h === null)) {
    throw new CkptError('INVALID_ARGUMENT', `a hook group of "hooks.${event}" in ${file} has no list of hooks; the file was left unchanged`, { file, event });
  }
  return group.hooks as Hook[];
}

// Merging ckpt's hook entries into an agent's settings object, and taking exactly those out again
// (`ckpt init <agent>` / `--uninstall`). Claude Code and Gemini CLI share the shape
// `{"hooks": {"<Event>": [{"matcher"?: "...", "hooks": [{"type": "command", "command": "..."}]}]}}`.
// ckpt's entries are recognised by their command (`… ckpt… hook <agent>`), or for an HTTP hook
// (`{"type": "http", "url": ...}`) by a loopback url whose path is `/hooks/<agent>` (ckpt serve);
// one kind replaces the other in place, so an event is never recorded twice. Every other hook and
// setting is kept as it is, in its order. Pure: returns the new value and what changed.
import { CkptError } from '../../index.js';

export interface HookEntrySpec {
  event: string;
  /** Tool-name pattern (tool events); omitted for lifecycle events. */
  matcher?: string;
  /** Extra fields of the hook configuration (e.g. Gemini's `name`, a timeout). */
  extra?: Record<string, unknown>;
  /** Installed as the command hook even when HTTP hooks are asked for (the agent cannot post it). */
  commandOnly?: boolean;
  /** Runs once per tool call: the default install (issue 28) posts only these to the daemon. */
  perToolCall?: boolean;
}

export interface MergeResult {
  value: Record<string, unknown>;
  changes: string[];
}

type Group = { matcher?: unknown; hooks?: unknown; [k: string]: unknown };
type Hook = { type?: unknown; command?: unknown; url?: unknown; [k: string]: unknown };

/** The fields of the hook ckpt installs: `{type: 'command', command}` or `{type: 'http', url, headers, …}`. */
export type HookFields = { type: 'command'; command: string } | { type: 'http'; url: string; [k: string]: unknown };

/** True for a hook command that runs `ckpt hook <agent>` (any install location or flags; node's or the shell client). */
export function isCkptHookCommand(command: unknown, agent: string): boolean {
  return typeof command === 'string' && new RegExp(`ckpt(?:\\.js|-hook\\.sh'?\\s+(?:'[^']*'|\\S+))?'?(?:\\s+--?[\\w-]+(?:[ =](?:'[^']*'|\\S+))?)*\\s+hook\\s+${agent}(?:\\s|$)`).test(command);
}

/** True for an HTTP hook that posts to a ckpt daemon's `/hooks/<agent>` on this machine. */
export function isCkptHookUrl(url: unknown, agent: string): boolean {
  return typeof url === 'string' && new RegExp(`^http://(?:127\\.0\\.0\\.1|localhost|\\[::1\\]):\\d+/hooks/${agent}(?:[?#]|$)`).test(url);
}

export function isCkptHook(hook: { type?: unknown; command?: unknown; url?: unknown }, agent: string): boolean {
  return hook.type === 'http' ? isCkptHookUrl(hook.url, agent) : isCkptHookCommand(hook.command, agent);
}

/**
 * Adds ckpt's hooks (or updates an older ckpt hook of either kind in place). Idempotent. `command` is
 * the command hook; with `http` every entry but the `commandOnly` ones (and those `httpFor` turns
 * down) gets the HTTP hook instead.
 */
export function installHooks(
  settings: Record<string, unknown>,
  entries: readonly HookEntrySpec[],
  command: HookFields & { type: 'command' },
  agent: string,
  file: string,
  http?: HookFields & { type: 'http' },
  httpFor: (entry: HookEntrySpec) => boolean = () => true,
): MergeResult {
  const value = structuredClone(settings);
  const changes: string[] = [];
  const hooks = hooksObject(value, file, true)!;
  for (const entry of entries) {
    const groups = eventList<Group>(hooks, entry.event, file, true, 'hook groups')!;
    let found = false;
    const fields: HookFields = http && !entry.commandOnly && httpFor(entry) ? http : command;
    const wanted: Hook = { ...fields, ...entry.extra };
    for (const group of groups) {
      const list = groupHooks(group, entry.event, file);
      for (let h = 0; h < list.length; h++) {
        const hook = list[h]!;
        if (!isCkptHook(hook, agent)) continue;
        if (found) continue; // a duplicate stays untouched (uninstall removes it)
        found = true;
        // Same kind: ckpt's fields are set, the user's own additions (a timeout) kept. Other kind: replaced.
        const next: Hook = hook.type === wanted.type || (hook.type === undefined && wanted.type === 'command') ? { ...hook, ...wanted } : wanted;
        if (JSON.stringify(next) !== JSON.stringify(hook) || (group.matcher ?? undefined) !== entry.matcher) {
          list[h] = next;
          if (entry.matcher === undefined) delete group.matcher;
          else group.matcher = entry.matcher;
          changes.push(`updated ${entry.event}${entry.matcher !== undefined ? ` (${matcherText(entry.matcher)})` : ''}`);
        }
      }
    }
    if (!found) {
      groups.push({ ...(entry.matcher !== undefined ? { matcher: entry.matcher } : {}), hooks: [wanted] });
      changes.push(`added ${entry.event}${entry.matcher !== undefined ? ` (${matcherText(entry.matcher)})` : ''}`);
    }
  }
  return { value, changes };
}

/** Removes every ckpt hook of the agent (commands and HTTP hooks), and the groups and event lists left empty by that. */
export function uninstallHooks(settings: Record<string, unknown>, agent: string, file: string): MergeResult {
  return removeCkptHooks<Group>(settings, file, 'hook groups', (groups, event) => {
    const removed: string[] = [];
    // From the end: a group left empty is spliced out without moving the ones still to be looked at.
    for (let g = groups.length - 1; g >= 0; g--) {
      const group = groups[g]!;
      const list = groupHooks(group, event, file);
      const kept = list.filter((h) => !isCkptHook(h, agent));
      if (kept.length === list.length) continue;
      removed.push(`removed ${event}${typeof group.matcher === 'string' ? ` (${matcherText(group.matcher)})` : ''}`);
      if (kept.length === 0) groups.splice(g, 1);
      else group.hooks = kept;
    }
    return { kept: groups, removed };
  });
}

/**
 * The uninstall walk of both settings shapes (this file's and merge-flat-hooks.ts'): `prune` returns
 * an event's list without ckpt's hooks and what it removed; an event list, and `hooks`, left empty by
 * a removal go too. Everything else is kept as it is, an empty list the user wrote included.
 */
export function removeCkptHooks<T>(settings: Record<string, unknown>, file: string, noun: string, prune: (list: T[], event: string) => { kept: T[]; removed: string[] }): MergeResult {
  const value = structuredClone(settings);
  const changes: string[] = [];
  const hooks = hooksObject(value, file, false);
  if (!hooks) return { value, changes };
  for (const event of Object.keys(hooks)) {
    const list = eventList<T>(hooks, event, file, false, noun);
    if (!list) continue;
    const { kept, removed } = prune(list, event);
    if (removed.length === 0) continue;
    changes.push(...removed);
    if (kept.length === 0) delete hooks[event];
    else hooks[event] = kept;
  }
  if (Object.keys(hooks).length === 0 && changes.length > 0) delete value.hooks;
  return { value, changes };
}

/** The settings' `hooks` object (made when `create`); INVALID_ARGUMENT when it is something else. */
export function hooksObject(value: Record<string, unknown>, file: string, create: boolean): Record<string, unknown> | undefined {
  if (value.hooks === undefined) {
    if (!create) return undefined;
    value.hooks = {};
  }
  if (typeof value.hooks !== 'object' || value.hooks === null || Array.isArray(value.hooks)) {
    throw new CkptError('INVALID_ARGUMENT', `"hooks" in ${file} is not an object; the file was left unchanged`, { file });
  }
  return value.hooks as Record<string, unknown>;
}

/** The list under `hooks[event]` (made when `create`): hook groups, or flat hooks (`noun`); INVALID_ARGUMENT when it is not a list of objects. */
export function eventList<T>(hooks: Record<string, unknown>, event: string, file: string, create: boolean, noun: string): T[] | undefined {
  if (hooks[event] === undefined) {
    if (!create) return undefined;
    hooks[event] = [];
  }
  const list = hooks[event];
  if (!Array.isArray(list) || list.some((g) => typeof g !== 'object' || g === null || Array.isArray(g))) {
    throw new CkptError('INVALID_ARGUMENT', `"hooks.${event}" in ${file} is not a list of ${noun}; the file was left unchanged`, { file, event });
  }
  return list as T[];
}

function groupHooks(group: Group, event: string, file: string): Hook[] {
  if (group.hooks === undefined) return [];
  if (!Array.isArray(group.hooks) || group.hooks.some((h) => typeof h !== 'object' || h === null)) {
    throw new CkptError('INVALID_ARGUMENT', `a hook group of "hooks.${event}" in ${file} has no list of hooks; the file was left unchanged`, { file, event });
  }
  return group.hooks as Hook[];
}

/**
 * A matcher as a person reads it: the read-only tools' negative lookahead (`^(?!(?:Read|Glob|…)$)`,
 * ~700 characters, printed three times by a newcomer's first `init`) is said in words.
 */
export function matcherText(matcher: string): string {
  const m = /^\^\(\?!\(\?:([^()]*)\)\$\)$/.exec(matcher);
  if (!m) return `matcher ${matcher}`;
  const names = m[1]!.split('|');
  return `every tool but ${names.length} read-only ones: ${names.slice(0, 4).join(', ')}, …`;
}

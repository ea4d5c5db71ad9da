// Merging ckpt's hook entries into a hooks file whose events list hook entries directly, with no
// matcher groups — Cursor's `.cursor/hooks.json` and GitHub Copilot's `.github/hooks/*.json` /
// `~/.copilot/settings.json`: `{"version": 1, "hooks": {"<event>": [{"command": "…"}, …]}}`. ckpt's
// entries are recognised by their command, as in merge-hooks.ts; every other entry and setting is kept
// as it is, in its order. Pure: returns the new value and what changed.
import { eventList, hooksObject, isCkptHook, removeCkptHooks, type MergeResult } from './merge-hooks.js';

type Entry = Record<string, unknown>;

/**
 * Adds ckpt's entry to each event (or updates an older ckpt entry in place, keeping the user's own
 * additions to it, e.g. a longer timeout). `version` is set on a file that has none, when given. Idempotent.
 */
export function installFlatHooks(settings: Record<string, unknown>, events: readonly { event: string; matcher?: string }[], entry: Entry, agent: string, file: string, version?: number): MergeResult {
  const value = structuredClone(settings);
  const changes: string[] = [];
  if (version !== undefined && value.version === undefined) {
    // A file Cursor/Copilot reads only with its format version: first key, as their examples write it.
    const rest = { ...value };
    for (const k of Object.keys(value)) delete value[k];
    Object.assign(value, { version }, rest);
    changes.push(`set version ${version}`);
  }
  const hooks = hooksObject(value, file, true)!;
  for (const { event, matcher } of events) {
    const list = eventList<Entry>(hooks, event, file, true, 'hooks')!;
    const at = list.findIndex((h) => isCkptHook(h, agent));
    const wanted = { ...entry, ...(matcher !== undefined ? { matcher } : {}) };
    if (at < 0) {
      list.push(wanted);
      changes.push(`added ${event}`);
      continue;
    }
    const next: Entry = { ...list[at], ...wanted };
    if (matcher === undefined) delete next.matcher;
    if (JSON.stringify(next) !== JSON.stringify(list[at])) {
      list[at] = next;
      changes.push(`updated ${event}`);
    }
  }
  return { value, changes: changes.length === 1 && changes[0]!.startsWith('set version') ? [] : changes };
}

/** Removes every ckpt entry of the agent, and the event lists (and `hooks`) left empty by that. */
export function uninstallFlatHooks(settings: Record<string, unknown>, agent: string, file: string): MergeResult {
  return removeCkptHooks<Entry>(settings, file, 'hooks', (list, event) => {
    const kept = list.filter((h) => !isCkptHook(h, agent));
    return { kept, removed: kept.length === list.length ? [] : [`removed ${event}`] };
  });
}

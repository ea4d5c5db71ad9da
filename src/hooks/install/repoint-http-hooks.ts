// Keeping installed HTTP hooks pointed at the daemon (DESIGN §10 "Hooks at no cost"): a daemon that
// comes back on another port (its last one taken by another process) is not where the HTTP hooks in
// the project's local settings post, and Claude Code's HTTP hooks fail silently. The daemon, when a
// once-per-prompt command hook reaches it, rewrites the port of ckpt's own HTTP hooks in that file
// (nothing else: other hooks, the url's path, query and credential stay as they are), atomically and
// in the file's own style.
import { readSmallText } from '../../small-text.js';
import { isCkptHookUrl } from './merge-hooks.js';
import { writeSettings } from './settings-mode.js';
import { formatSettings, parseSettings } from './settings-text.js';

export interface RepointResult {
  file: string;
  /** The ports the re-pointed hooks had (sorted, once each). */
  from: number[];
  /** How many hooks now post to the new port. */
  hooks: number;
}

const PORT_IN_URL = /^(http:\/\/(?:127\.0\.0\.1|localhost|\[::1\])):(\d+)(\/)/;

/**
 * Re-points ckpt's HTTP hooks of `agent` in `file` at `port`; undefined when the file is missing,
 * is not a JSON object, or has no such hook on another port (nothing written then).
 */
export async function repointHttpHooks(file: string, agent: string, port: number): Promise<RepointResult | undefined> {
  // Only a regular file (small-text.ts): a FIFO or device there must not block or never end.
  const text = readSmallText(file, { follow: true });
  if (text === undefined) return undefined;
  let parsed;
  try {
    parsed = parseSettings(text, file);
  } catch {
    return undefined; // a file ckpt cannot read as settings is never rewritten
  }
  const from = new Set<number>();
  let hooks = 0;
  const events = parsed.value.hooks;
  if (typeof events !== 'object' || events === null || Array.isArray(events)) return undefined;
  for (const groups of Object.values(events as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups as { hooks?: unknown }[]) {
      if (typeof group !== 'object' || group === null || !Array.isArray(group.hooks)) continue;
      for (const hook of group.hooks as { type?: unknown; url?: unknown }[]) {
        if (typeof hook !== 'object' || hook === null || hook.type !== 'http' || !isCkptHookUrl(hook.url, agent)) continue;
        const m = PORT_IN_URL.exec(hook.url as string);
        if (!m || Number(m[2]) === port) continue;
        from.add(Number(m[2]));
        hook.url = `${m[1]}:${port}${(hook.url as string).slice(m[0].length - 1)}`;
        hooks++;
      }
    }
  }
  if (hooks === 0) return undefined;
  await writeSettings(file, formatSettings(parsed), true);
  return { file, from: [...from].sort((a, b) => a - b), hooks };
}

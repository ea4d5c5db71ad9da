// `ckpt init <agent>`: installs ckpt's hooks into one of the agent's settings files (project, local or
// user scope), or takes them out again. Reads the file (a missing file is an empty one; a file that is
// not a JSON object is refused and left unchanged), merges (install/merge-hooks.ts), and writes
// atomically in the file's own style — only when something changed, never with --dry-run.
import { readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CkptError, isCkptError } from '../../index.js';
import { installEntries, type AgentSpec, type InstallEntry } from '../agent-spec.js';
import { installFlatHooks, uninstallFlatHooks } from './merge-flat-hooks.js';
import { installHooks, uninstallHooks, type MergeResult } from './merge-hooks.js';
import { isCkptPlugin, opencodePluginSource } from './opencode-plugin.js';
import { removeEmptyFolders } from './empty-folders.js';
import { writeSettings } from './settings-mode.js';
import { formatSettings, parseSettings } from './settings-text.js';

export type InstallScope = 'project' | 'local' | 'user';

export interface InstallOptions {
  spec: AgentSpec;
  scope: InstallScope;
  projectDir: string;
  homeDir: string;
  /** The shell command the agent runs for every hook (without the trailing `hook <agent>`). */
  ckptCommand: string;
  /** Install HTTP hooks posting to this running daemon instead of command hooks (for the events `httpFor` picks; all by default). */
  http?: { url: string; headers: Record<string, string>; allowedEnvVars?: string[] };
  /** Which events get the HTTP hook (default: every one but the command-only ones); the others get the command hook. */
  httpFor?: (entry: InstallEntry) => boolean;
  dryRun?: boolean;
  uninstall?: boolean;
}

export interface InstallResult {
  file: string;
  scope: InstallScope;
  command: string;
  /** HTTP hooks: the url they post to, and the headers (with environment references, never the token). */
  url?: string;
  headers?: Record<string, string>;
  changed: boolean;
  changes: string[];
  /** An uninstall that removed ckpt's file: the folders of its path it left empty, removed (or, dry run, that would be), deepest first. */
  removedFolders?: string[];
  dryRun: boolean;
  uninstall: boolean;
}

export function settingsFile(spec: AgentSpec, scope: InstallScope, projectDir: string, homeDir: string): string {
  const { base, rel } = settingsPath(spec, scope, projectDir, homeDir);
  return join(base, rel);
}

/** The folder a scope's settings live under (the project, the home folder) and the file's path below it. */
function settingsPath(spec: AgentSpec, scope: InstallScope, projectDir: string, homeDir: string): { base: string; rel: string } {
  if (scope === 'user') return { base: homeDir, rel: spec.settingsFiles.user };
  const rel = scope === 'local' ? spec.settingsFiles.local : spec.settingsFiles.project;
  if (!rel) {
    const has = (['project', 'user'] as const).filter((s) => s !== scope).map((s) => `--${s} (${s === 'user' ? `~/${spec.settingsFiles.user}` : spec.settingsFiles.project})`);
    throw new CkptError('INVALID_ARGUMENT', `${spec.displayName} has no ${scope} settings file: install with ${has.join(' or ')}`, { scope });
  }
  return { base: resolve(projectDir), rel };
}

/** ckpt's file is gone (or would be): the folders of its path left empty go too (install/empty-folders.ts). */
async function emptyFoldersAfter(options: InstallOptions): Promise<{ removedFolders?: string[] }> {
  const { base, rel } = settingsPath(options.spec, options.scope, options.projectDir, options.homeDir);
  const removed = await removeEmptyFolders(base, rel, Boolean(options.dryRun));
  return removed.length ? { removedFolders: removed } : {};
}

export async function installAgent(options: InstallOptions): Promise<InstallResult> {
  const { spec, scope } = options;
  const file = settingsFile(spec, scope, options.projectDir, options.homeDir);
  // `--daemon`: the thin client starts the store's daemon on demand (client/hook-client.ts).
  const command = `${options.ckptCommand} hook ${spec.name} --daemon`;
  let text: string | undefined;
  try {
    // A FIFO or device in the settings file's place (a cloned project's `.claude/settings.json` linked
    // to /dev/zero) is refused, never read: it would block or never end.
    if (!(await stat(file)).isFile()) throw new CkptError('IO', `cannot read ${file}: not a regular file`, { file });
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (isCkptError(err)) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw new CkptError('IO', `cannot read ${file}: ${code ?? String(err)}`, { file, errno: code });
  }
  if (spec.install === 'opencode-plugin') return installPluginFile(options, file, command, text);
  const parsed = parseSettings(text, file);
  // The format `version` a flat hook file of this scope carries (Cursor, Copilot).
  const version = scope === 'local' ? undefined : spec.flatHook?.version?.[scope];
  const merged: MergeResult = options.uninstall
    ? spec.install === 'flat-hooks-json'
      ? uninstallFlatHooks(parsed.value, spec.name, file)
      : uninstallHooks(parsed.value, spec.name, file)
    : spec.install === 'flat-hooks-json'
      ? installFlatHooks(
          parsed.value,
          installEntries(spec).map((e) => ({ event: e.event, ...(e.matcher !== undefined && e.matcher !== '*' ? { matcher: e.matcher } : {}) })),
          spec.flatHook?.fields(command) ?? { type: 'command', command },
          spec.name,
          file,
          version,
        )
      : installHooks(parsed.value, installEntries(spec), { type: 'command', command: spec.commandLine?.(command) ?? command }, spec.name, file, options.http ? { type: 'http', ...options.http } : undefined, options.httpFor);
  // An uninstall that leaves nothing but an empty object removes the file (ckpt's install made it,
  // or it held nothing): `{}` left behind would be clutter in the project. So does one left with only
  // the format `version` an install of this scope sets: a hook file without hooks.
  const keys = Object.keys(merged.value);
  const empty =
    options.uninstall && (keys.length === 0 || (spec.install === 'flat-hooks-json' && version !== undefined && keys.length === 1 && merged.value.version === version));
  const next = empty ? undefined : formatSettings({ value: merged.value, style: parsed.style });
  const changed = merged.changes.length > 0 && next !== text;
  const changes = empty && changed ? [...merged.changes, 'removed the file (nothing else was in it)'] : merged.changes;
  if (changed && !options.dryRun && next === undefined) await rm(file, { force: true });
  else if (changed && !options.dryRun && next !== undefined) {
    await writeSettings(file, next, text !== undefined);
  }
  const folders = changed && next === undefined ? await emptyFoldersAfter(options) : {};
  return { file, scope, command, ...(options.http ? { url: options.http.url, headers: options.http.headers } : {}), changed, changes, ...folders, dryRun: Boolean(options.dryRun), uninstall: Boolean(options.uninstall) };
}

/** opencode: ckpt's plugin file, written whole (install/opencode-plugin.ts); another file of that name is refused. */
async function installPluginFile(options: InstallOptions, file: string, command: string, text: string | undefined): Promise<InstallResult> {
  if (text !== undefined && !isCkptPlugin(text)) {
    throw new CkptError('INVALID_ARGUMENT', `${file} exists and is not ckpt's plugin; it was left unchanged`, { file });
  }
  const next = options.uninstall ? undefined : opencodePluginSource(command, options.spec.passiveTools);
  const changed = next !== text;
  const changes = !changed ? [] : next === undefined ? ['removed the plugin'] : text === undefined ? ['added the plugin'] : ['updated the plugin'];
  if (changed && !options.dryRun) {
    if (next === undefined) await rm(file, { force: true });
    else {
      await writeSettings(file, next, text !== undefined);
    }
  }
  const folders = changed && next === undefined ? await emptyFoldersAfter(options) : {};
  return { file, scope: options.scope, command, changed, changes, ...folders, dryRun: Boolean(options.dryRun), uninstall: Boolean(options.uninstall) };
}

// `ckpt init <agent> [--project|--local|--user] [--http|--command] [--dry-run] [--uninstall]` (DESIGN §9,
// §10 "Hooks at no cost"): installs the hooks that record an agent's work into its settings file, or
// removes exactly those again. For an agent with HTTP hooks and local settings (Claude Code) the
// default is the local file with the per-tool-call events as HTTP hooks to the store's daemon —
// started here, and again on demand by the once-per-prompt command hooks — carrying a hook-only
// credential of this workspace (no token to export). --http makes every event that can be one an
// HTTP hook; --command (and the shared --project / --user files) installs command hooks only, whose
// client (the shell one where it can run) forwards to the daemon when it runs. --http --user keeps the daemon's token in
// $CKPT_DAEMON_TOKEN (a user file serves every workspace, a credential names one).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pc } from '../colors.js';
import { CkptError, hookCredential, hookKey, runningDaemon, storeLocation, type DaemonInfo, type Store } from '../../index.js';
import { idleExitSeconds, startDaemon, switchOn } from '../../hooks/client/hook-client.js';
import { agentSpec, AGENTS } from '../../hooks/agents/index.js';
import { installAgent, type InstallScope } from '../../hooks/install/install-agent.js';
import type { CommandSpec } from '../command-table.js';
import { commandHint } from '../hint.js';
import { VERSION } from '../version.js';

export const initCommand: CommandSpec = {
  use: 'init <agent>',
  description: `install ckpt's hooks into the agent's settings (${Object.keys(AGENTS).join(', ')}); --uninstall removes them`,
  options: [
    ['--project', 'the project settings, shared with the team (default, except for Claude Code)'],
    ['--local', "the project's local settings, not committed (Claude Code's default: .claude/settings.local.json)"],
    ['--user', 'your user settings (every project)'],
    ['--http', "every event that can be one as an HTTP hook to this store's daemon (default: the per-tool-call events)"],
    ['--command', 'command hooks only (each forwards to the daemon when one runs)'],
    ['--dry-run', 'print what would change and change nothing'],
    ['--uninstall', "remove ckpt's hooks (exactly those init added)"],
  ],
  run: async ([agent, opts], ctx, out) => {
    const o = opts as { project?: boolean; local?: boolean; user?: boolean; http?: boolean; command?: boolean; dryRun?: boolean; uninstall?: boolean };
    const scopes = (['project', 'local', 'user'] as const).filter((s) => o[s]);
    if (scopes.length > 1) throw new CkptError('INVALID_ARGUMENT', 'choose one of --project, --local, --user', { scopes });
    if (o.http && o.command) throw new CkptError('INVALID_ARGUMENT', 'choose one of --http, --command', {});
    const spec = agentSpec(agent as string);
    if (o.http && !spec.httpHooks) throw new CkptError('INVALID_ARGUMENT', `${spec.displayName} has no HTTP hooks: install command hooks (without --http)`, { agent: spec.name });
    // An HTTP hook's url names this machine's daemon port and project path: local settings by default.
    const hybrid = !o.http && !o.command && Boolean(spec.httpHooks && spec.settingsFiles.local) && (scopes[0] ?? 'local') === 'local';
    const scope: InstallScope = scopes[0] ?? ((o.http || hybrid) && spec.settingsFiles.local ? 'local' : 'project');
    const projectDir = resolve(ctx.io.cwd, ctx.flags.workspace ?? '.');
    // --store as every command takes it: a folder against the working directory, a shared store URL as it is.
    const storeArg = ctx.flags.store ? storeLocation(ctx.flags.store, ctx.io.cwd) : undefined;
    const notes: string[] = [];
    let http: Awaited<ReturnType<typeof httpHooks>> | undefined;
    /** A dry run where the real run would start the daemon and install HTTP hooks to it. */
    let httpToCome = false;
    if ((o.http || hybrid) && !o.uninstall) {
      const store = await ctx.store();
      const wasRunning = await runningDaemon(store.daemonCtx);
      const daemon = o.dryRun ? wasRunning : await ensureDaemon(store, storeArg ?? store.dir, ctx.io.env);
      // A background process the user did not start by hand: say so, and how to find it again.
      if (daemon && !wasRunning) notes.push(`started ckpt's daemon for the store ${store.dir} (pid ${daemon.pid}, ${daemon.url}); it runs in the background (${commandHint(ctx, ['serve'])} run again names it)`);
      if (o.dryRun && !daemon && wouldStartDaemon(store, ctx.io.env)) {
        // The real run starts the daemon first: say so instead of predicting command hooks only.
        httpToCome = true;
        notes.push(`no ckpt daemon runs for the store ${store.dir} yet: without --dry-run, init starts one and the ${o.http ? 'HTTP' : 'per-tool-call'} events become HTTP hooks to it`);
      } else {
        try {
          http = await httpHooks(store, spec, scope, projectDir, daemon);
        } catch (err) {
          if (o.http) throw err;
          // The default install without a reachable daemon (a unix socket, a shared store): command hooks only.
          notes.push(`command hooks only: ${(err as Error).message}`);
        }
      }
    }
    const envStore = !storeArg && !o.uninstall ? (['CKPT_STORE', 'CKPT_HOME'] as const).find((v) => ctx.io.env[v]) : undefined;
    // HTTP hooks post to this store's daemon: the command hooks beside them must use the same store,
    // not the one the agent's environment names (one session would be split across two stores).
    const pinned = storeArg ?? (envStore && (http || httpToCome) ? (await ctx.store()).dir : undefined);
    if (envStore && (http || httpToCome)) {
      notes.push(`the hooks use the store ${pinned} (from $${envStore}), written into the command hooks: its daemon serves the HTTP hooks`);
    } else if (envStore) {
      // The command hooks find their store as every command does: a variable set only for this init would not reach them.
      notes.push(`the command hooks find the store from $${envStore} as ckpt does: start ${spec.displayName} where it is set, or run init with --store to write the store into them`);
    }
    const installed = await installAgent({
      spec,
      scope,
      projectDir,
      ...(http ? { http, httpFor: (e) => !e.commandOnly && (o.http || Boolean(e.perToolCall)) } : {}),
      homeDir: ctx.io.env.HOME || homedir(),
      ckptCommand: ckptCommandLine(pinned),
      dryRun: o.dryRun,
      uninstall: o.uninstall,
    });
    if (!o.uninstall) notes.push(...(await alsoInstalled(spec, scope, installed.file, projectDir, ctx.io.env.HOME || homedir())));
    if (!o.uninstall && scope !== 'user' && http && !gitIgnores(projectDir, installed.file)) {
      notes.push(`${installed.file} holds this machine's hook credential: keep it out of git (add it to .gitignore)`);
    }
    const r = { ...installed, ...(installed.url && !hybrid ? {} : { ckpt: whichCkpt() }), ...(notes.length ? { notes } : {}) };
    out.result(r, (v) => {
      const verb = v.dryRun ? 'would change' : 'changed';
      if (!v.changed) return `${v.file}: nothing to change (ckpt's ${spec.displayName} hooks are ${v.uninstall ? 'not installed' : 'installed'})`;
      const lines = [`${v.file}: ${verb}`, ...v.changes.map((c) => `  ${c}`)];
      for (const f of v.removedFolders ?? []) lines.push(`  ${v.dryRun ? 'would remove' : 'removed'} the empty folder ${f}`);
      if (!v.uninstall && v.url) lines.push(`  url: ${pc.dim(v.url)}`);
      if (!v.uninstall && (!v.url || hybrid)) lines.push(`  command: ${pc.dim(v.command)}`);
      if (!v.uninstall && v.url && scope === 'user') {
        lines.push(pc.yellow(`  note: the hooks send the daemon's token from $${TOKEN_ENV}: start ${spec.displayName} where it is set,`));
        lines.push(pc.yellow(`        e.g. export ${TOKEN_ENV}="$(ckpt serve --print-token)"`));
      }
      if (!v.uninstall && v.ckpt) lines.push(`  runs:    ${describeCkpt(v.ckpt)}`);
      for (const n of v.notes ?? []) lines.push(pc.yellow(`  note: ${n}`));
      if (!v.uninstall && spec.installNote) lines.push(pc.yellow(`  note: ${spec.installNote}`));
      if (!v.uninstall && !v.dryRun) {
        // What a newcomer does next: nothing to run by hand, then the three commands that matter.
        lines.push(`next: start (or restart) ${spec.displayName} in ${projectDir}: each prompt becomes a turn. Then:`);
        lines.push(`  ${commandHint(ctx, ['log'])}  lists the turns`);
        lines.push(`  ${commandHint(ctx, ['restore', 'N'])}  puts the files back as they were at prompt N (undoable)`);
        lines.push(`  ${commandHint(ctx, ['open'])}  the timeline in a browser`);
      }
      return lines.join('\n');
    });
  },
};

/**
 * Notes for ckpt's hooks of the same agent in its other settings files: the agent runs the hooks of
 * every file, so each event would be recorded twice (a prompt would start two turns).
 */
async function alsoInstalled(spec: ReturnType<typeof agentSpec>, scope: InstallScope, file: string, projectDir: string, homeDir: string): Promise<string[]> {
  const notes: string[] = [];
  for (const other of ['local', 'project', 'user'] as const) {
    if (other === scope || (other === 'local' && !spec.settingsFiles.local)) continue;
    // A dry-run uninstall there: "would change" means ckpt's hooks are in that file.
    const there = await installAgent({ spec, scope: other, projectDir, homeDir, ckptCommand: 'ckpt', dryRun: true, uninstall: true }).catch(() => undefined);
    if (there?.changed && there.file !== file) {
      notes.push(
        `ckpt's ${spec.displayName} hooks are also in ${there.file}: ${spec.displayName} runs both, so every event would be recorded twice; remove them there with \`ckpt init ${spec.name} --${other} --uninstall\``,
      );
    }
  }
  return notes;
}

/** True unless `file` lies in a git work tree that does not ignore it (`git check-ignore`; no git or no work tree: nothing to warn about). */
function gitIgnores(projectDir: string, file: string): boolean {
  const r = spawnSync('git', ['-C', projectDir, 'check-ignore', '-q', '--', file], { stdio: 'ignore', timeout: 5_000 });
  return r.status !== 1;
}

/** The environment variable the HTTP hooks read the daemon's bearer token from (Claude Code's allowedEnvVars). */
const TOKEN_ENV = 'CKPT_DAEMON_TOKEN';
/** Capture switched off in the agent's environment (README): passed on to the daemon by a header. */
const DISABLE_ENV = 'CKPT_DISABLE';

/**
 * The store's running daemon, started (detached, exiting after an idle time, as the hooks start it)
 * when none runs; undefined when it did not come up in time.
 */
async function ensureDaemon(store: Store, storeDir: string, env: NodeJS.ProcessEnv): Promise<DaemonInfo | undefined> {
  const running = await runningDaemon(store.daemonCtx);
  const script = process.argv[1];
  if (running || !script || !wouldStartDaemon(store, env)) return running;
  startDaemon(storeDir, realpathSync(script), env, idleExitSeconds(env));
  for (const until = Date.now() + 20_000; Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 100));
    const info = await runningDaemon(store.daemonCtx);
    if (info) return info;
  }
  return undefined;
}

/** Whether `ensureDaemon` starts a daemon when none runs (not for a shared store, nor with CKPT_NO_DAEMON). */
function wouldStartDaemon(store: Store, env: NodeJS.ProcessEnv): boolean {
  return !store.shared && Boolean(process.argv[1]) && !switchOn(env.CKPT_NO_DAEMON);
}

/**
 * HTTP hooks to the store's daemon: NOT_FOUND when none runs, INVALID_ARGUMENT when it cannot be
 * reached by url. A project or local file gets the hook credential of its workspace; a user file
 * (every workspace) the daemon's token by environment reference.
 */
async function httpHooks(store: Store, spec: ReturnType<typeof agentSpec>, scope: InstallScope, projectDir: string, daemon: DaemonInfo | undefined) {
  if (!daemon) throw new CkptError('NOT_FOUND', `no ckpt daemon serves the store ${store.dir}: start one with \`ckpt serve\`, then run this again`, { store: store.dir, reason: 'no-daemon' });
  if (daemon.port === undefined) throw new CkptError('INVALID_ARGUMENT', `the daemon listens on a unix socket (${daemon.url}), which HTTP hooks cannot reach: run \`ckpt serve --port P\``, { url: daemon.url });
  const host = daemon.host === '::1' || daemon.host === '::' ? '[::1]' : daemon.host === undefined || daemon.host === '0.0.0.0' || daemon.host.startsWith('127.') ? '127.0.0.1' : undefined;
  if (!host) throw new CkptError('INVALID_ARGUMENT', `the daemon listens on ${daemon.host}, not on a loopback address: HTTP hooks post to 127.0.0.1`, { url: daemon.url });
  const base = `http://${host}:${daemon.port}/hooks/${spec.name}`;
  // The agent's CKPT_DISABLE, which the daemon does not see otherwise (empty when unset; hook-lane.ts).
  const disable = { 'X-Ckpt-Disable': `$${DISABLE_ENV}` };
  // User settings serve every project: the daemon finds the workspace from the event's cwd then.
  if (scope === 'user') return { url: base, headers: { Authorization: `Bearer $${TOKEN_ENV}`, ...disable }, allowedEnvVars: [TOKEN_ENV, DISABLE_ENV] };
  const workspace = await realpath(projectDir).catch(() => projectDir);
  return { url: `${base}?${new URLSearchParams({ workspace })}`, headers: { Authorization: `Bearer ${hookCredential(await hookKey(store.daemonCtx), workspace)}`, ...disable }, allowedEnvVars: [DISABLE_ENV] };
}

/** Which ckpt the command hooks run: this process's own, as installed (a package) or a source checkout. */
export interface HookCkpt {
  version: string;
  /** The package folder (holding bin/ckpt.js); undefined when it runs from npx's cache. */
  dir?: string;
  from: 'package' | 'checkout' | 'npx';
}

function whichCkpt(): HookCkpt {
  const script = process.argv[1] ? realpathSync(process.argv[1]) : undefined;
  if (!script || /[\\/]_npx[\\/]/.test(script)) return { version: VERSION, from: 'npx' };
  const dir = dirname(dirname(script));
  // A checkout has the sources beside the build; an installed package (npm pack / npm install) does not.
  return { version: VERSION, dir, from: existsSync(resolve(dir, 'src', 'cli')) ? 'checkout' : 'package' };
}

function describeCkpt(c: HookCkpt): string {
  if (c.from === 'npx') return `ckpt ${c.version} from npx's cache`;
  if (c.from === 'package') return `ckpt ${c.version}, the package installed in ${c.dir}`;
  return `ckpt ${c.version}, the source checkout ${c.dir} (rebuilding it is safe; moving or deleting it stops the hooks)`;
}

/**
 * The shell command that runs this very ckpt's hooks from any folder: the shell hook client
 * (bin/ckpt-hook.sh, DESIGN §10 "The shell hook client") with node's absolute path where it can run,
 * else node's absolute path and this ckpt's entry script; `npx -y ckpt` when it runs from npx's cache
 * (which may be cleaned). `--store` is carried over when it was given.
 */
function ckptCommandLine(store: string | undefined): string {
  const script = process.argv[1] ? realpathSync(process.argv[1]) : undefined;
  let base = 'npx -y ckpt';
  if (script && !/[\\/]_npx[\\/]/.test(script)) {
    const shClient = join(dirname(script), 'ckpt-hook.sh');
    // Run as a program, never as `sh FILE`: a missing FILE makes dash exit 2, which blocks the tool call.
    base = process.platform !== 'win32' && existsSync('/bin/sh') && executable(shClient) ? `${shellQuote(shClient)} ${shellQuote(process.execPath)}` : `${shellQuote(process.execPath)} ${shellQuote(script)}`;
  }
  return store ? `${base} --store ${shellQuote(store)}` : base;
}

/** False on a noexec mount too (access(2) checks it): such a script would never run. */
function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

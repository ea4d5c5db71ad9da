// `ckpt init <agent> [--project|--local|--user] [--http] [--dry-run] [--uninstall]` (DESIGN §9):
// installs the hooks that record an agent's work into its settings file, or removes exactly those
// again. With --http the hooks post to the store's running daemon (`ckpt serve`) instead of starting
// a process per event; the bearer token is referenced as $CKPT_DAEMON_TOKEN, never written.
import { existsSync, realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { CkptError, runningDaemon, type Store } from '../../index.js';
import { agentSpec } from '../../hooks/agents/index.js';
import { installAgent, type InstallScope } from '../../hooks/install/install-agent.js';
import { action } from '../action.js';
import { VERSION } from '../version.js';

export function registerInitCommand(program: Command): void {
  program
    .command('init <agent>')
    .description("install ckpt's hooks into the agent's settings (claude, gemini); --uninstall removes them")
    .option('--project', 'the project settings, shared with the team (default)')
    .option('--local', "the project's local settings (not committed)")
    .option('--user', 'your user settings (every project)')
    .option('--http', "HTTP hooks posting to this store's running daemon (ckpt serve); default scope --local")
    .option('--dry-run', 'print what would change and change nothing')
    .option('--uninstall', "remove ckpt's hooks (exactly those init added)")
    .action(
      action(async ([agent, opts], ctx, out) => {
        const o = opts as { project?: boolean; local?: boolean; user?: boolean; http?: boolean; dryRun?: boolean; uninstall?: boolean };
        const scopes = (['project', 'local', 'user'] as const).filter((s) => o[s]);
        if (scopes.length > 1) throw new CkptError('INVALID_ARGUMENT', 'choose one of --project, --local, --user', { scopes });
        const spec = agentSpec(agent as string);
        // An HTTP hook's url names this machine's daemon port and project path: local settings by default.
        const scope: InstallScope = scopes[0] ?? (o.http && spec.settingsFiles.local ? 'local' : 'project');
        const projectDir = resolve(ctx.io.cwd, ctx.flags.workspace ?? '.');
        const http = o.http && !o.uninstall ? await httpHooks(await ctx.store(), spec, scope, projectDir) : undefined;
        const installed = await installAgent({
          spec,
          scope,
          projectDir,
          ...(http ? { http } : {}),
          homeDir: ctx.io.env.HOME || homedir(),
          ckptCommand: ckptCommandLine(ctx.flags.store ? resolve(ctx.io.cwd, ctx.flags.store) : undefined),
          dryRun: o.dryRun,
          uninstall: o.uninstall,
        });
        const r = { ...installed, ...(installed.url ? {} : { ckpt: whichCkpt() }) };
        out.result(r, (v) => {
          const verb = v.dryRun ? 'would change' : 'changed';
          if (!v.changed) return `${v.file}: nothing to change (ckpt's ${spec.displayName} hooks are ${v.uninstall ? 'not installed' : 'installed'})`;
          const lines = [`${v.file}: ${verb}`, ...v.changes.map((c) => `  ${c}`)];
          if (!v.uninstall && v.url) {
            lines.push(`  url: ${pc.dim(v.url)}`);
            lines.push(pc.yellow(`  note: the hooks send the daemon's token from $${TOKEN_ENV}: start ${spec.displayName} where it is set,`));
            lines.push(pc.yellow(`        e.g. export ${TOKEN_ENV}="$(ckpt serve --print-token)"`));
            lines.push(pc.yellow(`  note: the url holds the daemon's port, which a restart takes again when free; if it moved, run this again`));
          } else if (!v.uninstall) {
            lines.push(`  command: ${pc.dim(v.command)}`);
            if (v.ckpt) lines.push(`  runs:    ${describeCkpt(v.ckpt)}`);
          }
          if (!v.uninstall && spec.installNote) lines.push(pc.yellow(`  note: ${spec.installNote}`));
          return lines.join('\n');
        });
      }),
    );
}

/** The environment variable the HTTP hooks read the daemon's bearer token from (Claude Code's allowedEnvVars). */
const TOKEN_ENV = 'CKPT_DAEMON_TOKEN';

/** HTTP hooks to the store's running daemon: NOT_FOUND when none runs, INVALID_ARGUMENT when it cannot be reached by url. */
async function httpHooks(store: Store, spec: ReturnType<typeof agentSpec>, scope: InstallScope, projectDir: string) {
  if (!spec.httpHooks) throw new CkptError('INVALID_ARGUMENT', `${spec.displayName} has no HTTP hooks: install command hooks (without --http)`, { agent: spec.name });
  const daemon = await runningDaemon(store.ctx);
  if (!daemon) throw new CkptError('NOT_FOUND', `no ckpt daemon serves the store ${store.dir}: start one with \`ckpt serve\`, then run this again`, { store: store.dir, reason: 'no-daemon' });
  if (daemon.port === undefined) throw new CkptError('INVALID_ARGUMENT', `the daemon listens on a unix socket (${daemon.url}), which HTTP hooks cannot reach: run \`ckpt serve --port P\``, { url: daemon.url });
  // User settings serve every project: the daemon finds the workspace from the event's cwd then.
  const workspace = scope === 'user' ? '' : `?${new URLSearchParams({ workspace: await realpath(projectDir).catch(() => projectDir) })}`;
  const host = daemon.host === '::1' || daemon.host === '::' ? '[::1]' : daemon.host === undefined || daemon.host === '0.0.0.0' || daemon.host.startsWith('127.') ? '127.0.0.1' : undefined;
  if (!host) throw new CkptError('INVALID_ARGUMENT', `the daemon listens on ${daemon.host}, not on a loopback address: HTTP hooks post to 127.0.0.1`, { url: daemon.url });
  return { url: `http://${host}:${daemon.port}/hooks/${spec.name}${workspace}`, headers: { Authorization: `Bearer $${TOKEN_ENV}` }, allowedEnvVars: [TOKEN_ENV] };
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
 * The shell command that runs this very ckpt from any folder: node's absolute path and this ckpt's
 * entry script, or `npx -y ckpt` when it runs from npx's cache (which may be cleaned). `--store` is
 * carried over when it was given.
 */
function ckptCommandLine(store: string | undefined): string {
  const script = process.argv[1] ? realpathSync(process.argv[1]) : undefined;
  const base = !script || /[\\/]_npx[\\/]/.test(script) ? 'npx -y ckpt' : `${shellQuote(process.execPath)} ${shellQuote(script)}`;
  return store ? `${base} --store ${shellQuote(store)}` : base;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

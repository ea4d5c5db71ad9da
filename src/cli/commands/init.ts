// `ckpt init <agent> [--project|--local|--user] [--dry-run] [--uninstall]` (DESIGN §9): installs the
// hooks that record an agent's work into its settings file, or removes exactly those again.
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import pc from 'picocolors';
import { CkptError } from '../../index.js';
import { agentSpec } from '../../hooks/agents/index.js';
import { installAgent, type InstallScope } from '../../hooks/install/install-agent.js';
import { action } from '../action.js';

export function registerInitCommand(program: Command): void {
  program
    .command('init <agent>')
    .description("install ckpt's hooks into the agent's settings (claude, gemini); --uninstall removes them")
    .option('--project', 'the project settings, shared with the team (default)')
    .option('--local', "the project's local settings (not committed)")
    .option('--user', 'your user settings (every project)')
    .option('--dry-run', 'print what would change and change nothing')
    .option('--uninstall', "remove ckpt's hooks (exactly those init added)")
    .action(
      action(async ([agent, opts], ctx, out) => {
        const o = opts as { project?: boolean; local?: boolean; user?: boolean; dryRun?: boolean; uninstall?: boolean };
        const scopes = (['project', 'local', 'user'] as const).filter((s) => o[s]);
        if (scopes.length > 1) throw new CkptError('INVALID_ARGUMENT', 'choose one of --project, --local, --user', { scopes });
        const scope: InstallScope = scopes[0] ?? 'project';
        const spec = agentSpec(agent as string);
        const r = await installAgent({
          spec,
          scope,
          projectDir: resolve(ctx.io.cwd, ctx.flags.workspace ?? '.'),
          homeDir: ctx.io.env.HOME || homedir(),
          ckptCommand: ckptCommandLine(ctx.flags.store ? resolve(ctx.io.cwd, ctx.flags.store) : undefined),
          dryRun: o.dryRun,
          uninstall: o.uninstall,
        });
        out.result(r, (v) => {
          const verb = v.dryRun ? 'would change' : 'changed';
          if (!v.changed) return `${v.file}: nothing to change (ckpt's ${spec.displayName} hooks are ${v.uninstall ? 'not installed' : 'installed'})`;
          const lines = [`${v.file}: ${verb}`, ...v.changes.map((c) => `  ${c}`)];
          if (!v.uninstall) lines.push(`  command: ${pc.dim(v.command)}`);
          if (!v.uninstall && spec.installNote) lines.push(pc.yellow(`  note: ${spec.installNote}`));
          return lines.join('\n');
        });
      }),
    );
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

// `ckpt restore|undo|rewind` (DESIGN §9). On a terminal the plan is shown and confirmed first
// (`--yes` skips the question); without a terminal they act, since hooks and scripts call them.
import { createInterface } from 'node:readline/promises';
import { Option, type Command } from 'commander';
import pc from 'picocolors';
import { CkptError, restore, rewind, undoPath, type RestoreResult } from '../../index.js';
import { action } from '../action.js';
import { progressBar, type Progress } from '../progress.js';
import type { CliIo, Output } from '../io.js';

interface RestoreFlags {
  dryRun?: boolean;
  force?: boolean;
  yes?: boolean;
  fork?: boolean;
}

const DRY_RUN = new Option('--dry-run', 'show the plan, change nothing');
const YES = new Option('-y, --yes', 'do not ask for confirmation on a terminal');

export function registerRestoreCommands(program: Command): void {
  program
    .command('restore <tag> [paths...]')
    .description('put the workspace (or the paths given) back to how it was at TAG; prints the tag that undoes it')
    .addOption(DRY_RUN)
    .option('--force', 'overwrite paths changed since ckpt last recorded them (their content is kept for undo)')
    .addOption(YES)
    .action(
      action(async ([tag, paths, opts], ctx, out) => {
        const flags = opts as RestoreFlags;
        const session = await ctx.session();
        const list = paths as string[];
        const result = await confirmThenRun(ctx.io, out, flags, (dryRun, onProgress) =>
          restore(session, tag as string, { paths: list.length ? list : undefined, cwd: ctx.io.cwd, force: flags.force, dryRun, onProgress }),
        );
        out.result(publicResult(result), humanResult);
      }),
    );

  program
    .command('undo <tag> <path>')
    .description('restore one file (or folder) to its state at TAG')
    .addOption(DRY_RUN)
    .option('--force', 'overwrite it even if it changed since ckpt last recorded it')
    .addOption(YES)
    .action(
      action(async ([tag, path, opts], ctx, out) => {
        const flags = opts as RestoreFlags;
        const session = await ctx.session();
        const result = await confirmThenRun(ctx.io, out, flags, (dryRun, onProgress) =>
          undoPath(session, tag as string, path as string, { cwd: ctx.io.cwd, force: flags.force, dryRun, onProgress }),
        );
        out.result(publicResult(result), humanResult);
      }),
    );

  program
    .command('rewind <tag>')
    .description('restore to TAG and move the conversation back to it (or fork there with --fork)')
    .option('--fork', 'leave this session as it is and continue in a new fork at TAG')
    .addOption(DRY_RUN)
    .option('--force', 'overwrite paths changed since ckpt last recorded them')
    .addOption(YES)
    .action(
      action(async ([tag, opts], ctx, out) => {
        const flags = opts as RestoreFlags;
        const session = await ctx.session();
        const result = await confirmThenRun(ctx.io, out, flags, (dryRun) => rewind(session, tag as string, { fork: flags.fork, force: flags.force, dryRun }));
        out.result({ ...publicResult(result), watermark: result.watermark, session: result.session, ...(result.forked ? { forked: true } : {}) }, (r) =>
          `${humanResult(r)}\nconversation watermark: turn ${r.watermark.turn}, ${r.watermark.messageCount ?? '?'} messages${r.forked ? `\ncontinuing in fork ${r.session}` : ''}`,
        );
      }),
    );
}

type RunRestore<R> = (dryRun: boolean, onProgress?: (p: Progress) => void) => Promise<R>;

/**
 * Shows the plan and asks on an interactive terminal unless --yes/--dry-run; then runs for real,
 * with a progress bar on a terminal.
 */
async function confirmThenRun<R extends RestoreResult>(io: CliIo, out: Output, flags: RestoreFlags, run: RunRestore<R>): Promise<R> {
  if (flags.dryRun) return run(true);
  if (out.interactive && !flags.yes) await confirm(io, await run(true));
  const bar = progressBar(io, out.json);
  try {
    return await run(false, bar.update);
  } finally {
    bar.stop();
  }
}

/** Asks before a restore that changes anything; cancelling throws and changes nothing. */
async function confirm(io: CliIo, preview: RestoreResult): Promise<void> {
  if (preview.restored.length + preview.deleted.length === 0) return;
  io.stderr.write(`${humanPlan(preview)}\n`);
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await rl.question('Restore these paths? [y/N] ');
    if (!/^y(es)?$/i.test(answer.trim())) throw new CkptError('INVALID_ARGUMENT', 'restore cancelled: nothing was changed', { cancelled: true });
  } finally {
    rl.close();
  }
}

/** The §9 result fields, in order, plus what a script may find useful. */
function publicResult(r: RestoreResult): Record<string, unknown> & RestoreResult {
  const { plan, id: _id, ...rest } = r;
  return { ...rest, ...(plan ? { plan: plan.entries.map(({ path, action }) => ({ path, action })) } : {}) } as Record<string, unknown> & RestoreResult;
}

function humanPlan(r: RestoreResult): string {
  const lines = [`Plan: restore to ${pc.bold(r.to)}`];
  for (const p of r.restored) lines.push(`  ${pc.green('write ')} ${p}`);
  for (const p of r.deleted) lines.push(`  ${pc.red('delete')} ${p}`);
  for (const s of r.skipped) lines.push(`  ${pc.yellow('skip  ')} ${s.path} (${s.why})`);
  for (const p of r.drift) lines.push(`  ${pc.yellow('drift ')} ${p} (changed since ckpt last recorded it)`);
  return lines.join('\n');
}

function humanResult(r: RestoreResult): string {
  if (r.dryRun) return `${humanPlan(r)}\n(dry run: nothing changed)`;
  const lines = [`restored to ${pc.bold(r.to)}: ${r.restored.length} written, ${r.deleted.length} deleted, ${r.skipped.length} skipped`];
  for (const s of r.skipped) lines.push(`  skipped ${s.path} (${s.why})`);
  if (r.drift.length) lines.push(`  overwrote ${r.drift.length} drifted path(s); their content is in the undo capture`);
  lines.push(r.undo ? `undo with: ckpt restore ${r.undo}` : 'nothing to change');
  return lines.join('\n');
}

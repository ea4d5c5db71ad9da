// `ckpt restore|undo|rewind` (DESIGN §9). When stdin is a terminal the plan is shown and confirmed
// first (`--yes` skips the question); without one they act, since hooks and scripts call them.
// Answering no changes nothing and exits EXIT_CANCELLED. A dry run says whether the real run would be
// refused (DRIFT) and why. The printed undo hint is a command that works as printed (hint.ts).
import { Option, type Command } from 'commander';
import { pc } from '../colors.js';
import { hookRecordedBy, pathText, restore, type RestoreOptions, type RestoreResult, rewind, type Session, shortSessionId, undoPath } from '../../index.js';
import { askYesNo } from '../ask.js';
import { addCommands, type CommandSpec, type OptionSpec } from '../command-table.js';
import type { CliContext } from '../context.js';
import { CliExit, EXIT_CANCELLED } from '../exit.js';
import { progressBar, type Progress } from '../progress.js';
import { commandHint } from '../hint.js';
import type { CliIo, Output } from '../io.js';
import { counted } from '../counted.js';
import { terminalText } from '../terminal-text.js';

interface RestoreFlags {
  dryRun?: boolean;
  force?: boolean;
  yes?: boolean;
  fork?: boolean;
}

const DRY_RUN = new Option('--dry-run', 'show the plan, change nothing');
const YES = new Option('-y, --yes', 'do not ask for confirmation on a terminal');
/** What every command that changes files takes: --dry-run, --force (saying what it overwrites), --yes. */
const changesFiles = (force: string): OptionSpec[] => [DRY_RUN, ['--force', force], YES];

export function registerRestoreCommands(program: Command): void {
  addCommands(program, [
    {
      use: 'restore <tag> [paths...]',
      tags: ['tag'],
      existing: true,
      description: 'put the workspace (or the paths given) back to how it was at TAG, hand edits since the last prompt included (refused as drift unless --force); prints the tag that undoes it',
      options: changesFiles('overwrite paths changed since ckpt last recorded them (their content is kept for undo)'),
      run: restoreCommand<string[]>((session, tag, paths, options) => restore(session, tag, { paths: paths.length ? paths : undefined, ...options })),
    },
    {
      use: 'undo <tag> <path>',
      tags: ['tag'],
      existing: true,
      description: 'restore one file (or folder) to its state at TAG',
      options: changesFiles('overwrite it even if it changed since ckpt last recorded it'),
      run: restoreCommand<string>((session, tag, path, options) => undoPath(session, tag, path, options)),
    },
    {
      use: 'rewind <tag>',
      tags: ['tag'],
      existing: true,
      description: 'restore to TAG and move the conversation back (or fork there with --fork)',
      options: [['--fork', 'leave this session as it is and continue in a new fork at TAG'], ...changesFiles('overwrite paths changed since ckpt last recorded them')],
      run: async ([tag, opts], ctx, out) => {
        const flags = opts as RestoreFlags;
        const session = await ctx.session();
        const result = await confirmThenRun(ctx.io, out, flags, tag as string, (dryRun) => rewind(session, tag as string, { fork: flags.fork, force: flags.force, dryRun }));
        // The restore is recorded in the fork with --fork: its undo tag is the fork's.
        const hint = undoHint(ctx, result.undo, result.forked || ctx.flags.session !== undefined ? result.session : undefined);
        // A session an agent records into: the agent's own conversation goes on there, not in the fork.
        const agent = result.forked ? await session.metadata().then(hookRecordedBy, () => undefined) : undefined;
        out.result({ ...publicResult(result), watermark: result.watermark, session: result.session, ...(result.forked ? { forked: true } : {}) }, (r) =>
          `${humanResult(r, hint)}\n${watermarkLine(r.watermark, r.dryRun === true)}${r.forked ? `\ncontinuing in fork ${r.session}\n${forkDefaultLine(ctx, r.session, session.id, agent)}` : ''}`,
        );
      },
    },
  ]);
}

/**
 * After `rewind --fork`: the fork is now the default session (the one updated last), as `session fork`
 * says too — until an agent that records into the original sends its next prompt: ckpt does not move
 * the agent's conversation (a real-Claude probe: the message promised the fork, the prompt went on in the original).
 */
function forkDefaultLine(ctx: CliContext, fork: string, original: string, agent: string | undefined): string {
  if (agent !== undefined) {
    return pc.yellow(
      `the fork ${shortSessionId(fork)} is the default session until ${agent}'s next prompt, which ckpt records in ${shortSessionId(original)} as before (${agent}'s own conversation is not moved). The fork's history: ${commandHint(ctx, ['--session', shortSessionId(fork), 'log'])}`,
    );
  }
  return pc.yellow(
    `the fork ${shortSessionId(fork)} is now the default session: commands without --session act on it. To work on the original, name it: ${commandHint(ctx, ['--session', shortSessionId(original), 'log'])}`,
  );
}

/** The conversation's position after a rewind; the message count only when the turn recorded one (`turn --message-count`). */
function watermarkLine(w: { turn: number; messageCount?: number | null }, dryRun: boolean): string {
  const count = typeof w.messageCount === 'number' ? `, ${counted(w.messageCount, 'message')}` : '';
  // A dry run moves nothing (a newcomer probe: it said "rewound").
  if (dryRun) return `the conversation would be rewound to turn ${w.turn}${count}`;
  return `conversation rewound to turn ${w.turn}${count} (what came after is hidden, not deleted)`;
}

type RestoreRun<T> = (session: Session, tag: string, what: T, options: Pick<RestoreOptions, 'cwd' | 'force' | 'dryRun' | 'onProgress'>) => Promise<RestoreResult>;

/** `restore` and `undo`, which differ only in what they restore: confirm, run, print the result and the tag that undoes it. */
function restoreCommand<T>(run: RestoreRun<T>): CommandSpec['run'] {
  return async ([tag, what, opts], ctx, out) => {
    const flags = opts as RestoreFlags;
    const session = await ctx.session();
    const result = await confirmThenRun(ctx.io, out, flags, tag as string, (dryRun, onProgress) => run(session, tag as string, what as T, { cwd: ctx.io.cwd, force: flags.force, dryRun, onProgress }));
    out.result(publicResult(result), (r) => humanResult(r, undoHint(ctx, r.undo, ctx.flags.session !== undefined ? session.id : undefined)));
  };
}

type RunRestore<R> = (dryRun: boolean, onProgress?: (p: Progress) => void) => Promise<R>;

/**
 * Asks (stdin a terminal, no --yes, not a dry run) before a restore that changes anything, showing
 * the plan; then runs for real, with a progress bar on a terminal. A plan the real run would refuse
 * (drift without --force) is not asked about: the real run reports the refusal.
 */
async function confirmThenRun<R extends RestoreResult>(io: CliIo, out: Output, flags: RestoreFlags, tag: string, run: RunRestore<R>): Promise<R> {
  if (flags.dryRun) return run(true);
  if (out.canAsk && !flags.yes) {
    const preview = await run(true);
    if (!preview.wouldRefuse && preview.restored.length + preview.deleted.length > 0 && !(await confirm(io, preview))) {
      out.result({ cancelled: true, to: tag }, () => 'cancelled, nothing changed');
      throw new CliExit(EXIT_CANCELLED);
    }
  }
  const bar = await progressBar(io, out.json);
  // Ctrl-C mid-restore ends the process as a kill would (the restore is journaled), but says what
  // happens next (a newcomer probe: it exited 130 in silence, the workspace half restored). Once the
  // restore is done, a late Ctrl-C is let pass: the process prints its result and exits 0 (a probe
  // saw a finished restore exit 130 in silence).
  let done = false;
  process.on('SIGINT', () => {
    if (done) return;
    bar.stop();
    io.stderr.write('\ninterrupted: if the restore had begun changing files, the next ckpt command of this session finishes it and says so; else nothing changed\n');
    process.exit(130);
  });
  try {
    return await run(false, bar.update);
  } finally {
    done = true;
    bar.stop();
  }
}

/** Shows the plan on stderr and asks; true only for an explicit yes (end of input or Ctrl-C is no). */
function confirm(io: CliIo, preview: RestoreResult): Promise<boolean> {
  io.stderr.write(terminalText(`${humanPlan(preview)}\n`, pc.isColorSupported));
  return askYesNo(io, 'Restore these paths?');
}

/** The §9 result fields, in order, plus what a script may find useful. */
function publicResult(r: RestoreResult): Record<string, unknown> & RestoreResult {
  const { plan, id: _id, ...rest } = r;
  return { ...rest, ...(plan ? { plan: plan.entries.map(({ path, action }) => ({ path, action })) } : {}) } as Record<string, unknown> & RestoreResult;
}

/** `ckpt restore UNDO`, runnable as printed (the session by full id when one was named, or the fork's). */
function undoHint(ctx: CliContext, undo: string | null, session: string | undefined): string | undefined {
  return undo ? commandHint(ctx, ['restore', undo], { session }) : undefined;
}

function humanPlan(r: RestoreResult): string {
  const lines = [`Plan: restore to ${pc.bold(r.to)}`];
  for (const p of r.restored) lines.push(`  ${pc.green('write ')} ${pathText(p)}`);
  for (const p of r.deleted) lines.push(`  ${pc.red('delete')} ${pathText(p)}`);
  for (const s of r.skipped) lines.push(`  ${pc.yellow('skip  ')} ${pathText(s.path)} (${s.why})`);
  for (const p of r.drift) lines.push(`  ${pc.yellow('drift ')} ${pathText(p)} (changed since ckpt last recorded it)`);
  if (r.restored.length + r.deleted.length === 0) lines.push('  nothing to change');
  return lines.join('\n');
}

function humanResult(r: RestoreResult, hint: string | undefined): string {
  if (r.dryRun) {
    const lines = [humanPlan(r)];
    if (r.wouldRefuse?.code === 'DRIFT') {
      lines.push(
        pc.yellow(
          `the real run would be refused (${r.wouldRefuse.code}, exit 4): ${r.wouldRefuse.paths.length} path(s) changed since ckpt last recorded them; add --force to restore anyway (their content is kept for undo)`,
        ),
      );
    } else if (r.wouldRefuse?.code === 'TAG_PRUNED') {
      lines.push(
        pc.yellow(
          `the real run would fail (TAG_PRUNED, exit 3): what ${r.wouldRefuse.paths.length} path(s) held at ${r.to} (${r.wouldRefuse.paths.slice(0, 5).map(pathText).join(', ')}${r.wouldRefuse.paths.length > 5 ? ', …' : ''}) was retired by another session's retention; restore other paths by name`,
        ),
      );
    } else if (r.wouldRefuse) {
      lines.push(
        pc.yellow(
          `the real run would fail (${r.wouldRefuse.code}, exit 3): the store lacks the content of ${r.wouldRefuse.paths.length} path(s) (${r.wouldRefuse.paths.slice(0, 5).map(pathText).join(', ')}${r.wouldRefuse.paths.length > 5 ? ', …' : ''}); \`ckpt verify\` checks the store`,
        ),
      );
    }
    lines.push('(dry run: nothing changed)');
    return lines.join('\n');
  }
  // Nothing written, deleted or skipped: one line, not "restored to 2: 0 written, …" then "nothing to change".
  if (!hint && r.restored.length + r.deleted.length + r.skipped.length === 0) return `nothing to change: the workspace already matches ${pc.bold(r.to)}`;
  const lines = [`restored to ${pc.bold(r.to)}: ${r.restored.length} written, ${r.deleted.length} deleted, ${r.skipped.length} skipped`];
  for (const s of r.skipped) lines.push(`  skipped ${pathText(s.path)} (${s.why})`);
  if (r.drift.length) lines.push(`  overwrote ${r.drift.length} drifted path(s); their content is in the undo capture`);
  lines.push(hint ? `undo with: ${hint}` : 'nothing to change');
  return lines.join('\n');
}

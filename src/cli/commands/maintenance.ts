// `ckpt gc|prune|verify|stats` (DESIGN §9): keeping the store bounded and healthy. Long operations
// show a progress bar on a terminal (stderr; never with --json).
import type { Command } from 'commander';
import { pc } from '../colors.js';
import {
  CkptError,
  describeGcPlan,
  formatBytes,
  invalidValue,
  gcSummary,
  parseDuration,
  prune,
  resolveRetention,
  runGc,
  storeStats,
  verify,
  type GcPlan,
  type SizeReport,
  type VerifyProblem,
} from '../../index.js';
import { addCommands } from '../command-table.js';
import { commandHint } from '../hint.js';
import { progressBar } from '../progress.js';

export function registerMaintenanceCommands(program: Command): void {
  addCommands(program, [
    {
      use: 'gc',
      existing: true,
      description: 'delete blobs no live event references (never any younger than the grace period)',
      options: [
        ['--dry-run', 'show what would be deleted, delete nothing'],
        ['--grace <duration>', 'keep anything changed more recently than this (e.g. 15m, 2h, 0s)', '15m'],
      ],
      run: async ([opts], ctx, out) => {
        const { dryRun, grace } = opts as { dryRun?: boolean; grace: string };
        const graceMs = parseDuration(grace, '--grace');
        const store = await ctx.store();
        const bar = await progressBar(ctx.io, out.json);
        let result, plan: GcPlan;
        try {
          // A default store not there yet holds nothing to collect: planned only, so nothing is made (a lock).
          ({ plan, result } = await runGc(store.ctx, { graceMs, dryRun: dryRun || store.absent === true, onProgress: bar.update }));
        } finally {
          bar.stop();
        }
        const body = gcSummary(plan, result, { dryRun, detail: true });
        out.result(body, (r) =>
          r.dryRun
            ? `${pc.bold('dry run')}: nothing deleted\n${describeGcPlan(plan)}`
            : `deleted ${r.deleted} blob cop${r.deleted === 1 ? 'y' : 'ies'}${r.orphansRemoved ? ` and ${r.orphansRemoved} leftover file(s)` : ''}, freed ${formatBytes(r.bytesFreed)}; kept ${r.kept}` +
              (r.rescued ? ` (${r.rescued} reused while collecting)` : '') +
              // Unreferenced but recent (a session just removed, a capture in flight): why nothing was freed, and how to free it now.
              (plan.young.count > 0 ? `\n${plan.young.count} unreferenced blob(s) younger than the grace period ${plan.grace} were kept (${formatBytes(plan.young.bytes)}); --grace 0s frees them now when nothing is running` : ''),
        );
      },
    },
    {
      use: 'prune',
      existing: true,
      description:
        "retire a session's early history (its tags stop restoring, in its forks too; gc then frees what only they used); without options, the automatic policy now: turns beyond the last 100 and older than 30 days (CKPT_KEEP_TURNS, CKPT_KEEP_AGE)",
      options: [
        ['--keep-turns <n>', 'keep the last N turns'],
        ['--keep-checkpoints <n>', 'keep (at least) the last N checkpoints (whole turns before them retire)'],
        ['--older-than <duration>', 'retire turns with no activity for this long (e.g. 30d)'],
      ],
      run: async ([opts], ctx, out) => {
        const flags = opts as { keepTurns?: string; keepCheckpoints?: string; olderThan?: string };
        const keepTurns = flags.keepTurns === undefined ? undefined : parseCount(flags.keepTurns, '--keep-turns');
        const keepCheckpoints = flags.keepCheckpoints === undefined ? undefined : parseCount(flags.keepCheckpoints, '--keep-checkpoints');
        const olderThanMs = flags.olderThan === undefined ? undefined : parseDuration(flags.olderThan, '--older-than');
        let options = { keepTurns, keepCheckpoints, olderThanMs };
        if (keepTurns === undefined && olderThanMs === undefined && keepCheckpoints === undefined) {
          // No flags: apply the automatic policy now (defaults, or CKPT_KEEP_TURNS / CKPT_KEEP_AGE / CKPT_KEEP_CHECKPOINTS).
          const policy = resolveRetention(undefined, ctx.io.env);
          if (!policy) throw new CkptError('INVALID_ARGUMENT', 'retention is off (CKPT_RETENTION); give --keep-turns, --keep-checkpoints or --older-than', {});
          options = { keepTurns: policy.keepTurns, keepCheckpoints: policy.keepCheckpoints, olderThanMs: policy.olderThanMs };
        }
        const session = await ctx.session();
        const r = await prune(session, options);
        out.result({ session: session.id, ...r }, (v) =>
          v.pruned
            ? `pruned session ${pc.bold(v.session)} before @${v.before}: ${v.retiredCaptures} capture(s) retired; free their space with: ${commandHint(ctx, ['gc'])}`
            : `nothing to prune in session ${v.session}${v.before ? ` (already pruned before @${v.before})` : ''}`,
        );
      },
    },
    {
      use: 'verify',
      reads: true,
      description: 're-hash every blob, parse every log, check references and metadata (exit 5 on problems)',
      run: async (_args, ctx, out) => {
        const store = await ctx.store();
        const bar = await progressBar(ctx.io, out.json);
        let result;
        try {
          result = await verify(store.ctx, { onProgress: bar.update });
        } finally {
          bar.stop();
        }
        out.result(result, (r) =>
          [
            r.ok ? pc.green('ok') : pc.red(`${r.problems.length} problem(s)`),
            `checked ${r.checked.blobs} blob(s), ${r.checked.packs} pack(s), ${r.checked.sessions} session(s) (${r.checked.events} events) in ${r.checked.workspaces} workspace(s)`,
            ...r.problems.map(problemLine),
          ].join('\n'),
        );
        if (!result.ok) {
          const blobIssue = result.problems.some((p) => p.kind.startsWith('blob_') || p.kind.startsWith('pack_'));
          throw new CkptError(blobIssue ? 'BLOB_CORRUPT' : 'LOG_CORRUPT', `verify found ${result.problems.length} problem(s)`, {
            problems: result.problems.length,
          });
        }
      },
    },
    {
      use: 'stats',
      reads: true,
      description: 'bytes recorded vs bytes on disk, per workspace and session',
      run: async (_args, ctx, out) => {
        const store = await ctx.store();
        const stats = await storeStats(store.ctx);
        out.result(stats, (s) =>
          [
            `store: ${s.store.blobs} blob(s) in ${formatBytes(s.store.storedBytes)} on disk, ${formatBytes(s.store.unreferencedBytes)} not referenced (gc)`,
            ...s.workspaces.flatMap((w) => [
              `${pc.bold(w.root ?? w.id)}: ${sizeLine(w)}`,
              ...w.sessions.map((x) => `  ${x.id}: ${sizeLine(x)}${x.prunedBefore ? pc.dim(` (pruned before @${x.prunedBefore})`) : ''}`),
            ]),
          ].join('\n'),
        );
      },
    },
  ]);
}

export function sizeLine(s: SizeReport): string {
  return `${formatBytes(s.logicalBytes)} recorded in ${s.captures} capture(s) -> ${formatBytes(s.uniqueBytes)} distinct (${s.blobs} blobs) -> ${formatBytes(s.storedBytes)} on disk`;
}

function problemLine(p: VerifyProblem): string {
  const where = 'session' in p && p.session ? ` [${p.workspace}/${p.session}]` : 'workspace' in p ? ` [${p.workspace}]` : '';
  const what = 'message' in p ? p.message : p.kind === 'blob_missing' ? `blob ${p.blob} is missing (${p.source}${p.seq ? ` @${p.seq}` : ''})` : p.kind === 'restore_interrupted' ? `restore ${p.id} to ${p.to} was interrupted (@${p.seq})` : '';
  return `  ${pc.red(p.kind)}${where} ${what}`;
}

function parseCount(text: string, flag: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text)) throw invalidValue(flag, text, `${flag} must be a whole number >= 1, got ${JSON.stringify(text)}`);
  return Number(text);
}

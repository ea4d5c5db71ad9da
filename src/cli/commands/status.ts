// `ckpt status` (DESIGN §9): the workspace and session in force, the current turn, captures not yet
// settled, and what changed since ckpt last recorded it. Read-only. Before the workspace has any
// session (and none was named) it says so with the next step and exits 0: `{"workspace",
// "session":null,"next"}` (DESIGN §10 "Short session ids").
import { pc } from '../colors.js';
import { invalidValue, pathText, relativeTime, shortSessionId } from '../../index.js';
import type { CommandSpec } from '../command-table.js';
import { commandHint } from '../hint.js';

export const statusCommand: CommandSpec = {
  use: 'status',
  reads: true,
  description: 'workspace, session and turn in force; unsettled captures; files changed since ckpt last recorded them',
  options: [['--limit <n>', 'list at most this many changed paths', '20']],
  run: async ([opts], ctx, out) => {
    const { limit } = opts as { limit: string };
    if (!/^(0|[1-9][0-9]{0,8})$/.test(limit)) throw invalidValue('--limit', limit, `--limit must be a non-negative integer, got ${JSON.stringify(limit)}`, { limit });
    const { root, workspace: ws } = await ctx.knownWorkspace();
    if (ctx.flags.session === undefined && (!ws || (await ws.list()).length === 0)) {
      const next = commandHint(ctx, ['session', 'new', '--title', 'my task']);
      const init = commandHint(ctx, ['init', 'claude']);
      const store = (await ctx.store()).dir;
      out.result({ workspace: root, session: null, store, next }, (r) =>
        [
          `workspace ${r.workspace}`,
          `no session yet in the store ${r.store}: ckpt has recorded nothing here (or in another store: --store, $CKPT_STORE or $CKPT_HOME).`,
          `  start one by hand:        ${r.next}`,
          `  or let your agent do it:  ${init}  (then each prompt starts a turn)`,
        ].join('\n'),
      );
      return;
    }
    const session = await ctx.session();
    const [status, meta] = await Promise.all([session.status({ limit: Number(limit) }), session.metadata()]);
    out.result(status, (s) => {
      const lines = [
        `workspace ${s.workspace}`,
        `session   ${pc.bold(shortSessionId(s.session))}${meta.title ? ` "${meta.title}"` : ''}  ${pc.dim(s.session)}`,
        `turn      ${s.turn}${s.lastCapture ? `, last capture ${pc.bold(s.lastCapture.tag)} ${pc.dim(relativeTime(s.lastCapture.at))}` : ', no captures yet'}`,
      ];
      if (s.continues) lines.push(s.continues.missing ? `continues session ${s.continues.session} (removed)` : `continues session ${s.continues.session}: its ${s.continues.turns} turn(s) are there (ckpt log --session ${s.continues.session})`);
      if (s.forkedFrom) lines.push(`fork of ${s.forkedFrom.session} at @${s.forkedFrom.seq}${s.forkedFrom.differs > 0 ? `: ${s.forkedFrom.differs} path(s) differed from the fork point when it was made (restore ${s.forkedFrom.tag ?? `@${s.forkedFrom.seq}`} puts them back)` : ''}`);
      if (s.unsettled.length) lines.push(pc.yellow(`${s.unsettled.length} captured path(s) not settled:`), ...s.unsettled.map((p) => `  ${pathText(p)}`));
      const scanHint = commandHint(ctx, ['scan'], { session: ctx.flags.session !== undefined ? s.session : undefined });
      if (s.changed.count === 0) lines.push(s.baseline ? 'no changes since ckpt last recorded the workspace' : `no changes to the paths ckpt recorded (no scan baseline yet; record one with: ${scanHint})`);
      else {
        lines.push(`${s.changed.count} path(s) changed since ckpt last recorded them${s.baseline ? '' : ' (only recorded paths checked: no scan baseline yet)'}:`);
        lines.push(...s.changed.paths.map((p) => `  ${pathText(p)}`));
        if (s.changed.count > s.changed.paths.length) lines.push(pc.dim(`  … and ${s.changed.count - s.changed.paths.length} more (--limit)`));
        lines.push(pc.dim(`record them with: ${scanHint}`));
      }
      return lines.join('\n');
    });
  },
};

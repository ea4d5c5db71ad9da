// `ckpt session new|list|show|fork|rm` (DESIGN §9).
import type { Command } from 'commander';
import pc from 'picocolors';
import { resolveTagSeq, sessionSize, type SessionMetadata } from '../../index.js';
import { action } from '../action.js';
import { sizeLine } from './maintenance.js';

export function registerSessionCommands(program: Command): void {
  const session = program.command('session').description('create, list, inspect, fork and remove sessions');

  session
    .command('new')
    .description('start a new session in the workspace')
    .option('--title <title>', 'a title for people')
    .option('--id <id>', 'use this id instead of a generated one')
    .action(
      action(async ([opts], ctx, out) => {
        const { title, id } = opts as { title?: string; id?: string };
        const ws = await ctx.workspace();
        const created = await ws.create({ title, id });
        const meta = await created.metadata();
        out.result({ session: meta }, (r) => `created session ${pc.bold(r.session.id)}${r.session.title ? ` "${r.session.title}"` : ''} in ${r.session.workspace}`);
      }),
    );

  session
    .command('list')
    .description("list the workspace's sessions, newest first")
    .action(
      action(async (_args, ctx, out) => {
        const sessions = await (await ctx.workspace()).list();
        out.result({ sessions }, (r) => (r.sessions.length === 0 ? 'no sessions in this workspace' : r.sessions.map(line).join('\n')));
      }),
    );

  session
    .command('show [id]')
    .description('show one session (default: --session or the newest)')
    .action(
      action(async ([id], ctx, out) => {
        const s = await ctx.session(id as string | undefined);
        const meta = await s.metadata();
        const events = await s.events();
        const turns = events.filter((e) => e.type === 'turn').length;
        const captures = events.filter((e) => e.type === 'capture').length;
        const { id: _id, ...size } = await sessionSize(s);
        out.result({ session: meta, turns, captures, size }, (r) =>
          [
            line(r.session),
            `  kind ${r.session.kind}${r.session.parent ? `, parent ${r.session.parent}` : ''}`,
            `  ${r.turns} turns, ${r.captures} captures, ${r.session.eventCount} events`,
            `  ${sizeLine(r.size)}`,
          ].join('\n'),
        );
      }),
    );

  session
    .command('fork [id]')
    .description('fork a session at a tag (default: its end); history is shared, never copied')
    .option('--at <tag>', 'fork at this tag (N, N.K or @S)')
    .option('--title <title>', 'title of the fork')
    .action(
      action(async ([id, opts], ctx, out) => {
        const { at, title } = opts as { at?: string; title?: string };
        const parent = await ctx.session(id as string | undefined);
        const atSeq = at === undefined ? undefined : await resolveTagSeq(await parent.events(), at);
        const ws = await ctx.workspace();
        const fork = await ws.fork(parent.id, { atSeq, title });
        const meta = await fork.metadata();
        out.result({ session: meta }, (r) => `forked ${r.session.parent} at @${r.session.forkedFrom?.seq} into ${pc.bold(r.session.id)}`);
      }),
    );

  session
    .command('rm <id>')
    .description('remove a session (its content is freed by the next gc)')
    .action(
      action(async ([id], ctx, out) => {
        await (await ctx.workspace()).remove(id as string);
        out.result({ removed: id as string }, (r) => `removed session ${r.removed}`);
      }),
    );
}

function line(m: SessionMetadata): string {
  return `${pc.bold(m.id)}  ${m.kind.padEnd(5)}  ${m.updatedAt}  ${m.eventCount} events${m.title ? `  ${m.title}` : ''}`;
}

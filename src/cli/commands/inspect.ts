// `ckpt conflicts`, `ckpt owner PATH`, `ckpt workspace list|rm` (issue 15): who wrote what across the
// sessions of a workspace, and the workspaces a store knows.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { pc } from '../colors.js';
import { CkptError, earliestRestorableTag, formatShow, locateWorkspace, pathText, workspaceConflicts } from '../../index.js';
import { addCommands } from '../command-table.js';
import { colorsFor } from '../colors.js';
import { commandHint } from '../hint.js';

export function registerInspectCommands(program: Command): void {
  addCommands(program, [
    {
      use: 'show <tag>',
      tags: ['tag'],
      reads: true,
      description: 'what a tag names: its position, turn and prompt, the checkpoint there, what a restore to it would consider',
      run: async ([tag], ctx, out) => {
        const session = await ctx.session();
        const info = await session.show(tag as string);
        const earliestTag = earliestRestorableTag(await session.events());
        out.result({ ...info, ...(earliestTag !== undefined ? { earliestTag } : {}) }, (r) =>
          formatShow(r, { style: colorsFor(ctx.io.stdout, ctx.io.env), restoreHint: commandHint(ctx, ['restore', r.tag, '--dry-run'], { session: ctx.flags.session !== undefined ? session.id : undefined }) }),
        );
      },
    },
    {
      use: 'cat <tag> <path>',
      tags: ['tag'],
      reads: true,
      description: "a file's content at a tag (from the records of every session of the workspace), on stdout",
      run: async ([tag, path], ctx, out) => {
        const file = await (await ctx.session()).readFile(tag as string, path as string, { cwd: ctx.io.cwd });
        const { content, ...meta } = file;
        if (ctx.flags.json) {
          out.result({ ...meta, ...(content ? { content: content.toString('base64'), encoding: 'base64' } : {}) }, () => '');
          return;
        }
        if (file.state === 'file' && content) ctx.io.stdout.write(content);
        else if (file.state === 'symlink') ctx.io.stdout.write(`${file.target ?? ''}\n`);
        else throw new CkptError('NOT_FOUND', `${pathText(file.path)} ${notAFile(file.state)} at ${file.tag}${file.why ? ` (${file.why})` : ''}`, { path: file.path, state: file.state });
      },
    },
    {
      use: 'conflicts',
      reads: true,
      description: 'paths one session found written by another session of the workspace since it recorded them',
      run: async (_args, ctx, out) => {
        const ws = (await ctx.knownWorkspace()).workspace;
        const conflicts = ctx.flags.session ? await (await ctx.session()).conflicts() : ws ? await workspaceConflicts(ws) : [];
        out.result({ conflicts }, (r) =>
          r.conflicts.length === 0
            ? 'no conflicts'
            : r.conflicts.map((c) => `${c.at}  ${pc.bold(pathText(c.path))}  session ${c.session} found a write by ${c.otherSession}`).join('\n'),
        );
      },
    },
    {
      use: 'owner <path>',
      reads: true,
      description: 'which session of the workspace last wrote a path',
      run: async ([path], ctx, out) => {
        const report = await (await ctx.session()).owner(path as string, { cwd: ctx.io.cwd });
        out.result(report, (r) => (r.owner ? `${pathText(r.path)}: last written by session ${r.owner.session} at ${r.owner.at}` : `${pathText(r.path)}: no session recorded writing it`));
      },
    },
  ]);

  addCommands(program.command('workspace').description('the workspaces the store knows'), [
    {
      use: 'list',
      aliases: ['ls'],
      reads: true,
      description: 'every workspace in the store',
      run: async (_args, ctx, out) => {
        const workspaces = await (await ctx.store()).listWorkspaces();
        out.result({ workspaces }, (r) => r.workspaces.map((w) => `${w.id}  ${w.root}`).join('\n') || 'no workspaces');
      },
    },
    {
      use: 'rm [dir]',
      aliases: ['remove'],
      existing: true,
      description:
        'drop a workspace (default: --workspace or the workspace of the current folder; or a root or id from `workspace list`): every session, the scan baseline and the owner index; gc frees the content',
      options: [
        ['--yes', 'really remove it (required: this deletes the whole history of the workspace)'],
        ['--other-machine', "remove another machine's workspace of a shared store (a machine that is gone)"],
      ],
      run: async ([dir, opts], ctx, out) => {
        const store = await ctx.store();
        // Without a folder: the workspace this folder belongs to, found upward as every command finds it.
        const given = (dir as string | undefined) ?? ctx.flags.workspace ?? (await locateWorkspace(store, ctx.io.cwd)).root;
        const target = /^[0-9a-f]{20}$/.test(given) ? given : resolve(ctx.io.cwd, given);
        if (!(opts as { yes?: boolean }).yes) {
          throw new CkptError('INVALID_ARGUMENT', `this removes every session of workspace ${target} and its history; pass --yes to do it`, { workspace: target });
        }
        const removed = await store.removeWorkspace(target, { otherMachine: Boolean((opts as { otherMachine?: boolean }).otherMachine) });
        out.result({ removed }, (r) => `removed workspace ${r.removed.root} (${r.removed.sessions} session(s)); free its content with: ${commandHint(ctx, ['gc'])} (after the 15m grace period, or with --grace 0s now)`);
      },
    },
  ]);
}

/** What `cat` found at a tag instead of a file, in words (it printed the bare state: "src at 1: dir"). */
function notAFile(state: string): string {
  if (state === 'absent') return 'did not exist';
  if (state === 'dir') return 'was a folder (cat prints files; ckpt export SESSION TAG DIR writes a whole tree)';
  if (state === 'skipped') return 'was not recorded';
  return `was not a file (${state})`;
}

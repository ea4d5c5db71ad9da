// `ckpt session new|list|show|fork|rm` (DESIGN §9).
import type { Command } from 'commander';
import { pc } from '../colors.js';
import { CkptError, invalidValue, isCkptError, relativeTime, sessionSize, shortSessionId, type SessionFilter, type SessionTreeNode, type SessionInfo, type SessionMetadata, type Session } from '../../index.js';
import { askYesNo } from '../ask.js';
import { progressBar } from '../progress.js';
import { addCommands, type OptionSpec } from '../command-table.js';
import { CliExit, EXIT_CANCELLED } from '../exit.js';
import { commandHint } from '../hint.js';
import { sizeLine } from './maintenance.js';
import { counted } from '../counted.js';

export function registerSessionCommands(program: Command): void {
  const session = program.command('session').description('create, list, inspect, fork and remove sessions');

  addCommands(session, [
    {
      use: 'new',
      aliases: ['create'],
      description: 'start a new session in the workspace',
      options: [
        ['--title <title>', 'a title for people'],
        ['--id <id>', 'use this id instead of a generated one'],
        ['--parent <id>', 'make it a child session (a sub-agent run) of this session'],
        ...INFO_OPTIONS,
      ],
      run: async ([opts], ctx, out) => {
        const { title, id, parent, ...rest } = opts as { title?: string; id?: string; parent?: string } & Record<string, string>;
        const ws = await ctx.workspace();
        const parentId = parent === undefined ? undefined : (await ctx.session(parent)).id; // a unique prefix names it too
        // The workspace's first session stores every file git does not ignore (its baseline): in a big
        // folder that takes a while, so a terminal sees it progress, and every caller is told (a
        // newcomer probe: `session new` in /tmp stored 716 MB saying one line).
        let baseline: { scanned: number; stored: number; ms: number } | undefined;
        const bar = await progressBar(ctx.io, out.json);
        let created;
        try {
          created = await ws.create({ title, id, parent: parentId, info: infoFrom(rest), onProgress: bar.update, onBaseline: (b) => (baseline = b) });
        } finally {
          bar.stop();
        }
        const meta = await created.metadata();
        out.result({ session: meta, ...(baseline ? { baseline } : {}) }, (r) =>
          [
            `created session ${pc.bold(shortSessionId(r.session.id))}${r.session.title ? ` "${r.session.title}"` : ''} in ${r.session.workspace}  ${pc.dim(r.session.id)}`,
            ...(r.baseline
              ? [pc.dim(`recorded the workspace's baseline: ${r.baseline.scanned} file(s) looked at, ${r.baseline.stored} stored, in ${r.baseline.ms} ms (what git ignores is left out; git's unchanged files are named, not copied)`)]
              : []),
          ].join('\n'),
        );
      },
    },
    {
      use: 'list',
      aliases: ['ls'],
      reads: true,
      description: "list the workspace's sessions, newest first (the options filter: every one given must match)",
      options: [
        ['--kind <kind>', 'root, fork or child'],
        ['--resumable', 'only sessions a user can resume: not a child run, not ended'],
        ['--parent <id>', 'children and forks of this session'],
        ...INFO_OPTIONS,
      ],
      run: async ([opts], ctx, out) => {
        const { kind, parent, resumable, ...rest } = opts as { kind?: SessionFilter['kind']; parent?: string; resumable?: boolean } & Record<string, string>;
        if (kind !== undefined && !['root', 'fork', 'child'].includes(kind)) throw invalidValue('--kind', kind, `--kind must be root, fork or child, not ${JSON.stringify(kind)}`);
        const ws = (await ctx.knownWorkspace()).workspace;
        const sessions = ws ? await ws.list({ kind, parent, ...(resumable ? { resumable: true } : {}), ...infoFrom(rest) }) : [];
        out.result({ sessions }, (r) => (r.sessions.length === 0 ? 'no sessions in this workspace' : r.sessions.map(line).join('\n')));
      },
    },
    {
      use: 'children <id>',
      reads: true,
      description: 'the child sessions and forks of a session',
      run: async ([id], ctx, out) => {
        const parent = await ctx.session(id as string);
        const sessions = await (await ctx.workspace()).list({ parent: parent.id });
        out.result({ sessions }, (r) => (r.sessions.length === 0 ? `session ${parent.id} has no children` : r.sessions.map(line).join('\n')));
      },
    },
    {
      use: 'tree',
      reads: true,
      description: "the workspace's sessions under their parents (children and forks)",
      run: async (_args, ctx, out) => {
        const ws = (await ctx.knownWorkspace()).workspace;
        const tree = ws ? await ws.tree() : [];
        out.result({ tree }, (r) => (r.tree.length === 0 ? 'no sessions in this workspace' : treeLines(r.tree, '').join('\n')));
      },
    },
    {
      use: 'end [id]',
      existing: true,
      description: "mark a session ended (the agent's session closed); a later turn resumes it",
      options: [['--reason <text>', 'why it ended']],
      run: async ([id, opts], ctx, out) => {
        const meta = await (await ctx.session(id as string | undefined)).end((opts as { reason?: string }).reason);
        out.result({ session: meta }, (r) => `session ${r.session.id} ended`);
      },
    },
    {
      use: 'title <id> <title>',
      existing: true,
      description: 'retitle a session (it keeps its place in the list)',
      run: async ([id, title], ctx, out) => {
        const s = await ctx.session(id as string);
        const meta = await s.setTitle(title as string);
        out.result({ session: meta }, (r) => `session ${r.session.id} is now "${r.session.title}"`);
      },
    },
    {
      use: 'show [id]',
      reads: true,
      description: 'show one session (default: --session or the newest)',
      run: async ([id], ctx, out) => {
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
            `  ${counted(r.turns, 'turn')}, ${counted(r.captures, 'capture')}, ${counted(r.session.eventCount, 'event')}`,
            `  ${sizeLine(r.size)}`,
          ].join('\n'),
        );
      },
    },
    {
      use: 'fork [id]',
      tags: ['at'],
      existing: true,
      description: 'fork a session at a tag (default: its end); history is shared, never copied',
      options: [
        ['--at <tag>', 'fork at this tag (N, N.K or @S)'],
        ['--title <title>', 'title of the fork'],
        ['--from-workspace <id>', "fork a session of another workspace of the store (an id from 'ckpt workspace list', e.g. another machine's)"],
      ],
      run: async ([id, opts], ctx, out) => {
        const { at, title, fromWorkspace } = opts as { at?: string; title?: string; fromWorkspace?: string };
        // What is forked is looked up before this folder's workspace is opened (registered on first use):
        // a fork of nothing registers nothing, nor makes a default store that is not there.
        let ws, fork;
        if (fromWorkspace !== undefined) {
          if (id === undefined) throw new CkptError('INVALID_ARGUMENT', '--from-workspace needs the id of the session to fork');
          await (await ctx.store()).openWorkspaceById(fromWorkspace); // NOT_FOUND for an id the store does not know
          ws = await ctx.workspace();
          fork = await ws.fork(id as string, { title, fromWorkspace, ...(at !== undefined ? { atTag: at } : {}) });
        } else {
          const parent = await ctx.session(id as string | undefined);
          ws = await ctx.workspace();
          // By tag: a fork at `N.K` is placed as restore places it (store.ts).
          fork = await ws.fork(parent.id, { title, ...(at !== undefined ? { atTag: at } : {}) });
        }
        const meta = await fork.metadata();
        const hint = commandHint(ctx, ['--session', shortSessionId(meta.forkedFrom?.session ?? ''), 'log']);
        // The files are left as they are; the fork's first record says what differs from the fork point.
        const point = meta.forkedFrom?.seq ?? 0;
        const record = (await fork.checkpoints()).find((c) => c.tool === 'fork' && c.seq > point);
        const where = at ?? `@${point}`;
        // A fork of another workspace's session: this folder is not compared with it (nothing recorded), and
        // the original is named in its own workspace, not here.
        const otherWs = meta.forkedFrom?.workspace !== undefined && meta.forkedFrom.workspace !== ws.id ? meta.forkedFrom.workspace : undefined;
        const otherRoot = otherWs === undefined ? undefined : (await (await ctx.store()).listWorkspaces()).find((w) => w.id === otherWs)?.root;
        out.result({ session: meta, workspace: record ? { left: true, differs: record.files.length, tag: record.tag } : { left: true, differs: 0 } }, (r) =>
          [
            `forked ${shortSessionId(r.session.forkedFrom?.session ?? '')} at ${where} into ${pc.bold(shortSessionId(r.session.id))}  ${pc.dim(r.session.id)}`,
            otherWs !== undefined
              ? `the files here were left as they are (the history is of workspace ${otherWs}${otherRoot ? ` ${otherRoot}` : ''}): ` +
                `ckpt restore TAG --force puts back the paths recorded after TAG; ckpt export ${shortSessionId(r.session.forkedFrom?.session ?? '')} ${where} DIR writes the whole tree of ${where} into a new folder`
              : record
                ? `the files were left as they are: ${record.files.length} path(s) differ from ${where} (later work of the parent or other sessions, recorded in the fork as ${record.tag}); to put them back: ckpt --session ${shortSessionId(r.session.id)} restore ${where}`
                : `the workspace is as it was at ${where}`,
            pc.yellow(`the fork ${shortSessionId(r.session.id)} is now the default session: commands without --session act on it`),
            pc.yellow(
              otherWs !== undefined
                ? `(the default is the session updated last). The original, ${shortSessionId(r.session.forkedFrom?.session ?? '')}, stays in workspace ${otherWs}`
                : `(the default is the session updated last). To work on the original, name it: ${hint}`,
            ),
          ].join('\n'),
        );
      },
    },
    {
      use: 'rm <id>',
      aliases: ['remove'],
      existing: true,
      description: 'remove a session (its content is freed by the next gc); on a terminal it asks first, unless --yes',
      options: [['--yes', 'remove without asking (scripts never are asked: stdin not a terminal)']],
      run: async ([id, opts], ctx, out) => {
        let session: Session;
        try {
          session = await ctx.session(id as string); // a unique prefix names the session too
        } catch (err) {
          // No such session — but a removal killed after its commit point may have left its folder:
          // removing by the exact id finishes that (and fails SESSION_NOT_FOUND all the same). Only in a
          // workspace the store knows: an unknown one is not registered (nor a missing store made) to fail.
          const known = isCkptError(err, 'SESSION_NOT_FOUND') ? (await ctx.knownWorkspace()).workspace : undefined;
          if (known) await known.remove(id as string).catch(() => undefined);
          throw err;
        }
        const workspace = await ctx.workspace(); // known: the session is in it
        const full = session.id;
        if (out.canAsk && !(opts as { yes?: boolean }).yes) {
          const title = (await session.metadata().catch(() => undefined))?.title;
          if (!(await askYesNo(ctx.io, `Remove session ${full}${title ? ` "${title}"` : ''} and its history (its restores go with it)?`))) {
            out.result({ cancelled: true, session: full }, () => 'cancelled, nothing removed');
            throw new CliExit(EXIT_CANCELLED);
          }
        }
        // Its captures stay on the other sessions' timelines (DESIGN §10 "A removed session's captures
        // stay"): their restores still put back what it wrote.
        await workspace.remove(full);
        out.result({ removed: full }, (r) => `removed session ${r.removed}`);
      },
    },
  ]);
}

/** Flags for the descriptive session fields (SESSION_INFO_FIELDS), on `session new` and `session list`. */
const INFO_FLAGS: [flag: string, field: keyof SessionInfo, what: string][] = [
  ['--agent <name>', 'agent', 'the agent (claude, gemini, …)'],
  ['--external-id <id>', 'externalId', "the agent's own session id"],
  ['--model <name>', 'model', 'the model'],
  ['--provider <name>', 'provider', 'the model provider'],
  ['--cwd <dir>', 'cwd', "the agent's working folder"],
  ['--transcript <path>', 'transcriptPath', "the agent's transcript file"],
  ['--task <id>', 'taskId', 'the task this run works on'],
  ['--spawned-from <ref>', 'spawnedFrom', 'what started this run (e.g. a tool call id)'],
];

const INFO_OPTIONS: OptionSpec[] = INFO_FLAGS.map(([flag, , what]) => [flag, what]);

function infoFrom(opts: Record<string, string | undefined>): SessionInfo {
  const info: SessionInfo = {};
  for (const [, field] of INFO_FLAGS) if (opts[field] !== undefined) info[field] = opts[field];
  return info;
}

function treeLines(nodes: readonly SessionTreeNode[], indent: string): string[] {
  return nodes.flatMap((n) => [`${indent}${line(n.session)}`, ...treeLines(n.children, `${indent}  `)]);
}

function line(m: SessionMetadata): string {
  const short = shortSessionId(m.id);
  const id = short === m.id ? '' : `  ${pc.dim(m.id)}`;
  // "ended": why `session list --resumable` leaves it out (a later turn resumes it).
  return `${pc.bold(short)}  ${m.kind.padEnd(5)}  ${relativeTime(m.updatedAt).padEnd(11)}  ${counted(m.eventCount, 'event')}${m.title ? `  ${m.title}` : ''}${m.endedAt ? pc.dim('  (ended)') : ''}${id}`;
}

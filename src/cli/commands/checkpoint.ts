// `ckpt turn|capture|settle|scan|log|diff` (DESIGN §9): recording checkpoints and reading them back
// (`scan` is its own module, scan.ts: the lean scan entry loads it without the others).
import { relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { pc } from '../colors.js';
import { type DiffChange, earliestRestorableTag, formatLog, formatMode, listCheckpoints, listLifecycle, listRewinds, listTurns, pathText, publicImage, scan, scanViaDaemon, shortSessionId } from '../../index.js';
import { colorPatch, colorsFor, type Colors } from '../colors.js';
import { addCommands } from '../command-table.js';
import { parseCount, scanCommand } from './scan.js';

export function registerCheckpointCommands(program: Command): void {
  addCommands(program, [
    {
      use: 'turn',
      existing: true,
      description: 'start the next turn (call when the user sends a message)',
      options: [
        ['--message-count <n>', "messages in the agent's transcript now (returned by rewind)"],
        ['--text <text>', 'the user message, for people reading the log'],
      ],
      run: async ([opts], ctx, out) => {
        const { messageCount, text } = opts as { messageCount?: string; text?: string };
        // A bad value is a usage error before any look-up (not "no session", exit 3, as it was).
        const count = messageCount === undefined ? undefined : parseCount(messageCount);
        const session = await ctx.session();
        const store = await ctx.store();
        const r = await session.turn({
          messageCount: count,
          text,
          // What changed outside the agent first: through the store's daemon when one runs, else here.
          scan: async (tool) => (await scanViaDaemon(store, session, tool, ctx.io.env)) ?? (await scan(session, { tool })),
        });
        out.result({ turn: r.turn, tag: r.tag, ...(r.outside ? { outside: r.outside } : {}), ...(r.warnings ? { warnings: r.warnings } : {}) }, (v) =>
          v.outside ? `recorded ${v.outside.files} path(s) changed outside the agent as ${pc.bold(v.outside.tag)}\nturn ${pc.bold(String(v.turn))} started` : `turn ${pc.bold(String(v.turn))} started`,
        );
      },
    },
    {
      use: 'capture <paths...>',
      existing: true,
      description: 'record the before-images of paths a tool is about to change',
      options: [['--tool <name>', 'the tool about to act', 'capture']],
      run: async ([paths, opts], ctx, out) => {
        const session = await ctx.session();
        const r = await session.capture(paths as string[], { tool: (opts as { tool: string }).tool, cwd: ctx.io.cwd });
        const body = { tag: r.tag, files: r.files.map(publicImage), ...(r.disabled ? { disabled: true } : {}), ...(r.conflicts ? { conflicts: r.conflicts } : {}), ...(r.warnings ? { warnings: r.warnings } : {}) };
        out.result(body, (v) =>
          v.tag === null
            ? 'capture is disabled (CKPT_DISABLE): nothing recorded'
            : [`captured ${pc.bold(v.tag)}`, ...v.files.map(fileLine), ...(v.conflicts ?? []).map((c) => pc.yellow(`conflict: ${pathText(c.path)} was written by session ${c.otherSession} since this session recorded it`))].join('\n'),
        );
      },
    },
    {
      use: 'settle <paths...>',
      tags: ['tag'],
      existing: true,
      description: 'record the after-state of paths a tool has written',
      options: [['--tag <tag>', 'the capture these paths settle (default: the last one)']],
      run: async ([paths, opts], ctx, out) => {
        const session = await ctx.session();
        const r = await session.settle(paths as string[], { tag: (opts as { tag?: string }).tag, cwd: ctx.io.cwd });
        // A path the capture did not record is not settled (the library drops it: a hook's race): a
        // person who typed it is told (a newcomer probe: a typo read "settled 0 path(s)" and nothing more).
        const settled = r.files.map((f) => f.path);
        const unsettled = r.disabled ? [] : (paths as string[]).filter((p) => {
          const rel = relative(session.workspaceRoot, resolve(ctx.io.cwd, p)).split(sep).join('/');
          return !settled.some((f) => f === rel || f.startsWith(`${rel}/`));
        });
        const notice = unsettled.length > 0 ? [`not settled: ${unsettled.map((p) => pathText(p)).join(', ')} — ${r.tag ? `capture ${r.tag}` : 'no capture'} did not record ${unsettled.length > 1 ? 'them' : 'it'} (capture first: ckpt capture PATH)`] : [];
        const warnings = [...(r.warnings ?? []), ...notice];
        const body = { tag: r.tag, files: r.files.map(publicImage), ...(r.disabled ? { disabled: true } : {}), ...(warnings.length > 0 ? { warnings } : {}) };
        out.result(body, (v) => (v.disabled ? 'capture is disabled (CKPT_DISABLE): nothing recorded' : `settled ${v.files.length} path(s)${v.tag ? ` of ${v.tag}` : ''}`));
      },
    },
    scanCommand,
    {
      use: 'log',
      reads: true,
      description: "the session's turns and checkpoints (tags to restore to), newest last",
      options: [
        ['--files', 'list every file of every checkpoint (default: the first few)'],
        ['--all', "the checkpoints of every session of the workspace, merged by time (each names its session)"],
      ],
      run: async ([opts], ctx, out) => {
        if ((opts as { all?: boolean }).all) {
          const ws = (await ctx.knownWorkspace()).workspace;
          const checkpoints = [];
          if (ws) for (const meta of await ws.list()) for (const c of listCheckpoints(await (await ws.get(meta.id)).events())) checkpoints.push({ session: meta.id, ...c });
          checkpoints.sort((a, b) => a.at.localeCompare(b.at) || a.session.localeCompare(b.session) || a.seq - b.seq);
          out.result({ checkpoints }, (v) =>
            v.checkpoints.length === 0 ? 'no checkpoints yet' : v.checkpoints.map((c) => `${c.at}  ${shortSessionId(c.session)}  ${c.tag.padEnd(7)} ${c.tool.padEnd(10)} ${c.files.map((f) => pathText(f.path)).join(', ')}`).join('\n'),
          );
          return;
        }
        const session = await ctx.session();
        const [events, meta] = await Promise.all([session.events(), session.metadata()]);
        const earliestTag = earliestRestorableTag(events);
        const body = {
          session: session.id,
          workspace: session.workspaceRoot,
          checkpoints: listCheckpoints(events),
          turns: listTurns(events),
          rewinds: listRewinds(events),
          lifecycle: listLifecycle(events),
          ...(earliestTag !== undefined ? { earliestTag } : {}),
          ...(await session.links()),
        };
        const c = colorsFor(ctx.io.stdout, ctx.io.env);
        out.result(body, (v) =>
          [
            `session ${c.bold(shortSessionId(v.session))}${meta.title ? ` "${meta.title}"` : ''} in ${v.workspace}  ${c.dim(v.session)}`,
            formatLog(v, { allFiles: Boolean((opts as { files?: boolean }).files), moreHint: ' (--files)', style: c }),
          ].join('\n'),
        );
      },
    },
    {
      use: 'diff <from> [to]',
      tags: ['from', 'to'],
      reads: true,
      description: 'what changed between two tags (TO defaults to the present workspace)',
      options: [['--patch', 'include a unified patch']],
      run: async ([from, to, opts], ctx, out) => {
        const session = await ctx.session();
        const r = await session.diff(from as string, to as string | undefined, { patch: Boolean((opts as { patch?: boolean }).patch) });
        const body = { changes: r.changes, ...(r.skipped.length ? { skipped: r.skipped } : {}), ...(r.patch !== undefined ? { patch: r.patch } : {}) };
        const c = colorsFor(ctx.io.stdout, ctx.io.env);
        out.result(body, (v) => {
          const lines = v.changes.map((ch) => `${ch.status} ${pathText(ch.path)}  ${ch.link && !ch.type ? linkText(ch.link, c) : ch.binary ? c.dim('binary') : ch.dir ? c.dim('folder') : `${c.green(`+${ch.added}`)} ${c.red(`-${ch.removed}`)}`}${kindText(ch, c)}`);
          if (v.changes.length === 0) lines.push('no changes');
          if (v.patch) lines.push('', colorPatch(v.patch, c));
          return lines.join('\n');
        });
      },
    },
  ]);
}

/** `mode 644 → 755` / `symlink → file`: written as DiffChange carries them in JSON. */
/** A symbolic link's change: its target, not a line of content. */
function linkText(link: NonNullable<DiffChange['link']>, c: Colors): string {
  if (link.from !== undefined && link.to !== undefined) return c.dim(`link to ${pathText(link.from)} → link to ${pathText(link.to)}`);
  return c.dim(`link to ${pathText(link.to ?? link.from ?? '')}`);
}

function kindText(ch: DiffChange, c: Colors): string {
  // A change no capture recorded yet (the diff's look): `restore` would put it back, or refuse it as drift.
  const unrecorded = ch.unrecorded ? `  ${c.dim('(not recorded yet)')}` : '';
  if (ch.type) return `  ${c.yellow(`${ch.type.from} → ${ch.type.to}`)}${unrecorded}`;
  if (ch.mode) return `  ${c.yellow(`mode ${ch.mode.from} → ${ch.mode.to}`)}${unrecorded}`;
  return unrecorded;
}


function fileLine(f: Record<string, unknown>): string {
  const detail = f.state === 'file' ? `${f.bytes} bytes, mode ${formatMode(f.mode as number)}` : f.state === 'symlink' ? `-> ${pathText(String(f.target))}` : f.state === 'skipped' ? `skipped: ${f.why}` : f.state === 'dir' ? 'folder' : 'absent';
  return `  ${pathText(String(f.path))}  ${pc.dim(detail)}`;
}


// The log as people read it (`ckpt log`, `ckpt demo`): turn headers with the user's message,
// checkpoints under their turn with relative local times, long file lists shortened, restores naming
// the tag they went to, rewinds where they happened, pruned and rewound-away entries marked. Pure:
// the caller passes the entries (log.ts), the clock and, for a terminal, the colours.
import type { CheckpointEntry, CheckpointFile, LifecycleEntry, RewindEntry, TurnEntry } from './log.js';
import type { SessionLinks } from './links.js';
import { relativeTime } from './relative-time.js';
import { pathText } from '../format/path-text.js';

export interface LogStyle {
  bold(s: string): string;
  dim(s: string): string;
  yellow(s: string): string;
}

export interface LogTextOptions {
  /** List every file of every checkpoint (default: the first `maxFiles`). */
  allFiles?: boolean;
  maxFiles?: number;
  /** Appended to "… N more" (e.g. ` (--files)`). */
  moreHint?: string;
  now?: number;
  style?: LogStyle;
}

export interface LogEntries {
  turns: readonly TurnEntry[];
  checkpoints: readonly CheckpointEntry[];
  rewinds?: readonly RewindEntry[];
  /** Set when the session was pruned: the earliest tag that still restores. */
  earliestTag?: string;
  /** Agent lifecycle events (compactions, session end), shown where they happened. */
  lifecycle?: readonly LifecycleEntry[];
  /** Where the history continues from (a `/clear`'s previous session, a fork's parent). */
  continues?: SessionLinks['continues'];
  forkedFrom?: SessionLinks['forkedFrom'];
}

const plain: LogStyle = { bold: (s) => s, dim: (s) => s, yellow: (s) => s };

export function formatLog(entries: LogEntries, options: LogTextOptions = {}): string {
  const style = options.style ?? plain;
  const now = options.now ?? Date.now();
  const max = options.allFiles ? Infinity : (options.maxFiles ?? 3);
  const when = (at: string) => style.dim(`· ${relativeTime(at, now)}`);
  const marks = (e: { pruned?: true; rewound?: true }) =>
    (e.pruned ? ` ${style.yellow('[pruned]')}` : '') + (e.rewound ? ` ${style.yellow('[rewound]')}` : '');
  const rows: { seq: number; text: string }[] = [];
  const firstTurnSeq = entries.turns[0]?.seq ?? Infinity;
  const early = entries.checkpoints.find((c) => c.seq < firstTurnSeq);
  if (early) rows.push({ seq: early.seq - 0.5, text: style.bold('before the first turn') });
  for (const t of entries.turns) {
    const text = t.text !== undefined ? `  "${oneLine(t.text)}"` : '';
    rows.push({ seq: t.seq, text: `${style.bold(`turn ${t.turn}`)}${marks(t)}${text}  ${when(t.at)}` });
  }
  const tagWidth = Math.max(3, ...entries.checkpoints.map((c) => c.tag.length));
  const toolWidth = Math.max(4, ...entries.checkpoints.map((c) => Math.min(c.tool.length, 12)));
  for (const c of entries.checkpoints) {
    // An aborted restore changed nothing: its recovery capture's paths say nothing either.
    const what = c.aborted
      ? `${style.bold(`to ${c.restoreTo ?? '?'}`)} ${style.yellow('[aborted: it changed nothing]')}`
      : `${c.restoreTo !== undefined ? `${style.bold(`to ${c.restoreTo}`)} ${style.dim(`(restore ${c.tag} undoes it)`)}: ` : ''}${fileList(c, max, style, options.moreHint ?? '')}`;
    rows.push({ seq: c.seq, text: `  ${style.bold(c.tag.padEnd(tagWidth))}  ${c.tool.slice(0, 12).padEnd(toolWidth)}  ${what}${marks(c)}  ${when(c.at)}` });
  }
  for (const r of entries.rewinds ?? []) rows.push({ seq: r.seq, text: `  ${style.yellow(`⤺ rewound to ${r.to}`)}  ${when(r.at)}` });
  for (const l of entries.lifecycle ?? []) rows.push({ seq: l.seq, text: `  ${style.dim(lifecycleText(l))}  ${when(l.at)}` });
  const head = entries.earliestTag !== undefined ? [style.yellow(`history before tag ${entries.earliestTag} was pruned: ${entries.earliestTag} is the earliest tag that restores`)] : [];
  const c = entries.continues;
  if (c) {
    head.push(c.missing ? `continues session ${c.session} (removed)` : `continues session ${c.session}: its ${c.turns} turn(s) are there (ckpt log --session ${c.session})`);
  }
  const f = entries.forkedFrom;
  if (f) {
    head.push(
      `fork of ${f.session} at @${f.seq}` +
        // `restore TAG` of the record (just before it: the fork point), not `@seq`: a fork at N.K lies after other sessions' captures that `@seq` precedes.
        (f.differs > 0 ? `: ${f.differs} path(s) differed from the fork point when it was made (recorded as ${f.tag}; restore ${f.tag ?? `@${f.seq}`} puts them back)` : ''),
    );
  }
  if (rows.length === 0) return [...head, 'no checkpoints yet'].join('\n');
  return [...head, ...rows.sort((a, b) => a.seq - b.seq).map((r) => r.text)].join('\n');
}

function fileList(c: CheckpointEntry, max: number, style: LogStyle, moreHint: string): string {
  if (c.files.length === 0) return style.dim('(no files)');
  // A rename is one item, at the place of its new name.
  const items = c.files.filter((f) => f.renamedTo === undefined || !c.files.some((g) => g.path === f.renamedTo));
  const shown = items.slice(0, max).map((f) => fileText(f, style));
  const more = items.length - shown.length;
  return shown.join(', ') + (more > 0 ? style.dim(`, … ${more} more${moreHint}`) : '');
}

function fileText(f: CheckpointFile, style: LogStyle): string {
  if (f.renamedFrom !== undefined) return `${pathText(f.renamedFrom)} -> ${pathText(f.path)} ${style.dim('(renamed)')}`;
  const link = f.target !== undefined ? `link to ${pathText(f.target)}` : undefined;
  if (f.state === 'skipped') return `${pathText(f.path)} ${style.dim('(not recorded)')}`;
  if (f.change === 'deleted') return `${pathText(f.path)} ${style.dim(link ? `(deleted ${link})` : '(deleted)')}`;
  if (f.state === 'absent') return `${pathText(f.path)} ${style.dim(link ? `(new ${link})` : '(new)')}`;
  return link ? `${pathText(f.path)} ${style.dim(`(${link})`)}` : pathText(f.path);
}

function lifecycleText(l: LifecycleEntry): string {
  if (l.type === 'agent_compaction') return `⟲ ${l.agent ?? 'the agent'} compacted its context${l.trigger ? ` (${l.trigger})` : ''}`;
  if (l.type === 'compaction') return '⟲ conversation compacted (summary recorded)';
  return `■ session ended${l.reason ? ` (${l.reason})` : ''}`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}

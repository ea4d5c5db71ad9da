// `ckpt show TAG` as people read it (issue 29): what the tag is in words — the start of a turn, just
// before a checkpoint, or just after an event — the user's message of its turn, the checkpoint that
// follows and what it recorded, and what a restore to it would touch. Pure: the caller passes the
// TagInfo (show.ts), the clock and the colours; positions stay available in `--json`.
import type { FileState } from '../format/event.js';
import { relativeTime } from './relative-time.js';
import type { TagInfo } from './show.js';
import { pathText } from '../format/path-text.js';

export interface ShowStyle {
  bold(s: string): string;
  dim(s: string): string;
}

const plain: ShowStyle = { bold: (s) => s, dim: (s) => s };

export interface ShowTextOptions {
  now?: number;
  style?: ShowStyle;
  /** The command that previews a restore to the tag, as the caller's user runs it. */
  restoreHint?: string;
}

export function formatShow(info: TagInfo & { earliestTag?: string }, options: ShowTextOptions = {}): string {
  const style = options.style ?? plain;
  const now = options.now ?? Date.now();
  const ago = (at: string) => relativeTime(at, now);
  const t = info.turn;
  const prompt = t.text !== undefined ? ` "${oneLine(t.text, 80)}"` : '';
  const inTurn = t.turn === 0 ? 'before the first turn' : `in turn ${t.turn}${prompt}`;
  const what = /^\d+$/.test(info.tag) && t.turn !== 0
    ? `the start of turn ${t.turn}${prompt}${t.at ? `, sent ${ago(t.at)}` : ''}`
    : info.tag === '0' || /^0(\.0)?$/.test(info.tag)
      ? 'the start of the session, before the first turn'
      : /^\d+\.\d+$/.test(info.tag)
        ? `just before checkpoint ${info.tag}, ${inTurn}`
        : `just after event ${info.position}${info.event ? ` (${info.event.type.replace(/_/g, ' ')}, ${ago(info.event.at)})` : ''}, ${inTurn}`;
  const lines = [`${style.bold(`tag ${info.tag}`)}: ${what}  ${style.dim(`(event ${info.position} of ${info.lastSeq})`)}`];
  const n = info.next;
  if (n) {
    const scanned = n.reason === 'scan' || n.tool === 'scan' || n.tool === 'baseline';
    const by = scanned
      ? `a workspace scan${n.tool === 'scan' || n.tool === 'baseline' ? '' : ` after ${n.tool}`}`
      : n.tool === 'restore'
        ? 'a restore (what it overwrote)'
        : `before ${n.tool}`;
    const files = n.files.map((f) => `${pathText(f.path)} ${style.dim(`(${stateText(f.state, f.target, f.why)})`)}`);
    const shown = files.length > 6 ? [...files.slice(0, 6), style.dim(`… ${files.length - 6} more`)] : files;
    lines.push(`  next checkpoint ${style.bold(n.tag)}, ${by}, ${ago(n.at)}, recorded: ${shown.length ? shown.join(', ') : 'no files'}`);
  } else lines.push('  nothing was recorded after it');
  lines.push(
    info.capturesAfter === 0
      ? `  restoring to ${info.tag} would change nothing: no checkpoint follows it`
      : `  restoring to ${info.tag} would put ${info.pathsAfter === 1 ? 'the 1 path' : `the ${info.pathsAfter} paths`} recorded after it ${style.dim(`(by ${info.capturesAfter} checkpoint${info.capturesAfter === 1 ? '' : 's'})`)} back as they were then; ${options.restoreHint ?? `ckpt restore ${info.tag} --dry-run`} shows the plan`,
  );
  if (info.earliestTag !== undefined) lines.push(`  history was pruned: ${info.earliestTag} is the earliest tag that still restores`);
  return lines.join('\n');
}

/** A recorded before-state in words. */
function stateText(state: FileState, target?: string, why?: string): string {
  switch (state) {
    case 'absent':
      return 'not there yet';
    case 'file':
      return 'as it was';
    case 'dir':
      return 'a folder';
    case 'symlink':
      return `a link to ${target === undefined ? '?' : pathText(target)}`;
    default:
      return `not recorded${why ? `: ${why}` : ''}`;
  }
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

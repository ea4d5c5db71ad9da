// Tags name positions in a session's history (DESIGN §2): `N` (start of turn N), `N.K` (just before
// the K-th capture of turn N; `N.0` = `N`) and `@S` (just after the event with seq S). Pure parsing,
// formatting and numeric ordering; resolving a tag against a log lives in session/positions.ts.
import { CkptError, invalidValue } from '../errors.js';

export type Tag =
  | { kind: 'turn'; turn: number; k: number } // `N` is { turn: N, k: 0 }
  | { kind: 'seq'; seq: number };

const TURN_TAG = /^(0|[1-9][0-9]{0,8})(?:\.(0|[1-9][0-9]{0,8}))?$/;
const SEQ_TAG = /^@(0|[1-9][0-9]{0,14})$/;

/** Parses a tag; anything else is INVALID_ARGUMENT naming the value (and `option`, where it was given: `<tag>`, `--at`). */
export function parseTag(text: string, option = 'tag'): Tag {
  const turn = TURN_TAG.exec(text);
  if (turn) return { kind: 'turn', turn: Number(turn[1]), k: turn[2] === undefined ? 0 : Number(turn[2]) };
  const seq = SEQ_TAG.exec(text);
  if (seq) return { kind: 'seq', seq: Number(seq[1]) };
  throw invalidValue(option, text, `invalid tag ${JSON.stringify(text)}: expected N, N.K or @S`, { tag: text });
}

export function isTag(text: string): boolean {
  return TURN_TAG.test(text) || SEQ_TAG.test(text);
}

/** Canonical text: `N` for k = 0, `N.K` otherwise, `@S`. */
export function formatTag(tag: Tag): string {
  if (tag.kind === 'seq') return `@${tag.seq}`;
  return tag.k === 0 ? String(tag.turn) : `${tag.turn}.${tag.k}`;
}

export function captureTag(turn: number, k: number): string {
  return `${turn}.${k}`;
}

/**
 * Orders two turn tags numerically (`10` after `2`, `3.10` after `3.9`). `@S` tags are ordered
 * among themselves; comparing a turn tag with a seq tag needs a log, so it throws INVALID_ARGUMENT.
 */
export function compareTags(a: Tag, b: Tag): number {
  if (a.kind === 'turn' && b.kind === 'turn') return a.turn - b.turn || a.k - b.k;
  if (a.kind === 'seq' && b.kind === 'seq') return a.seq - b.seq;
  throw new CkptError('INVALID_ARGUMENT', 'a turn tag and an @seq tag can only be ordered against a session log');
}

// Durations on the command line and in the environment (`--grace 15m`, `--older-than 30d`,
// CKPT_KEEP_AGE): a non-negative integer and one unit, parsed strictly — anything else is
// INVALID_ARGUMENT, never a silent default. Pure.
import { CkptError, invalidValue } from '../errors.js';

export const DURATION_UNITS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS;

const DURATION = /^(0|[1-9][0-9]{0,15})(ms|s|m|h|d|w)$/;

/** Milliseconds of `text` (`0s`, `90s`, `15m`, `2h`, `30d`, `1w`, `500ms`); INVALID_ARGUMENT otherwise. */
export function parseDuration(text: string, what = 'duration'): number {
  const m = typeof text === 'string' ? DURATION.exec(text) : null;
  if (!m) {
    throw invalidValue(what, text, `${what} must be a whole number and a unit (ms, s, m, h, d, w), e.g. 15m or 30d; got ${JSON.stringify(text)}`);
  }
  const ms = Number(m[1]) * DURATION_UNITS[m[2] as DurationUnit];
  if (!Number.isSafeInteger(ms)) throw invalidValue(what, text, `${what} ${text} is too long`);
  return ms;
}

/** The shortest exact spelling of `ms` in the largest unit that divides it (`900000` -> `15m`). */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new CkptError('INVALID_ARGUMENT', `not a duration: ${ms}`, { value: ms });
  if (ms === 0) return '0s';
  const units = Object.entries(DURATION_UNITS).sort((a, b) => b[1] - a[1]) as [DurationUnit, number][];
  for (const [unit, size] of units) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

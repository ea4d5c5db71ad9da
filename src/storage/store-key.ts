// Store key validation shared by every driver: a key is a store-relative path with `/` separators
// that cannot leave the store, and whose segments never collide with a driver's internal names, so a
// key valid in one driver is valid in every other (`ckpt store copy` relies on it).
import { CkptError } from '../errors.js';

/** Marks the fs driver's temp files; reserved in every driver's keys. */
export const TEMP_MARK = '.ckpt-tmp-';
/** The fs driver's lock directories end with this; reserved in every driver's keys. */
export const LOCK_SUFFIX = '.ckpt-lock';

export const isInternalName = (name: string): boolean => name.includes(TEMP_MARK) || name.endsWith(LOCK_SUFFIX);

/**
 * The segments of a valid key; throws INVALID_ARGUMENT for anything that could escape or collide.
 * With `allowRoot`, '' and '/' name the root (returns []) and a trailing `/` is accepted (listings).
 */
export function keySegments(key: string, allowRoot = false): string[] {
  if (typeof key !== 'string') throw new CkptError('INVALID_ARGUMENT', 'a store key must be a string', { key });
  if (allowRoot && (key === '' || key === '/')) return [];
  const trimmed = allowRoot ? key.replace(/\/+$/, '') : key;
  const segments = trimmed.split('/');
  const bad =
    trimmed === '' ||
    trimmed.startsWith('/') ||
    trimmed.includes('\\') ||
    trimmed.includes('\0') ||
    segments.some((s) => s === '' || s === '.' || s === '..' || isInternalName(s));
  if (bad) throw new CkptError('INVALID_ARGUMENT', `invalid store key: ${JSON.stringify(key)}`, { key });
  return segments;
}

/** Byte-order comparison used for every sorted listing. */
export const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

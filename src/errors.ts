// The one error class of ckpt and the single mapping from error codes to CLI exit codes and HTTP
// statuses (DESIGN §7). Every adapter maps errors through `exitCodeOf` / `httpStatusOf`, nowhere else.

export const ERROR_CODES = {
  INVALID_ARGUMENT: { exit: 2, http: 400 },
  NOT_FOUND: { exit: 3, http: 404 },
  SESSION_NOT_FOUND: { exit: 3, http: 404 },
  TAG_NOT_FOUND: { exit: 3, http: 404 },
  BLOB_NOT_FOUND: { exit: 3, http: 404 },
  TAG_PRUNED: { exit: 3, http: 410 },
  PATH_ESCAPE: { exit: 2, http: 400 },
  DRIFT: { exit: 4, http: 409 },
  CONFLICT: { exit: 4, http: 409 },
  BLOB_CORRUPT: { exit: 5, http: 500 },
  LOG_CORRUPT: { exit: 5, http: 500 },
  BLOB_TOO_LARGE: { exit: 2, http: 413 },
  LOCKED: { exit: 7, http: 423 },
  TOKEN_INVALID: { exit: 2, http: 400 },
  TOKEN_STALE: { exit: 4, http: 409 },
  // The workspace's folder is on another machine of a shared store: read its records, restore there (or export).
  WRONG_MACHINE: { exit: 4, http: 409 },
  IO: { exit: 6, http: 503 },
  // A configured cap on concurrent use was reached (the daemon's live event streams, issue 27 item 10): try again later.
  LIMIT_REACHED: { exit: 7, http: 429 },
  INTERNAL: { exit: 1, http: 500 },
  // The HTTP daemon's own refusals (DESIGN §10 "Daemon"): missing/wrong bearer token, foreign Host header.
  UNAUTHORIZED: { exit: 2, http: 401 },
  FORBIDDEN: { exit: 2, http: 403 },
} as const satisfies Record<string, { exit: number; http: number }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Error codes whose failures may succeed when retried (the `IO` family says so in `data.retryable`). */
const RETRYABLE_ERRNO = new Set(['EAGAIN', 'EBUSY', 'EMFILE', 'ENFILE', 'ENOSPC', 'EINTR', 'ETIMEDOUT', 'ESTALE']);

export class CkptError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CkptError';
    this.code = code;
    this.data = data;
  }

  toJSON(): { code: ErrorCode; message: string; data: Record<string, unknown> } {
    return { code: this.code, message: this.message, data: this.data };
  }
}

export function isCkptError(err: unknown, code?: ErrorCode): err is CkptError {
  return err instanceof CkptError && (code === undefined || err.code === code);
}

/**
 * A value an option, argument or environment variable cannot take: INVALID_ARGUMENT whose data names
 * it the same way everywhere — `option` (`--limit`, `<tag>`, `CKPT_KEEP_TURNS`) and `value` (what was
 * given) — besides the keys `data` carried before (§9: keys are added, never renamed).
 */
export function invalidValue(option: string, value: unknown, message: string, data: Record<string, unknown> = {}): CkptError {
  return new CkptError('INVALID_ARGUMENT', message, { ...data, option, value });
}

/**
 * An IO error saying the store cannot be written by this process (a read-only mount, no write
 * permission): a reader that only wanted a lock or a cache write may go on without them.
 */
export function isNotWritable(err: unknown): boolean {
  return isCkptError(err, 'IO') && ['EROFS', 'EACCES', 'EPERM'].includes(String(err.data.errno));
}

/**
 * The exit code of any thrown value, through the same conversion adapters print (`toCkptError`): a
 * node errno error that prints as `IO` exits as `IO`, never as INTERNAL.
 */
export function exitCodeOf(err: unknown): number {
  return ERROR_CODES[toCkptError(err).code].exit;
}

export function httpStatusOf(err: unknown): number {
  return ERROR_CODES[toCkptError(err).code].http;
}

/** Wraps any thrown value as a CkptError: node errno errors become `IO` (retryable when they are), the rest `INTERNAL`. */
export function toCkptError(err: unknown, context?: string): CkptError {
  if (err instanceof CkptError) return err;
  const e = err as NodeJS.ErrnoException | undefined;
  const prefix = context ? `${context}: ` : '';
  if (e && typeof e.code === 'string' && typeof e.syscall === 'string') {
    return new CkptError(
      'IO',
      `${prefix}${e.message}`,
      { errno: e.code, path: e.path, retryable: RETRYABLE_ERRNO.has(e.code) },
      { cause: err },
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new CkptError('INTERNAL', `${prefix}${message}`, {}, { cause: err });
}

// What a session says about the agent run behind it (issue 15, like zero's session metadata): the
// agent's own session id, its name, model, provider, working folder, task and what spawned it. Set on
// the `session` event at creation and changed later by `info` events; the fold in metadata.ts makes
// the current values. Every field is an optional short string; `null` in an update clears a field.
import { CkptError } from '../errors.js';

// `continues`: the ckpt session this one carries on (an agent's `/clear` starts a new session id in the
// same conversation folder; issue 26 item 4).
export const SESSION_INFO_FIELDS = ['agent', 'externalId', 'model', 'provider', 'cwd', 'transcriptPath', 'taskId', 'spawnedFrom', 'continues'] as const;
export type SessionInfoField = (typeof SESSION_INFO_FIELDS)[number];

/** Descriptive fields of a session; none is interpreted by ckpt beyond filtering and lookup. */
export type SessionInfo = { [K in SessionInfoField]?: string };
/** An update: a string sets a field, `null` clears it, a missing key leaves it as it is. */
export type SessionInfoPatch = { [K in SessionInfoField]?: string | null };

const MAX_LENGTH = 4096;

/** Validates caller input; unknown keys and non-strings are INVALID_ARGUMENT (nothing is recorded). */
export function checkInfoPatch(patch: unknown, { allowNull }: { allowNull: boolean }): SessionInfoPatch {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    throw new CkptError('INVALID_ARGUMENT', 'session info must be an object of strings');
  }
  const out: SessionInfoPatch = {};
  for (const [key, value] of Object.entries(patch)) {
    if (!(SESSION_INFO_FIELDS as readonly string[]).includes(key)) {
      throw new CkptError('INVALID_ARGUMENT', `unknown session info field ${JSON.stringify(key)} (known: ${SESSION_INFO_FIELDS.join(', ')})`, { field: key });
    }
    if (value === undefined) continue;
    if (value === null && allowNull) {
      out[key as SessionInfoField] = null;
      continue;
    }
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LENGTH || /[\0]/.test(value)) {
      throw new CkptError('INVALID_ARGUMENT', `session info ${key} must be a non-empty string of at most ${MAX_LENGTH} characters`, { field: key });
    }
    out[key as SessionInfoField] = value;
  }
  return out;
}

/** Applies a logged patch (untrusted: anything but a string or null is ignored) onto `info`. */
export function applyInfo(info: SessionInfo, patch: unknown): void {
  if (patch === null || typeof patch !== 'object') return;
  for (const key of SESSION_INFO_FIELDS) {
    const value = (patch as Record<string, unknown>)[key];
    if (typeof value === 'string') info[key] = value;
    else if (value === null) delete info[key];
  }
}

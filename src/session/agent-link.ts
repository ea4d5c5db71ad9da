// The ckpt session tied to an agent's own conversation (DESIGN §10 "Agent integration"). Find-or-
// create by the agent's id must cost almost nothing (a hook runs per tool call), so the ckpt session
// id is *derived* from the agent's: `<agent>-<external id>` when that is a valid id, else
// `<agent>-h<40 hex of sha256>`. Finding is then one tail read of that session's log, and creating is
// the log's create-if-absent, which is already exclusive across processes: no index file to keep.
// The link itself is stored as session info (session-info.ts: agent, externalId, cwd, transcriptPath).
import { createHash } from 'node:crypto';
import { CkptError } from '../errors.js';
import { isValidSessionId } from './session-id.js';

export interface AgentLink {
  /** The agent's short name (`claude`, `gemini`, …). */
  agent: string;
  /** The agent's own session id. */
  externalId: string;
  /** Where the agent ran (its working folder when the session was created). */
  cwd?: string;
  /** The agent's transcript file, if it has one. */
  transcriptPath?: string;
}

const AGENT_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** The ckpt session id tied to an agent's session id (a pure function: same input, same id). */
export function agentSessionId(agent: string, externalId: string): string {
  if (!AGENT_NAME.test(agent)) throw new CkptError('INVALID_ARGUMENT', `invalid agent name ${JSON.stringify(agent)}`, { agent });
  if (typeof externalId !== 'string' || externalId.length === 0) {
    throw new CkptError('INVALID_ARGUMENT', 'an agent session id must be a non-empty string', { agent });
  }
  const direct = `${agent}-${externalId}`;
  if (externalId.length <= 100 && isValidSessionId(direct)) return direct;
  return `${agent}-h${createHash('sha256').update(externalId).digest('hex').slice(0, 40)}`;
}

/**
 * The agent whose hooks record into the session `meta` describes (its id is the one derived from the
 * agent's own session id), else undefined: every prompt of that agent starts a turn there, whatever
 * session is the default (a fork made meanwhile, a `turn` asked for over MCP).
 */
export function hookRecordedBy(meta: { id: string; agent?: string; externalId?: string }): string | undefined {
  if (!meta.agent || !meta.externalId) return undefined;
  try {
    return agentSessionId(meta.agent, meta.externalId) === meta.id ? meta.agent : undefined;
  } catch {
    return undefined; // not a name ckpt's hooks use
  }
}

// The agents ckpt knows how to record through hooks, by the name used in `ckpt hook <name>`.
import { invalidValue } from '../../index.js';
import type { AgentSpec } from '../agent-spec.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import { copilot } from './copilot.js';
import { cursor } from './cursor.js';
import { gemini } from './gemini.js';
import { opencode } from './opencode.js';

export const AGENTS: Readonly<Record<string, AgentSpec>> = { claude, codex, copilot, cursor, gemini, opencode };

export function agentSpec(name: string): AgentSpec {
  const spec = Object.hasOwn(AGENTS, name) ? AGENTS[name] : undefined;
  if (!spec) throw invalidValue('<agent>', name, `unknown agent ${JSON.stringify(name)}: known agents are ${Object.keys(AGENTS).join(', ')}`, { agent: name });
  return spec;
}

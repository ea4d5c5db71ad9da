// Agent processes whose HTTP hooks post to a port this daemon does not hold (DESIGN §10 "Previews,
// hostile caches and probes (2026-12-05, third session)"). An agent reads its hook settings when it
// starts, so once the daemon came back on another port (its last one held by another process) and
// re-pointed the project's settings, every agent process started before that keeps posting each tool
// call — its input, the hook credential — to whatever holds the old port, and follows that listener's
// answers. The daemon cannot reach those posts; it sees the process's once-per-prompt command hooks,
// and stops its prompts until it restarts. In memory, per daemon: a daemon that restarts forgets (it
// no longer exits when idle while HTTP hooks post to it, so that is a crash or a reboot).
const MAX_STARTS = 10_000;

export interface StaleHooks {
  /** The project's HTTP hooks were re-pointed at this daemon now, away from `from`. */
  repointed(projectDir: string, from: readonly number[]): void;
  /** An agent process started (its first SessionStart) with settings already naming this daemon. */
  started(agentSession: string): void;
  /** The ports the agent session's HTTP hooks may still post to, when it started before its project's hooks were re-pointed. */
  staleFrom(projectDir: string, agentSession: string): readonly number[] | undefined;
}

export function createStaleHooks(now: () => number = Date.now): StaleHooks {
  const moves = new Map<string, { at: number; from: readonly number[] }>();
  const starts = new Map<string, number>();
  return {
    repointed(projectDir, from) {
      moves.set(projectDir, { at: now(), from });
    },
    started(agentSession) {
      starts.delete(agentSession);
      starts.set(agentSession, now());
      // Oldest first: a session forgotten this way is asked to restart once more, never missed.
      if (starts.size > MAX_STARTS) starts.delete(starts.keys().next().value!);
    },
    staleFrom(projectDir, agentSession) {
      const move = moves.get(projectDir);
      if (!move) return undefined;
      const started = starts.get(agentSession);
      return started !== undefined && started >= move.at ? undefined : move.from;
    },
  };
}

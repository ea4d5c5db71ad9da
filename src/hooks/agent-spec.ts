// What ckpt needs to know about one coding agent to record it through its hooks: the agent's event
// names mapped to ckpt actions, which tools touch only the files named in their input (and where
// those names are), which tools never change files, and the field names of its hook JSON. One table
// per agent (src/hooks/agents/*.ts): adding an agent is one file plus its entry in agents/index.ts.
//
// ONE source per agent: `events` says, per hook event, what ckpt does AND how the hook is installed
// (matcher, extra fields, command-only). `ckpt init <agent>` installs exactly the events whose action
// records something (`installEntries`), and `ckpt hook <agent>` handles exactly the events listed, so
// an event cannot be handled without being installed (test: hooks/agent-tables.test.ts).

/** What ckpt does for one hook event. */
export type HookAction =
  /** Find or create the ckpt session tied to the agent's session; make sure the workspace has its baseline. */
  | 'session-start'
  /** The user sent a message: start a turn carrying its text. */
  | 'turn'
  /** A tool is about to run: capture the files it names; before a shell tool, make sure of the baseline. */
  | 'before-tool'
  /** A tool has run: settle the files it named; scan after a shell or unknown tool. */
  | 'after-tool'
  /**
   * The agent finished answering: scan the workspace (through the daemon a watched scan, so cheap).
   * Records what tool hooks that could not reach the daemon missed (HTTP hooks fail silently).
   */
  | 'turn-end'
  /** The agent is about to compact its context: record a `compaction` event. */
  | 'compaction'
  /** Nothing to record (session end, stop, notifications). */
  | 'none';

/** One event of an agent's table: what ckpt does with it, and how its hook is installed. */
export interface HookEventSpec {
  action: HookAction;
  /** Tool events: the tool-name pattern installed (`*`: every tool). Omitted for lifecycle events. */
  matcher?: string;
  /** Extra fields of the installed hook configuration (e.g. Gemini's `name`). */
  extra?: Record<string, unknown>;
  /** Installed as a command hook even with `--http`: the agent cannot post this event to a URL. */
  commandOnly?: boolean;
  /** Runs once per tool call (not once per prompt): the default install makes it an HTTP hook when the agent has those. */
  perToolCall?: boolean;
  /** A tool event that names no tool (Cursor's beforeShellExecution): the tool it stands for. */
  tool?: string;
  /** A compaction event records only with one of these triggers (default: any). */
  triggers?: readonly string[];
  /**
   * A turn-end event the agent sends only once every tool call of the turn has ended (Codex's Stop):
   * a capture still in flight then is a call that failed without an after-tool event, settled first.
   */
  endsCalls?: true;
}

/**
 * Events of the agent that ckpt records nothing for (session end, notifications, model calls, …):
 * listed in the table so that it names every event the agent has, answered at once and never installed.
 */
export function recordsNothing(...events: string[]): Record<string, HookEventSpec> {
  return Object.fromEntries(events.map((event) => [event, { action: 'none' }]));
}

/** The start of a session and of a turn as Claude Code names them, and as agents whose hooks copy its own (Codex CLI, Copilot) do. */
export const CLAUDE_SHAPED_START: Readonly<Record<string, HookEventSpec>> = {
  SessionStart: { action: 'session-start' },
  UserPromptSubmit: { action: 'turn' },
};

/** One hook ckpt installs into the agent's settings (see install/merge-hooks.ts), derived from `events`. */
export interface InstallEntry {
  event: string;
  matcher?: string;
  extra?: Record<string, unknown>;
  commandOnly?: boolean;
  perToolCall?: boolean;
}

/**
 * A tool-name matcher (a JavaScript regular expression, as Claude Code reads a matcher with other
 * characters than letters, digits, `_`, `-`, spaces, `,` and `|`) that matches every tool except these:
 * no hook runs at all for a tool that changes nothing, while an unknown tool (an MCP tool, a new one)
 * is still recorded.
 */
export function matcherSkipping(tools: readonly string[]): string {
  return `^(?!(?:${tools.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$)`;
}

/**
 * The same for agents that match a tool name against the WHOLE pattern (the Copilot CLI: "hooks with
 * matcher run only for tool names that fully match the regex"): `(?!(?:Read|…)$).*`. Read as a search
 * (Claude Code's way) it matches every name, so an agent with either reading still calls the hook for
 * every tool that may change files.
 */
export function fullMatcherSkipping(tools: readonly string[]): string {
  return `(?!(?:${tools.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$).*`;
}

export interface AgentSpec {
  /** Short name, used in `ckpt hook <name>` and as the prefix of derived session ids. */
  name: string;
  /** For people: `Claude Code`. */
  displayName: string;
  /**
   * Hook event name → what ckpt does and how it is installed. Every event whose action is not `none`
   * is installed by `ckpt init`; an event not listed (or `none`) is answered at once with exit 0.
   */
  events: Readonly<Record<string, HookEventSpec>>;
  /** Tools that change only the files named in their input: tool → input fields holding those paths. */
  fileTools: Readonly<Record<string, readonly string[]>>;
  /**
   * Tools whose input holds an `apply_patch` patch (Codex CLI): tool → the input field with the patch.
   * The files are the patch's headers (hooks/patch-paths.ts); a call whose text is no patch is scanned.
   */
  patchTools?: Readonly<Record<string, string>>;
  /** Input fields that name a file for any other tool (captured too, then the tool is still scanned after). */
  pathFields: readonly string[];
  /** Tools that never change the workspace: nothing is recorded for them. */
  passiveTools: readonly string[];
  /** Environment variables the agent sets to the project root when it runs a hook, in order of preference. */
  projectDirEnv: readonly string[];
  /**
   * That "project root" is only the folder the agent was started in (Gemini CLI, opencode): started in
   * a subfolder of a git project, the workspace is the git top (or a folder between with sessions).
   */
  projectDirIsStart?: true;
  /** Settings files by scope: project and local relative to the project root, user relative to the home folder. */
  settingsFiles: { project: string; local?: string; user: string };
  /** The agent can post hook events to a URL (`"type": "http"` hooks): `ckpt init <agent> --http`. */
  httpHooks?: boolean;
  /**
   * How `ckpt init` installs: `hooks-json` (default) merges Claude Code's matcher groups into a JSON
   * settings file (install/merge-hooks.ts); `flat-hooks-json` lists hook entries straight under each
   * event, as Cursor and GitHub Copilot read them (`{"version": 1, "hooks": {"<event>": [{…}]}}`);
   * `opencode-plugin` writes ckpt's plugin file (install/opencode-plugin.ts).
   */
  install?: 'hooks-json' | 'flat-hooks-json' | 'opencode-plugin';
  /**
   * `flat-hooks-json`: the fields of ckpt's hook entry for the `ckpt hook <agent> --daemon` command line
   * (default `{type: 'command', command}`), and the `version` a new file of that scope starts with.
   */
  flatHook?: { fields: (command: string) => Record<string, unknown>; version?: Partial<Record<'project' | 'user', number>> };
  /**
   * `hooks-json`: the command line installed for the `ckpt hook <agent> --daemon` command (default: the
   * command itself). Gemini CLI takes any exit but 0 and 1 with text on stdout or stderr for a deny —
   * a command that is not found (127) blocks every prompt — so its line maps every failure but 2 to 0.
   */
  commandLine?: (command: string) => string;
  /** What a hook prints when it has nothing to say (default nothing; Cursor reads a JSON answer from every hook). */
  quietAnswer?: string;
  /** Said by `ckpt init <agent>` after installing (e.g. a switch the user must turn on). */
  installNote?: string;
  /**
   * A prompt the agent submits itself, not the user (Claude Code's `<task-notification>` when a
   * background Task ends): its prompt event starts no turn, so `restore N` stays the user's prompt N.
   */
  syntheticPrompt?: RegExp;
  /** Field names of the agent's hook JSON. */
  fields: {
    sessionId: string;
    event: string;
    cwd: string;
    transcriptPath: string;
    toolName: string;
    toolInput: string;
    callId: string;
    prompt: string;
    /** SessionStart: why the session started (startup, resume, clear, compact). */
    source: string;
    /** PreCompact: manual or auto. */
    trigger: string;
    /** PreCompact: the user's instructions for the summary. */
    compactInstructions: string;
    /** A list of workspace folders whose first one stands for `cwd` in events that have none (Cursor's `workspace_roots`). */
    roots?: string;
    /**
     * A subagent's events name the session it works for here (Copilot CLI's `parent_agent_id`): its
     * tool calls are recorded in that session, inside the user's turn; its prompt, end and
     * compaction are the model's, not the user's, and record nothing.
     */
    parentSessionId?: string;
  };
}

/**
 * The hook JSON field names Claude Code defined and Gemini CLI adopted (snake_case: session_id,
 * hook_event_name, tool_input, …). An agent with other names gives its own table.
 */
export const SNAKE_CASE_FIELDS: AgentSpec['fields'] = {
  sessionId: 'session_id',
  event: 'hook_event_name',
  cwd: 'cwd',
  transcriptPath: 'transcript_path',
  toolName: 'tool_name',
  toolInput: 'tool_input',
  callId: 'tool_use_id',
  prompt: 'prompt',
  source: 'source',
  trigger: 'trigger',
  compactInstructions: 'custom_instructions',
};

/** The hooks `ckpt init <agent>` installs: every event of the table that records something, in table order. */
export function installEntries(spec: AgentSpec): InstallEntry[] {
  return Object.entries(spec.events)
    .filter(([, e]) => e.action !== 'none')
    .map(([event, e]) => ({
      event,
      ...(e.matcher !== undefined ? { matcher: e.matcher } : {}),
      ...(e.extra ? { extra: e.extra } : {}),
      ...(e.commandOnly ? { commandOnly: true } : {}),
      ...(e.perToolCall ? { perToolCall: true } : {}),
    }));
}

/** The action for an event name (`none` for an event the table does not list). */
export function actionOf(spec: AgentSpec, event: string): HookAction {
  return Object.hasOwn(spec.events, event) ? spec.events[event]!.action : 'none';
}

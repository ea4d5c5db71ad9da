// GitHub Copilot — the Copilot CLI and VS Code's agent hooks, which read the same hook files
// (`.github/hooks/*.json` in the repository; the CLI also `~/.copilot/settings.json` "hooks" and
// `~/.copilot/hooks/*.json`). Entries are listed straight under each event:
// `{"version": 1, "hooks": {"PreToolUse": [{"type": "command", "bash": "…", "timeoutSec": 30}]}}`.
// The CLI has two dialects: camelCase events (preToolUse, userPromptSubmitted, …) get camelCase
// payloads WITHOUT the event's name (toolName, toolArgs, sessionId — one command could not tell which
// event called it), while PascalCase events — VS Code's names — get VS Code's snake_case payloads with
// hook_event_name, session_id, cwd, tool_name, tool_input, transcript_path (Stop), prompt
// (UserPromptSubmit), source (SessionStart), error (PostToolUseFailure). ckpt installs the PascalCase
// events: one file serves the CLI and VS Code. Seen from the real CLI (@github/copilot 1.0.102): tools
// arrive under Claude Code's names — `Write` {path, file_text} for create, `Edit` {path, old_str,
// new_str}, `Bash` {command}; there is no tool-call id (a settle pairs by name and input, like Gemini
// CLI's); a failing tool fires PostToolUseFailure instead of PostToolUse (a failing shell command is a
// success for Copilot: PostToolUse). COPILOT_PROJECT_DIR (and CLAUDE_PROJECT_DIR) hold the project.
// Any non-zero exit of a PreToolUse hook — 1 included, and a hook killed by its timeout — DENIES the
// tool call, so ckpt's command line maps every failure but strict mode's deliberate 2 to exit 0, and
// gives the hook more than the 120 s the thin client waits for the daemon: a daemon that accepts and
// never answers is then given up and the call recorded in-process before Copilot's kill, which would
// deny the call (a probe with a hung daemon, 2026-12-07: both were 120 s). VS Code's own tools (createFile,
// replace_string_in_file, editFiles {files}, runInTerminal) are not file tools here: the paths they
// name are captured before and the workspace scanned after. Verified against the real CLI:
// test/agents/copilot.test.ts; VS Code from its documentation only (test/hooks-copilot.test.ts).
import { CLAUDE_SHAPED_START, fullMatcherSkipping, recordsNothing, SNAKE_CASE_FIELDS, type AgentSpec } from '../agent-spec.js';

/** Tools that change nothing: the CLI's (under the Claude Code names its hooks see, and its own), VS Code's. */
const PASSIVE = ['Read', 'view', 'Grep', 'grep', 'Glob', 'glob', 'read_bash', 'list_bash', 'stop_bash', 'fetch_copilot_cli_documentation', 'skill', 'read_agent', 'list_agents', 'report_intent', 'think', 'update_todo', 'readFile', 'listDirectory', 'fileSearch', 'textSearch', 'codebase', 'fetch', 'githubRepo', 'problems', 'usages'];
/**
 * Tool hooks run for every tool but those (the CLI matches the whole name; verified: a Read fires no
 * hook). Without it every view cost a hook process pair (~0.9 s on this loaded machine, paired bench).
 */
const TOOLS = fullMatcherSkipping(PASSIVE);

/** Seconds Copilot lets a hook run before it kills it (which, for PreToolUse, denies the tool call): the client's 120 s wait for the daemon, and the in-process fallback after it. */
const HOOK_TIMEOUT_S = 180;

export const copilot: AgentSpec = {
  name: 'copilot',
  displayName: 'GitHub Copilot',
  // The one table of events: what ckpt does with each and how it is installed (agent-spec.ts).
  events: {
    ...CLAUDE_SHAPED_START,
    PreToolUse: { action: 'before-tool', matcher: TOOLS },
    PostToolUse: { action: 'after-tool', matcher: TOOLS },
    PostToolUseFailure: { action: 'after-tool', matcher: TOOLS },
    PreCompact: { action: 'compaction' },
    Stop: { action: 'turn-end' },
    ...recordsNothing('SubagentStart', 'SubagentStop', 'SessionEnd', 'PermissionRequest', 'Notification'),
  },
  fileTools: { Write: ['path'], Edit: ['path'] },
  pathFields: ['path', 'filePath', 'file_path', 'files'],
  passiveTools: PASSIVE,
  projectDirEnv: ['COPILOT_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
  settingsFiles: { project: '.github/hooks/ckpt.json', user: '.copilot/settings.json' },
  install: 'flat-hooks-json',
  flatHook: {
    // `bash` for the CLI, `command` for VS Code; `|| [ $? -ne 2 ] || exit 2`: a crash (exit 1, a missing
    // node or ckpt) becomes exit 0, strict mode's deliberate exit 2 still denies.
    fields: (command) => {
      const line = `${command} || [ $? -ne 2 ] || exit 2`;
      return { type: 'command', bash: line, command: line, timeoutSec: HOOK_TIMEOUT_S, timeout: HOOK_TIMEOUT_S };
    },
    version: { project: 1 },
  },
  installNote: 'the Copilot CLI and VS Code (agent hooks, in preview) both read .github/hooks/*.json; --user writes the CLI\'s ~/.copilot/settings.json, which VS Code does not read',
  // A subagent (the `task` tool) gets a session id of its own; its events carry its parent's as
  // `parent_agent_id` (seen from the real CLI 1.0.102: UserPromptSubmit, PreToolUse, PostToolUse, Stop).
  fields: { ...SNAKE_CASE_FIELDS, parentSessionId: 'parent_agent_id' },
};

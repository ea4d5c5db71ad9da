// Claude Code (https://code.claude.com/docs/en/hooks, "Hooks reference"): hook events and tools as
// ckpt records them. Every hook gets JSON on stdin with session_id, transcript_path, cwd,
// permission_mode and hook_event_name; PreToolUse adds tool_name, tool_input, tool_use_id;
// PostToolUse adds tool_response; PostToolUseFailure (a tool call that failed) adds error;
// UserPromptSubmit adds prompt; SessionStart adds source (startup | resume | clear | compact);
// PreCompact adds trigger (manual | auto) and custom_instructions. Claude Code sets
// CLAUDE_PROJECT_DIR to the project root for hook commands.
import { matcherSkipping, recordsNothing, SNAKE_CASE_FIELDS, type AgentSpec } from '../agent-spec.js';

/**
 * Tools that change nothing (ToolSearch loads deferred tools, Skill a skill's instructions): no hook runs for them.
 * Claude Code (2.1.328) tests a matcher against a tool's legacy names too (ListPeers for ListAgents, KillShell and
 * KillBash for TaskStop, ListMcpResources / ReadMcpResource / ReadMcpResourceDir for the …Tool names), so every name
 * of a passive tool is listed: one left out lets the tool through the matcher. ListAgents, ReportFindings and
 * ScheduleWakeup are 2.1.328's read-only tools (a round-6 probe: a ListAgents call ran two hooks and a scan, 0.7–1.7 s
 * on 20,000 files with command hooks). Not SendMessage, Agent or Workflow: they run subagents, which write.
 */
const BUILTIN_PASSIVE = ['Read', 'Glob', 'Grep', 'LS', 'WebFetch', 'WebSearch', 'TodoWrite', 'BashOutput', 'KillShell', 'KillBash', 'TaskStop', 'ExitPlanMode', 'EnterPlanMode', 'ListMcpResourcesTool', 'ListMcpResources', 'ReadMcpResourceTool', 'ReadMcpResource', 'ReadMcpResourceDirTool', 'ReadMcpResourceDir', 'ToolSearch', 'Skill', 'AskUserQuestion', 'ListAgents', 'ListPeers', 'ReportFindings', 'ScheduleWakeup'];
/**
 * ckpt's own MCP tools under the server name the docs give (`claude mcp add ckpt -- ckpt mcp`, `ckpt mcp
 * --config`): every one but restore, undo and rewind changes no workspace file. Hooked, each call's
 * PostToolUse scan recorded whatever else had changed (a dev server's log), so a preview's token was
 * stale before the model could use it: a restore of one file never ran while anything wrote in the
 * workspace (a 2026-12-06 probe). Kept in step with the server's tools by test/mcp-server.test.ts.
 */
export const CKPT_MCP_PASSIVE = ['session_list', 'session_show', 'session_tree', 'session_new', 'session_fork', 'turn', 'checkpoint', 'settle', 'log', 'show', 'diff', 'read_file', 'status', 'restore_preview'].map(
  (t) => `mcp__ckpt__${t}`,
);
const PASSIVE = [...BUILTIN_PASSIVE, ...CKPT_MCP_PASSIVE];
/** Every tool but the passive ones (issue 28: a Read costs nothing, an unknown tool is still recorded). */
const TOOLS = matcherSkipping(PASSIVE);

export const claude: AgentSpec = {
  name: 'claude',
  displayName: 'Claude Code',
  // The one table of events: what ckpt does with each and how it is installed (agent-spec.ts).
  // Tool hooks match every tool but the passive ones (no hook process or request at all for a Read);
  // an unknown tool is recorded. The per-tool-call events are HTTP hooks in the default install, the
  // once-per-prompt ones command hooks that start the daemon on demand (DESIGN §10 "Hooks at no cost").
  // Stop scans (turn-end): a tool event an HTTP hook could not deliver is recorded there. SubagentStop,
  // SessionEnd and Notification record nothing, so they are not installed.
  events: {
    // Claude Code runs SessionStart hooks as commands only ("HTTP hooks are not supported for
    // SessionStart"): with --http it stays a command hook, else the baseline would only come lazily.
    SessionStart: { action: 'session-start', commandOnly: true },
    UserPromptSubmit: { action: 'turn' },
    PreToolUse: { action: 'before-tool', matcher: TOOLS, perToolCall: true },
    PostToolUse: { action: 'after-tool', matcher: TOOLS, perToolCall: true },
    // A failed tool call (a shell command exiting non-zero) gets this instead of PostToolUse; it may
    // still have written files: settle or scan just the same.
    PostToolUseFailure: { action: 'after-tool', matcher: TOOLS, perToolCall: true },
    PreCompact: { action: 'compaction' },
    Stop: { action: 'turn-end' },
    ...recordsNothing('SubagentStop', 'SessionEnd', 'Notification'),
  },
  fileTools: {
    Write: ['file_path'],
    Edit: ['file_path'],
    MultiEdit: ['file_path'],
    NotebookEdit: ['notebook_path'],
  },
  pathFields: ['file_path', 'notebook_path'],
  // A background Task's end comes back as a user message Claude Code submits itself (UserPromptSubmit
  // fires for it, 2.1.328): not the user's prompt (a real-Claude probe: 3 prompts typed, 5 turns).
  syntheticPrompt: /^\s*<task-notification>/,
  passiveTools: PASSIVE,
  projectDirEnv: ['CLAUDE_PROJECT_DIR'],
  // HTTP hooks (Claude Code 2.1.63+): the event JSON is POSTed to a url; header values may name
  // environment variables ($VAR) listed in allowedEnvVars.
  httpHooks: true,
  settingsFiles: { project: '.claude/settings.json', local: '.claude/settings.local.json', user: '.claude/settings.json' },
  fields: SNAKE_CASE_FIELDS,
};

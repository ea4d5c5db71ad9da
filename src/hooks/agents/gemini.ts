// Gemini CLI (https://geminicli.com/docs/hooks/reference, "Hooks reference"): every hook gets JSON on
// stdin with session_id, transcript_path, cwd, hook_event_name and timestamp; BeforeTool adds
// tool_name and tool_input; AfterTool adds tool_response; BeforeAgent adds prompt; SessionStart adds
// source (startup | resume | clear); PreCompress adds trigger (manual | auto). There is no tool-call
// id: a settle finds its capture by a hash of the tool name and input, which BeforeTool and AfterTool
// both carry. Gemini CLI sets GEMINI_PROJECT_DIR (and CLAUDE_PROJECT_DIR) for hook commands, and runs
// hooks only while its hooks system is enabled (`tools.enableHooks`, /settings → Enable Hooks System).
// Verified against the real binary (@google/gemini-cli 0.61.0): test/agents/gemini.test.ts. A call the
// CLI rejects before running it (e.g. `replace` without its required `instruction`) fires no BeforeTool.
import { matcherSkipping, recordsNothing, SNAKE_CASE_FIELDS, type AgentSpec } from '../agent-spec.js';

/** Tools that change nothing (Gemini CLI 0.61's built-in names). */
const PASSIVE = ['read_file', 'read_many_files', 'list_directory', 'glob', 'search_file_content', 'grep', 'google_web_search', 'web_fetch', 'write_todos', 'save_memory'];
/**
 * Tool hooks run for every tool but those. Gemini CLI reads a tool matcher as a regular expression and
 * runs the hook when it matches anywhere in the name (`RegExp.test`), as Claude Code does: with `*` a
 * read_file cost a hook process pair for nothing (+0.2–0.6 s per call on a loaded 2-core machine).
 */
const TOOLS = matcherSkipping(PASSIVE);

export const gemini: AgentSpec = {
  name: 'gemini',
  displayName: 'Gemini CLI',
  // The one table of events: what ckpt does with each and how it is installed (agent-spec.ts).
  events: {
    SessionStart: { action: 'session-start', extra: { name: 'ckpt-session-start' } },
    BeforeAgent: { action: 'turn', extra: { name: 'ckpt-before-agent' } },
    BeforeTool: { action: 'before-tool', matcher: TOOLS, extra: { name: 'ckpt-before-tool' } },
    AfterTool: { action: 'after-tool', matcher: TOOLS, extra: { name: 'ckpt-after-tool' } },
    // Gemini CLI 0.61 fires an `auto` PreCompress before every model call, before it checks its
    // threshold (ChatCompressionService.compress): only `/compress` (manual) is surely a compaction.
    // The matcher keeps Gemini from starting the hook for the others (a trigger event's matcher is
    // compared with the trigger as a string): one hook process per model call, for nothing, before.
    PreCompress: { action: 'compaction', triggers: ['manual'], matcher: 'manual', extra: { name: 'ckpt-pre-compress' } },
    ...recordsNothing('AfterAgent', 'SessionEnd', 'Notification', 'BeforeModel', 'AfterModel', 'BeforeToolSelection'),
  },
  fileTools: {
    write_file: ['file_path'],
    replace: ['file_path'],
  },
  pathFields: ['file_path'],
  passiveTools: PASSIVE,
  projectDirEnv: ['GEMINI_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
  projectDirIsStart: true,
  settingsFiles: { project: '.gemini/settings.json', user: '.gemini/settings.json' },
  // Gemini CLI denies on any exit but 0 and 1 that prints text (hookRunner convertPlainTextToHookOutput):
  // a hook command that is gone — ckpt's checkout moved or deleted, the node it names uninstalled
  // (`sh: …: not found`, 127) — blocked every prompt ("Agent execution blocked"). As for Copilot, every
  // failure but strict mode's deliberate 2 becomes exit 0 (its message still shows as a system message).
  // A POSIX shell runs the line (bash -c); on Windows Gemini runs PowerShell, which has no such list.
  ...(process.platform === 'win32' ? {} : { commandLine: (command: string) => `${command} || [ $? -ne 2 ] || exit 2` }),
  installNote: 'Gemini CLI runs hooks only while its hooks system is enabled (tools.enableHooks; /settings -> Enable Hooks System)',
  fields: SNAKE_CASE_FIELDS,
};

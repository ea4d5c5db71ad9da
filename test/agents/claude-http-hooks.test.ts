// The real Claude Code CLI with ckpt's HTTP hooks (`ckpt serve` + `ckpt init claude --http`): the
// scenarios of claude-scenarios.ts in a git project and a plain folder.
import { defineClaudeScenarios } from './claude-scenarios.js';

defineClaudeScenarios('http');

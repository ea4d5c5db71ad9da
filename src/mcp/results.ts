// How ckpt answers over MCP: a successful tool call carries a human-readable text (complete enough
// for a model that only reads text) and `structuredContent` matching the tool's outputSchema. A ckpt
// failure is a tool error (`isError: true`) whose text starts with the ckpt error code and carries
// the `{"error":{code,message,data}}` document the CLI prints with --json; protocol errors are left
// to the SDK for protocol faults (unknown method, malformed JSON-RPC).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { CkptError, toCkptError } from '../index.js';

export function ok(structured: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

export function toolError(err: unknown): CallToolResult {
  const e = toCkptError(err);
  return {
    isError: true,
    content: [
      { type: 'text', text: `${e.code}: ${e.message}` },
      { type: 'text', text: JSON.stringify({ error: e.toJSON() }) },
    ],
  };
}

/** Runs a tool body; any failure becomes a tool error naming its ckpt code. */
export function guarded<A>(run: (args: A) => Promise<CallToolResult>): (args: A) => Promise<CallToolResult> {
  return async (args) => {
    try {
      return await run(args);
    } catch (err) {
      return toolError(err);
    }
  };
}

export interface ToolConfig<I extends z.ZodObject, O extends z.ZodObject> {
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: ToolAnnotations;
}

/**
 * Registers a tool whose failures are tool errors and whose structuredContent is passed through its
 * output schema: fields the library grows later are dropped rather than breaking clients, which
 * validate against the published (closed) schema.
 */
export function registerTool<I extends z.ZodObject, O extends z.ZodObject>(
  server: McpServer,
  name: string,
  config: ToolConfig<I, O>,
  run: (args: z.output<I>) => Promise<CallToolResult>,
): void {
  const handler = guarded(async (args: z.output<I>) => {
    const result = await run(args);
    if (!result.structuredContent || result.isError) return result;
    const parsed = config.outputSchema.safeParse(result.structuredContent);
    if (!parsed.success) throw new CkptError('INTERNAL', `tool ${name} made a result its output schema does not allow: ${parsed.error.message}`);
    return { ...result, structuredContent: parsed.data as Record<string, unknown> };
  });
  (server.registerTool as (n: string, c: ToolConfig<I, O>, h: (args: z.output<I>) => Promise<CallToolResult>) => unknown)(name, config, handler);
}

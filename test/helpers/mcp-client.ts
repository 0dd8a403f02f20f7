/**
 * The MCP read server of one dataset and the SDK's own client, linked in memory (no HTTP), and a
 * call that asserts the answer's budget (docs/analysis.md#answers-that-fit-an-agents-context).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { expect } from 'vitest'
import { createReadServer } from '../../src/mcp/server.js'
import { TEXT_CHARS_MAX } from '../../src/read/answer-budget.js'
import type { ProcessReads } from '../../src/read/process-reader.js'
import { ANSWER_BYTES_DEFAULT } from '../../src/schemas/process.js'

/** A connected client of the read tools of `datasetId` (the client checks every answer against its tool's outputSchema). */
export async function connectReadClient(reader: ProcessReads, datasetId: string): Promise<Client> {
  const server = createReadServer(reader, datasetId, { version: 'test' })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'ocelog-test', version: '1' })
  await client.connect(clientSide)
  return client
}

/** The text of a tool result (its first content item), or ''. */
export const textOf = (result: CallToolResult): string => (result.content[0]?.type === 'text' ? result.content[0].text : '')

/**
 * Calls a tool and asserts its budget: no tool error, text at most TEXT_CHARS_MAX characters, JSON at
 * most `maxBytes` bytes, `truncated` a boolean and `approx_tokens` the JSON's characters / 4 rounded up.
 */
export async function callWithinBudget(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  maxBytes: number = ANSWER_BYTES_DEFAULT,
): Promise<{ body: Record<string, unknown>; text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const what = `${name} ${JSON.stringify(args)}`
  expect(result.isError, `${what}: ${textOf(result)}`).toBeFalsy()
  const text = textOf(result)
  const json = JSON.stringify(result.structuredContent)
  const body = result.structuredContent as Record<string, unknown>
  expect(text.length, what).toBeLessThanOrEqual(TEXT_CHARS_MAX)
  expect(Buffer.byteLength(json), what).toBeLessThanOrEqual(maxBytes)
  expect(typeof body.truncated, what).toBe('boolean')
  expect(body.approx_tokens, what).toBe(Math.ceil(json.length / 4))
  return { body, text }
}

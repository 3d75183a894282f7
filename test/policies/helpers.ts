/** Shared fixtures for the policy tests: a real GatewayContext and compile input. */
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { GatewayContext, emptyMessage } from '../../src/gateway/context.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import type { ApiCompileInput } from '../../src/gateway/flow.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import type { MessageVar, RequestVar, Step } from '../../src/policies/types.ts';

export interface ContextOptions {
  verb?: string;
  path?: string;
  search?: string;
  headers?: Record<string, string>;
  parameters?: Record<string, unknown>;
  operationId?: string;
  operationPath?: string;
  message?: Partial<MessageVar>;
  vars?: Record<string, unknown>;
  /** The gateway's stop signal (default: one never aborted). */
  signal?: AbortSignal;
  /** The consumer's response (default: none, a consumer that never goes away). */
  response?: ServerResponse;
}

/** A GatewayContext for one request, as the gateway builds it. */
export function makeContext(options: ContextOptions = {}): GatewayContext {
  const verb = options.verb ?? 'GET';
  const request: RequestVar = {
    verb,
    uri: `http://127.0.0.1:8080/org/sandbox/api${options.path ?? '/'}${options.search ?? ''}`,
    path: options.path ?? '/',
    search: options.search ?? '',
    headers: options.headers ?? {},
    parameters: options.parameters ?? {},
    body: undefined,
    'content-type': options.headers?.['content-type'] ?? '',
  };
  const ctx = new GatewayContext({
    request,
    message: { ...emptyMessage(), ...options.message },
    api: {
      name: 'test',
      operation: { id: options.operationId, path: options.operationPath ?? options.path ?? '/' },
    },
    properties: {},
    log: pino({ level: 'silent' }),
    operation: { id: options.operationId, path: options.operationPath ?? options.path ?? '/', verb },
    signal: options.signal ?? new AbortController().signal,
    response: options.response,
  });
  for (const [name, value] of Object.entries(options.vars ?? {})) ctx.set(name, value);
  return ctx;
}

/** Compile input for an API document. */
export function apiInput(
  document: Record<string, unknown> = {},
  properties: Record<string, string> = {},
  settings: Partial<ApiCompileInput['settings']> = {},
): ApiCompileInput {
  return {
    name: 'test',
    version: '1.0.0',
    document,
    properties,
    catalog: { name: 'sandbox', orgName: 'org' },
    settings: {
      maxBackendBodyBytes: 1 << 20,
      tlsProfiles: {},
      script: { timeoutMs: 200, memoryBytes: 16 * 1024 * 1024 },
      ...settings,
    },
  };
}

/** Compiles an assembly with the core policies. */
export function compile(
  assembly: { execute: unknown[]; catch?: unknown[]; finally?: unknown[] },
  document: Record<string, unknown> = {},
  properties: Record<string, string> = {},
  settings: Partial<ApiCompileInput['settings']> = {},
): Step {
  return compileAssembly(assembly, apiInput(document, properties, settings), policyRegistry);
}

/** Runs a compiled step to completion. */
export async function run(step: Step, ctx: GatewayContext): Promise<void> {
  await step(ctx);
}

/**
 * A real consumer's response whose connection the consumer closed before any answer: the server
 * hands it over once its 'close' has fired. `close()` stops the server.
 */
export async function leftResponse(): Promise<{ response: ServerResponse; close(): Promise<void> }> {
  let handOver: (response: ServerResponse) => void = () => undefined;
  const handed = new Promise<ServerResponse>((resolve) => (handOver = resolve));
  const server = createServer((_req, res) => res.on('close', () => handOver(res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write('GET / HTTP/1.1\r\nHost: gateway\r\n\r\n');
  server.once('request', () => socket.destroy());
  const response = await handed;
  return { response, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * The one-line handshake between a bench target process and `bench/run.ts`: a target prints
 * one JSON line on stdout once it listens, then stays up until SIGTERM.
 */
import type { AddressInfo, Server } from 'node:net';

export interface Announcement {
  /** The port the target listens on (127.0.0.1). */
  port: number;
  /** Request path to load, and headers to send (client id…); default `/` and none. */
  path?: string;
  headers?: Record<string, string>;
  /** Anything else the runner should record (snapshot compile time, APIs loaded…). */
  facts?: Record<string, unknown>;
}

/** Prints the handshake line. */
export function announce(announcement: Announcement): void {
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, ...announcement })}\n`);
}

/** The port a listening server is bound to. */
export function portOf(server: Pick<Server, 'address'>): number {
  return (server.address() as AddressInfo).port;
}

/** Runs `close` on SIGTERM/SIGINT, then exits. */
export function exitOnSignal(close: () => Promise<void> | void, graceMs = 3000): void {
  let closing = false;
  const stop = (): void => {
    if (closing) return;
    closing = true;
    // A stuck close must not keep the run waiting: the runner kills after its own grace anyway.
    setTimeout(() => process.exit(0), graceMs).unref();
    Promise.resolve(close()).finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** A required numeric environment variable. */
export function envPort(name: string, fallback?: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (value === undefined || !Number.isInteger(value) || value < 0 || value > 65535)
    throw new Error(`${name} must be a port number`);
  return value;
}

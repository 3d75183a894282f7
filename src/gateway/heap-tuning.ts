/**
 * V8's allocation-site pretenuring, turned off in a process that runs a gateway (issue 18), and
 * the node flags a forked gateway process starts with.
 *
 * V8 watches each object and array literal in optimized code: when nearly all the objects a
 * site made survive a scavenge, it allocates that site's objects straight in the old generation
 * from then on. On a gateway that guess misfires. A site is tenured after a burst in which its
 * objects happened to be alive (start-up, requests in flight); from then on each request's objects
 * from that site are born old, die at once, and stay until the next mark-compact; every young
 * object they point to (the request's headers, context, the backend's answer) is a root to each
 * scavenge in between, so it is copied, then promoted, and the sites of *those* objects look
 * long-lived in turn. Measured on the pass-through flow (bench/README.md, Session 8): every
 * scavenge copied ~2.9 MB and promoted ~2.7 MB of request data that no full collection finds
 * alive, a 6 ms mean pause against 0.9 ms with pretenuring off, and 25 % fewer requests served.
 * Which site starts it depends on the code's shape (one closure more or less in invoke decided it
 * there), so it is turned off for the process rather than dodged site by site.
 *
 * The flag is process-wide (worker threads share it). Who starts node with
 * `--allocation-site-pretenuring` keeps V8's default.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Whether node's flags name the V8 flag `name`, on or off, in any spelling V8 takes (`_` or `-`, `--no-`). */
function namesFlag(execArgv: readonly string[], name: string): boolean {
  return execArgv.some((arg) => arg.replaceAll('_', '-').replace(/^--no-/, '--') === `--${name}`);
}

/** Turns the V8 flag `name` off for this process unless node's flags name it; returns whether it did. */
function turnOffUnlessNamed(execArgv: readonly string[], name: string): boolean {
  if (namesFlag(execArgv, name)) return false;
  setFlagsFromString(`--no-${name}`);
  return true;
}

/**
 * Node flags for a process forked to run a gateway (a `portico serve --workers N` worker): V8's
 * memory reducer off, unless the operator's own node flags name it either way.
 *
 * V8's memory reducer runs up to three memory-reducing full collections when it judges an isolate
 * idle from a fall in its allocation rate: on a gateway, a load falling from a burst to a steady
 * rate as well as a pause. A gateway going from saturating load to 2 000 req/s got two or three of
 * them in its activity writer thread's isolate in the first seconds, 7.7–18.3 ms each on the
 * gateway's core, in 3 runs of 3; none with the flag (bench/README.md, Session 13). Until then
 * they were also the usual trigger of a promoting GC state whose cause in-flight.ts removed
 * (Session 12). V8 makes an isolate's reducer when it sets up its heap, so this is a start-up
 * flag: `setFlagsFromString` comes too late for the running isolate. What it gives up: after a
 * burst, an idle gateway keeps the heap it grew to.
 */
export function gatewayNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return namesFlag(execArgv, 'memory-reducer') ? [] : ['--no-memory-reducer'];
}

/**
 * Turns V8's memory reducer off for the isolates this process makes from now on (the activity
 * writer's and the script workers' threads), unless node's flags name it (on or off); returns
 * whether it did. The process's own isolate keeps what it started with (see
 * {@link gatewayNodeFlags}); in a single-process `portico serve` the reducer collections the bench
 * measured were the writer thread's (bench/README.md, Session 13).
 */
export function turnOffThreadMemoryReducer(execArgv: readonly string[] = process.execArgv): boolean {
  return turnOffUnlessNamed(execArgv, 'memory-reducer');
}

/**
 * Turns V8's allocation-site pretenuring off unless node's flags name it (on or off); returns
 * whether it did.
 */
export function turnOffPretenuring(execArgv: readonly string[] = process.execArgv): boolean {
  return turnOffUnlessNamed(execArgv, 'allocation-site-pretenuring');
}

/**
 * One full garbage collection, run once a gateway has compiled its first snapshot and before it is
 * loaded (issue 18). With a large catalog (1 000 APIs, 100 000 subscriptions: ~250 MB of heap) the
 * start-up left V8 in an incremental marking cycle; load that began during it kept every scavenge
 * promoting ~2.4 MB (5–10 ms pauses, a quarter fewer requests served) for as long as the load
 * lasted: in every run under the heap profiler and in half of the runs without it. With this
 * collection first, none did (bench/README.md, Session 8). It costs one pause at start, before
 * the gateway listens. `gc` is reached through a context of its own, so the process's global
 * object does not get it.
 */
export function settleHeap(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Off again: contexts and worker threads made later (script workers, the writer thread) get no `gc`.
  setFlagsFromString('--no-expose-gc');
  gc();
}

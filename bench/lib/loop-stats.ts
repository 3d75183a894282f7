/**
 * Preloaded (`--import`) into every Node process the bench measures (issue 18): an event-loop
 * delay histogram (perf_hooks.monitorEventLoopDelay) and every GC pause (PerformanceObserver on
 * `gc`). The runner sends SIGUSR2 once to start a window (it resets both) and again to end it:
 * the window is then written as JSON to `$BENCH_LOOP_STATS/<pid>.json`. Without the variable
 * nothing is installed. (SIGUSR1 is not used: it opens Node's inspector.)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks';

interface GcPause {
  kind: string;
  ms: number;
  atMs: number;
}

const dir = process.env.BENCH_LOOP_STATS;
// Kinds of `gc` entries: minor = scavenge of the young generation, major = mark-compact.
const kinds: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

function install(outDir: string): void {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let pauses: GcPause[] = [];
  let windowStart = performance.now();
  let open = false;
  new PerformanceObserver((list) => {
    if (!open) return;
    for (const entry of list.getEntries()) {
      const detail = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail;
      const kind = kinds[detail?.kind ?? 0] ?? 'other';
      pauses.push({ kind, ms: entry.duration, atMs: entry.startTime - windowStart });
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    if (!open) {
      loop.reset();
      pauses = [];
      windowStart = performance.now();
      open = true;
      return;
    }
    open = false;
    const report = summary(loop, pauses, performance.now() - windowStart);
    writeFileSync(join(outDir, `${process.pid}.json`), JSON.stringify(report));
  });
}

function summary(loop: ReturnType<typeof monitorEventLoopDelay>, pauses: GcPause[], windowMs: number): object {
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  const byKind: Record<string, { count: number; totalMs: number; maxMs: number }> = {};
  for (const pause of pauses) {
    const entry = (byKind[pause.kind] ??= { count: 0, totalMs: 0, maxMs: 0 });
    entry.count++;
    entry.totalMs += pause.ms;
    entry.maxMs = Math.max(entry.maxMs, pause.ms);
  }
  for (const entry of Object.values(byKind)) {
    entry.totalMs = Math.round(entry.totalMs * 100) / 100;
    entry.maxMs = Math.round(entry.maxMs * 100) / 100;
  }
  const pausedMs = pauses.reduce((sum, pause) => sum + pause.ms, 0);
  const longest = [...pauses]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 10)
    .map((p) => ({ kind: p.kind, ms: Math.round(p.ms * 100) / 100, atMs: Math.round(p.atMs) }));
  return {
    windowMs: Math.round(windowMs),
    // The delay past the 1 ms sampling timer: how long a ready callback waited for the loop.
    loopDelayMs: {
      p50: ms(loop.percentile(50)),
      p99: ms(loop.percentile(99)),
      p999: ms(loop.percentile(99.9)),
      max: ms(loop.max),
      samples: loop.count,
    },
    gc: { byKind, longest, pausedMsPerSecond: Math.round((pausedMs / windowMs) * 1e5) / 100 },
  };
}

if (dir !== undefined && dir !== '') install(dir);

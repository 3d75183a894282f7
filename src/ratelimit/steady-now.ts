/**
 * The clock the counters reckon windows, deadlines and leases on.
 */

/**
 * Milliseconds since the epoch on the monotonic clock: `Date.now()` as it read when the process
 * started, plus the time elapsed since. An NTP step or a clock set by hand moves `Date.now()`,
 * never this, so a step can neither reopen a window nor end one early. (A host suspend pauses
 * it: windows then end late, which admits less, never more.)
 */
export function steadyNow(): number {
  return performance.timeOrigin + performance.now();
}

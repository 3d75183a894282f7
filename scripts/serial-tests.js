// The test files `npm test` runs alone, one at a time, after the others (which run two at a
// time, scripts/run-tests.js). A file belongs here when running beside another test process
// could make it fail without a bug: it asserts that something happened within a short time
// (a CPU the other process holds makes it late), it depends on where a rate-limit window
// starts or ends, or it stops, freezes or kills processes and bounds how fast the rest recover.
// Shared state is not a reason: every test already uses its own ports (port 0), SQLite files,
// PostgreSQL databases, Redis key prefixes, temporary folders, slapd and private servers; a new
// test that shares something with another file must get its own instead, or be listed here.
//
// Each entry says why. run-tests.js refuses to start when an entry names no file.
export const serialTests = new Map([
  // GatewayScript: time limits of 200 ms to 2 s, event-loop lag under 100 ms, another API's
  // script answered within 500 ms (the isolation file failed once under outside load alone).
  ['test/policies/gatewayscript-isolation.test.ts', 'event-loop lag < 100 ms; other scripts within 500 ms'],
  ['test/policies/gatewayscript.test.ts', 'a 200 ms script time limit, stopped within 1 s'],
  ['test/policies/gatewayscript-fuzz.test.ts', 'scripts under a time limit; heap growth bounds'],
  ['test/policies/gatewayscript-read-ahead.test.ts', 'scripts under a 2 s time limit'],
  ['test/policies/gatewayscript-writes.test.ts', 'scripts under a 2 s time limit'],
  ['test/policies/gatewayscript-inline.test.ts', 'a 1 ms slice; event-loop lag < 100 ms during a spin'],
  ['test/policies/invoke.test.ts', 'a 1 s invoke timeout answered within 2.5 s; 200 ms script limit'],
  ['test/gateway/script-isolation.test.ts', 'another API answers within 100 ms during a script storm'],
  // XML amplification: refused within 200 ms / 1 s, and against a baseline measured in the test.
  ['test/soap/xml-amplification.test.ts', 'refused within 200 ms; within 3x a measured baseline'],
  ['test/soap/xml-amplification-gateway.test.ts', 'refused within 1 s; another API within 100 ms'],
  // Timings compared with each other: sign-up must not reveal whether an account exists.
  ['test/portal/accounts.test.ts', 'compares the medians of two sign-up timings'],
  // Expiry races: JWKS refresh 1 s / stale 3 s, introspection answers cached until exp (2 s).
  ['test/gateway/jwt-validate.test.ts', 'JWKS refresh 1 s and max stale 3 s, raced with 1.1-2.2 s waits'],
  ['test/gateway/oauth2-introspection.test.ts', 'two calls must land before a 1-2 s exp; 2 s timeout'],
  // Rate-limit windows, Redis frozen (SIGSTOP) or held back by relays, exact counts under stress.
  ['test/ratelimit/counter-store.test.ts', '11 hits must land in one 1 s window'],
  ['test/ratelimit/exact-stress.test.ts', 'bursts across 1 s window boundaries; relays held 250-700 ms'],
  ['test/ratelimit/redis-failure.test.ts', 'Redis frozen; 200 ms timeouts; every hit within a bound'],
  ['test/ratelimit/lease-prefetch.test.ts', 'leases idle after 200 ms; Redis frozen'],
  ['test/ratelimit/redis-processes.test.ts', 'two processes on one key inside one window'],
  // Clusters: nodes stopped, killed or drained, and changes bounded to reach every node in time.
  ['test/cluster/cluster.test.ts', 'an approval and a revocation reach every node within 1 s'],
  ['test/cluster/store-outage.test.ts', 'PostgreSQL restarted; a change served by every node within 1.5 s'],
  ['test/cluster/exact-limits.test.ts', 'nodes stopped 300 ms at a time under a 2,000-call burst'],
  ['test/cluster/drain.test.ts', 'a node SIGTERMed under load with 500 ms windows: no client error'],
  ['test/oauth/revocation-cluster.test.ts', 'a revocation refused on the other node within 1.5 s'],
  // Imports off the main thread: a gateway call answered within 500 ms during a large import.
  ['test/definitions/import-responsiveness.test.ts', 'gateway calls within 500 ms during a 20,000-path import'],
]);

#!/bin/sh
# Ten bursts of the issue-15 exactness test (docs/rate-limits.md, "Exact under stress"):
# three gateway processes, a private redis-server, a 100/hour plan, one node SIGSTOPped 300 ms
# at a time during each burst of 2,000 calls. Every burst must admit exactly 100.
cd "$(dirname "$0")/.." && PORTICO_EXACT_RUNS="${PORTICO_EXACT_RUNS:-10}" exec node --import tsx --test --test-concurrency=1 test/cluster/exact-limits.test.ts

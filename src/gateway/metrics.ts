/**
 * The gateway's request metrics, counted in plain numbers per API on the request path and turned
 * into Prometheus series only when `/metrics` is scraped.
 *
 * prom-client's labelled `inc`/`observe` build and hash a label set on every call (2 % of a
 * gateway's CPU per request); here a request adds to a per-API tally found by one Map lookup,
 * and the tallies are registered with prom-client's registry as two metrics whose `get()`
 * returns the series in prom-client's own shape, so `/metrics` prints them like any other.
 * Each process counts its own requests (a `--workers N` worker answers /metrics for itself).
 */
import { register } from 'prom-client';

/** Histogram bucket upper bounds, seconds. */
const durationBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** One API's counts since the process started. */
interface ApiTally {
  readonly byStatus: Map<number, number>;
  /** Per bucket (not cumulative); the last slot counts what is above every bound. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

const tallies = new Map<string, ApiTally>();

/** Counts one answered request of `api` (its name; '' when no API matched). */
export function recordRequest(api: string, status: number, seconds: number): void {
  let tally = tallies.get(api);
  if (tally === undefined) {
    tally = { byStatus: new Map(), buckets: new Float64Array(durationBuckets.length + 1), sum: 0, count: 0 };
    tallies.set(api, tally);
  }
  tally.byStatus.set(status, (tally.byStatus.get(status) ?? 0) + 1);
  let bucket = 0;
  while (bucket < durationBuckets.length && seconds > durationBuckets[bucket]) bucket++;
  tally.buckets[bucket]++;
  tally.sum += seconds;
  tally.count++;
}

/** One series as prom-client's registry prints it (`metricName` for a histogram's _bucket/_sum/_count). */
interface SeriesValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric prom-client's registry can print: a name, help, type and the series at scrape. */
interface ScrapedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<{
    name: string;
    help: string;
    type: 'counter' | 'histogram';
    aggregator: 'sum';
    values: SeriesValue[];
  }>;
  reset(): void;
}

function scraped(
  name: string,
  help: string,
  type: 'counter' | 'histogram',
  values: () => SeriesValue[],
): ScrapedMetric {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: () => Promise.resolve({ name, help, type, aggregator: 'sum', values: values() }),
    reset: () => tallies.clear(),
  };
}

const requestsTotal = scraped(
  'portico_gateway_requests_total',
  'Requests answered by the gateway, by API and status',
  'counter',
  () => {
    const values: SeriesValue[] = [];
    for (const [api, tally] of tallies)
      for (const [status, count] of tally.byStatus) values.push({ labels: { api, status }, value: count });
    return values;
  },
);

const durationName = 'portico_gateway_request_duration_seconds';
const requestSeconds = scraped(durationName, 'Time from request to response end, by API', 'histogram', () => {
  const values: SeriesValue[] = [];
  for (const [api, tally] of tallies) {
    let cumulative = 0;
    for (let i = 0; i < durationBuckets.length; i++) {
      cumulative += tally.buckets[i];
      values.push({
        labels: { le: durationBuckets[i], api },
        value: cumulative,
        metricName: `${durationName}_bucket`,
      });
    }
    values.push({ labels: { le: '+Inf', api }, value: tally.count, metricName: `${durationName}_bucket` });
    values.push({ labels: { api }, value: tally.sum, metricName: `${durationName}_sum` });
    values.push({ labels: { api }, value: tally.count, metricName: `${durationName}_count` });
  }
  return values;
});

// prom-client's registry takes any object with a name and a get(); its types only name its own classes.
register.registerMetric(requestsTotal as unknown as Parameters<typeof register.registerMetric>[0]);
register.registerMetric(requestSeconds as unknown as Parameters<typeof register.registerMetric>[0]);

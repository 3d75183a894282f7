/**
 * The gateway's request metrics, counted in plain numbers per API on the request path and turned
 * into Prometheus series only when `/metrics` is scraped. An API is its organization, catalog,
 * name and version: two organizations' `orders` APIs are two series, not one.
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

/** What the metrics read of an API (CompiledApi); undefined when no API matched the request. */
export interface MeteredApi {
  readonly orgName: string;
  readonly catalogName: string;
  readonly name: string;
  readonly version: string;
}

/** One API's counts since the process started. */
interface ApiTally {
  readonly labels: Readonly<Record<'org' | 'catalog' | 'api' | 'version', string>>;
  readonly byStatus: Map<number, number>;
  /** Per bucket (not cumulative); the last slot counts what is above every bound. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

// By the API's identity text; a snapshot's new CompiledApi finds its predecessor's tally through
// it (counters never restart at a reload), and each CompiledApi builds that text once.
const tallies = new Map<string, ApiTally>();
const keys = new WeakMap<MeteredApi, string>();
const unmatched = '';

function tallyOf(api: MeteredApi | undefined): ApiTally {
  let key = api === undefined ? unmatched : keys.get(api);
  if (key === undefined) {
    // JSON keeps `a/b` + `c` apart from `a` + `b/c`.
    key = JSON.stringify([api!.orgName, api!.catalogName, api!.name, api!.version]);
    keys.set(api!, key);
  }
  let tally = tallies.get(key);
  if (tally === undefined) {
    const labels = api
      ? { org: api.orgName, catalog: api.catalogName, api: api.name, version: api.version }
      : { org: '', catalog: '', api: '', version: '' };
    tally = { labels, byStatus: new Map(), buckets: new Float64Array(durationBuckets.length + 1), sum: 0, count: 0 };
    tallies.set(key, tally);
  }
  return tally;
}

/** Counts one answered request of `api` (undefined when no API matched). */
export function recordRequest(api: MeteredApi | undefined, status: number, seconds: number): void {
  const tally = tallyOf(api);
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
    for (const tally of tallies.values())
      for (const [status, count] of tally.byStatus) values.push({ labels: { ...tally.labels, status }, value: count });
    return values;
  },
);

const durationName = 'portico_gateway_request_duration_seconds';
const requestSeconds = scraped(durationName, 'Time from request to response end, by API', 'histogram', () => {
  const values: SeriesValue[] = [];
  for (const tally of tallies.values()) {
    const { labels } = tally;
    let cumulative = 0;
    for (let i = 0; i < durationBuckets.length; i++) {
      cumulative += tally.buckets[i];
      values.push({
        labels: { le: durationBuckets[i], ...labels },
        value: cumulative,
        metricName: `${durationName}_bucket`,
      });
    }
    values.push({ labels: { le: '+Inf', ...labels }, value: tally.count, metricName: `${durationName}_bucket` });
    values.push({ labels, value: tally.sum, metricName: `${durationName}_sum` });
    values.push({ labels, value: tally.count, metricName: `${durationName}_count` });
  }
  return values;
});

// prom-client's registry takes any object with a name and a get(); its types only name its own classes.
register.registerMetric(requestsTotal as unknown as Parameters<typeof register.registerMetric>[0]);
register.registerMetric(requestSeconds as unknown as Parameters<typeof register.registerMetric>[0]);

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { register } from 'prom-client';
import { recordRequest } from '../../src/gateway/metrics.ts';

const api = { orgName: 'acme', catalogName: 'sandbox', name: 'metrics-test', version: '1.0.0' };
const labels = 'org="acme",catalog="sandbox",api="metrics-test",version="1.0.0"';

describe('gateway request metrics', () => {
  test('are counted per API and status and printed as a Prometheus counter and histogram', async () => {
    recordRequest(api, 200, 0.0007);
    recordRequest({ ...api }, 200, 0.0009); // a reloaded snapshot's copy of the API counts on
    recordRequest(api, 200, 0.001);
    recordRequest(api, 404, 2);
    const text = await register.metrics();
    const lines = text.split('\n').filter((line) => line.includes('api="metrics-test"'));
    assert.deepEqual(lines, [
      `portico_gateway_requests_total{${labels},status="200"} 3`,
      `portico_gateway_requests_total{${labels},status="404"} 1`,
      `portico_gateway_request_duration_seconds_bucket{le="0.0005",${labels}} 0`,
      `portico_gateway_request_duration_seconds_bucket{le="0.001",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="0.0025",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="0.005",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="0.01",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="0.025",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="0.05",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="0.1",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="0.25",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="0.5",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="1",${labels}} 3`,
      `portico_gateway_request_duration_seconds_bucket{le="2.5",${labels}} 4`,
      `portico_gateway_request_duration_seconds_bucket{le="5",${labels}} 4`,
      `portico_gateway_request_duration_seconds_bucket{le="10",${labels}} 4`,
      `portico_gateway_request_duration_seconds_bucket{le="+Inf",${labels}} 4`,
      `portico_gateway_request_duration_seconds_sum{${labels}} 2.0026`,
      `portico_gateway_request_duration_seconds_count{${labels}} 4`,
    ]);
    assert.match(text, /^# TYPE portico_gateway_requests_total counter$/m);
    assert.match(text, /^# TYPE portico_gateway_request_duration_seconds histogram$/m);
  });

  test("two organizations' APIs of one name are two series", async () => {
    recordRequest({ ...api, orgName: 'globex', name: 'shared-name' }, 200, 0.001);
    recordRequest({ ...api, orgName: 'initech', name: 'shared-name' }, 200, 0.001);
    recordRequest({ ...api, orgName: 'initech', name: 'shared-name' }, 200, 0.001);
    const text = await register.metrics();
    const series = (org: string) =>
      `portico_gateway_requests_total{org="${org}",catalog="sandbox",api="shared-name",version="1.0.0",status="200"}`;
    assert.ok(text.includes(`${series('globex')} 1`), text);
    assert.ok(text.includes(`${series('initech')} 2`), text);
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { register } from 'prom-client';
import { recordRequest } from '../../src/gateway/metrics.ts';

describe('gateway request metrics', () => {
  test('are counted per API and status and printed as a Prometheus counter and histogram', async () => {
    recordRequest('metrics-test', 200, 0.0007);
    recordRequest('metrics-test', 200, 0.0009);
    recordRequest('metrics-test', 200, 0.001);
    recordRequest('metrics-test', 404, 2);
    const text = await register.metrics();
    const lines = text.split('\n').filter((line) => line.includes('api="metrics-test"'));
    assert.deepEqual(lines, [
      'portico_gateway_requests_total{api="metrics-test",status="200"} 3',
      'portico_gateway_requests_total{api="metrics-test",status="404"} 1',
      'portico_gateway_request_duration_seconds_bucket{le="0.0005",api="metrics-test"} 0',
      'portico_gateway_request_duration_seconds_bucket{le="0.001",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="0.0025",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="0.005",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="0.01",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="0.025",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="0.05",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="0.1",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="0.25",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="0.5",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="1",api="metrics-test"} 3',
      'portico_gateway_request_duration_seconds_bucket{le="2.5",api="metrics-test"} 4',
      'portico_gateway_request_duration_seconds_bucket{le="5",api="metrics-test"} 4',
      'portico_gateway_request_duration_seconds_bucket{le="10",api="metrics-test"} 4',
      'portico_gateway_request_duration_seconds_bucket{le="+Inf",api="metrics-test"} 4',
      'portico_gateway_request_duration_seconds_sum{api="metrics-test"} 2.0026',
      'portico_gateway_request_duration_seconds_count{api="metrics-test"} 4',
    ]);
    assert.match(text, /^# TYPE portico_gateway_requests_total counter$/m);
    assert.match(text, /^# TYPE portico_gateway_request_duration_seconds histogram$/m);
  });
});

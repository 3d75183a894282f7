// The scenario's definition files: parse as YAML and carry the API Connect fields the gateway imports.
// Deliberately independent of src/definitions: these checks read the documents directly.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { runInNewContext } from 'node:vm';
import { parse } from 'yaml';
import { startSamples } from '../../samples/index.ts';
import type { RunningSamples } from '../../samples/index.ts';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const dir = new URL('../../examples/accessories/', import.meta.url);

async function load(name: string): Promise<Doc> {
  return parse(await readFile(new URL(name, dir), 'utf8')) as Doc;
}

/** Every policy of an assembly, depth first, through operation-switch and switch cases. */
function policies(execute: Doc[]): [string, Doc][] {
  const found: [string, Doc][] = [];
  for (const step of execute) {
    const [[name, config]] = Object.entries(step) as [string, Doc][];
    found.push([name, config]);
    for (const branch of config.case ?? []) found.push(...policies(branch.execute ?? branch.otherwise ?? []));
    if (Array.isArray(config.otherwise)) found.push(...policies(config.otherwise));
  }
  return found;
}

/** Resolves a local `$ref` JSON pointer against the whole document. */
function resolve(doc: Doc, ref: string): unknown {
  assert.ok(ref.startsWith('#/'), ref);
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, part) => (node as Doc | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** Every `$ref` value in a document. */
function refs(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refs);
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? [value] : refs(value),
  );
}

function invokes(doc: Doc): Doc[] {
  return policies(doc['x-ibm-configuration'].assembly.execute)
    .filter(([name]) => name === 'invoke')
    .map(([, config]) => config);
}

const apiFiles = ['financing.yaml', 'logistics.yaml', 'inventory.yaml'];

describe('API definitions', () => {
  test('the folder holds the scenario files', async () => {
    const files = (await readdir(dir)).sort();
    assert.deepEqual(files, [
      'accessories-product.yaml',
      'financing.wsdl',
      'financing.yaml',
      'inventory-product.yaml',
      'inventory.yaml',
      'logistics.yaml',
    ]);
  });

  const identity: Record<string, [string, string, string]> = {
    'financing.yaml': ['financing', '1.0.0', '/financing'],
    'logistics.yaml': ['logistics', '2.0.0', '/logistics'],
    'inventory.yaml': ['inventory', '1.0.0', '/api'],
  };
  for (const file of apiFiles) {
    test(`${file}: Swagger 2.0 for the DataPower API Gateway, policies at version 2.0.0`, async () => {
      const doc = await load(file);
      const [name, version, basePath] = identity[file];
      assert.equal(doc.swagger, '2.0');
      assert.equal(doc.info['x-ibm-name'], name);
      assert.equal(doc.info.title, name);
      assert.equal(doc.info.version, version);
      assert.equal(doc.basePath, basePath);
      assert.deepEqual(doc.securityDefinitions.clientID, {
        type: 'apiKey',
        in: 'header',
        name: 'X-IBM-Client-Id',
        description: '',
      });
      assert.deepEqual(doc.security, [{ clientID: [] }]);
      const config = doc['x-ibm-configuration'];
      assert.equal(config.gateway, 'datapower-api-gateway');
      const all = policies(config.assembly.execute);
      assert.ok(all.length > 0);
      for (const [policy, settings] of all)
        assert.equal(settings.version, '2.0.0', `${file}: ${policy} "${settings.title}"`);
    });

    test(`${file}: every $ref resolves inside the document`, async () => {
      const doc = await load(file);
      for (const ref of refs(doc)) assert.ok(resolve(doc, ref), `${file}: ${ref}`);
    });

    test(`${file}: every $(property) used by an invoke is declared, with a sandbox value`, async () => {
      const doc = await load(file);
      const config = doc['x-ibm-configuration'];
      for (const invoke of invokes(doc)) {
        for (const [, name] of (invoke['target-url'] as string).matchAll(/\$\(([^)]+)\)/g)) {
          if (name.startsWith('request.')) continue;
          assert.equal(typeof config.properties[name].value, 'string', name);
          assert.equal(typeof config.catalogs.sandbox.properties[name], 'string', name);
        }
      }
    });
  }
});

describe('financing.yaml', () => {
  test('GET /calculate takes three required numeric query parameters and returns paymentAmount', async () => {
    const doc = await load('financing.yaml');
    const operation = doc.paths['/calculate'].get;
    const params = Object.fromEntries(
      operation.parameters.map((p: Doc) => [p.name, [p.in, p.required, p.type, p.format]]),
    );
    assert.deepEqual(params, {
      amount: ['query', true, 'number', 'float'],
      duration: ['query', true, 'integer', 'int32'],
      rate: ['query', true, 'number', 'float'],
    });
    assert.equal(operation.responses['200'].schema.$ref, '#/definitions/paymentAmount');
    assert.deepEqual(doc.definitions.paymentAmount.properties.paymentAmount, {
      type: 'number',
      format: 'float',
      description: 'Monthly payment amount',
      example: 199.99,
    });
  });

  test('the assembly is map → invoke → map with the REST↔SOAP mappings', async () => {
    const doc = await load('financing.yaml');
    const steps = doc['x-ibm-configuration'].assembly.execute.map((step: Doc) => Object.keys(step)[0]);
    assert.deepEqual(steps, ['map', 'invoke', 'map']);
    const [{ map: input }, { invoke }, { map: output }] = doc['x-ibm-configuration'].assembly.execute;
    assert.deepEqual(input.actions.slice(0, 2), [
      { set: 'content-type', default: 'text/xml' },
      { set: 'SOAPAction', default: 'http://thinkibm-services.mybluemix.net/financing' },
    ]);
    for (const field of ['amount', 'duration', 'rate']) {
      assert.ok(
        input.actions.some((a: Doc) => a.set === `body.Envelope.Body.financingRequest.${field}` && a.from === field),
        field,
      );
      assert.equal(input.inputs[field].variable, `request.parameters.${field}`);
    }
    assert.equal(input.outputs.body.content, 'application/xml');
    assert.deepEqual(
      [invoke['target-url'], invoke.verb, invoke.output],
      ['$(financing_svc_url)', 'POST', 'financingOut'],
    );
    assert.equal(output.inputs.input.variable, 'financingOut.body');
    assert.deepEqual(output.actions[0], {
      set: 'output.paymentAmount',
      from: 'input.Envelope.Body.financingResult.paymentAmount',
    });
    assert.equal(output.outputs.output.schema.$ref, '#/definitions/paymentAmount');
    assert.equal(output.outputs.output.content, 'application/json');
  });

  test('the WSDL target carries the service, SOAP action and namespaced definitions', async () => {
    const doc = await load('financing.yaml');
    const config = doc['x-ibm-configuration'];
    assert.equal(config.properties.financing_svc_url.value, 'http://127.0.0.1:9081/financing/calculate');
    const target = config.targets.financingService;
    assert.deepEqual(target['x-ibm-configuration'], {
      type: 'wsdl',
      'wsdl-definition': {
        wsdl: 'financing.wsdl',
        service: 'financingService',
        port: 'financingPort',
        'soap-version': '1.1',
      },
    });
    assert.deepEqual(target.paths['/financing'].post['x-ibm-soap'], {
      'soap-action': 'http://thinkibm-services.mybluemix.net/financing',
      'soap-operation': '{http://thinkibm-services.mybluemix.net}financing',
    });
    const soap = { prefix: 'soap-env', namespace: 'http://schemas.xmlsoap.org/soap/envelope/' };
    const ser = { prefix: 'ser', namespace: 'http://thinkibm-services.mybluemix.net' };
    for (const [wrapper, element] of [
      ['financingInput', 'financingRequest'],
      ['financingOutput', 'financingResult'],
    ]) {
      const envelope = target.definitions[wrapper].properties.Envelope;
      assert.deepEqual(envelope.xml, soap);
      assert.deepEqual(envelope.properties.Body.xml, soap);
      assert.equal(
        envelope.properties.Body.properties[element].$ref,
        `#/x-ibm-configuration/targets/financingService/definitions/${element}`,
      );
      assert.deepEqual(target.definitions[element].xml, ser);
    }
    assert.deepEqual(Object.keys(target.definitions.financingRequest.properties), ['amount', 'duration', 'rate']);
    assert.deepEqual(target.definitions.financingResult.properties.paymentAmount.xml, ser);
  });
});

describe('logistics.yaml', () => {
  test('activity log keeps payload on success and activity on error, with buffering', async () => {
    const config = (await load('logistics.yaml'))['x-ibm-configuration'];
    assert.deepEqual(config['activity-log'], {
      enabled: true,
      'success-content': 'payload',
      'error-content': 'activity',
    });
    assert.equal(config.buffering, true);
    assert.deepEqual(Object.keys(config.properties).sort(), ['geocode_url', 'maps_url', 'shipping_svc_url']);
    assert.equal(config.properties.maps_url.value, 'https://www.google.com/maps');
  });

  test('the operation switch has one case per operation of the paths', async () => {
    const doc = await load('logistics.yaml');
    const [first] = doc['x-ibm-configuration'].assembly.execute;
    const cases = first['operation-switch'].case.map((branch: Doc) => branch.operations);
    assert.deepEqual(cases, [['shipping.calc'], ['get.stores']]);
    assert.deepEqual(
      [doc.paths['/shipping'].get.operationId, doc.paths['/stores'].get.operationId],
      ['shipping.calc', 'get.stores'],
    );
    for (const path of ['/shipping', '/stores']) {
      assert.deepEqual(doc.paths[path].get.parameters[0], {
        ...doc.paths[path].get.parameters[0],
        name: 'zip',
        in: 'query',
        required: true,
        type: 'string',
      });
    }
  });

  test('shipping.calc invokes both vendors without stopping on error, then maps six rates', async () => {
    const doc = await load('logistics.yaml');
    const [shipping] = doc['x-ibm-configuration'].assembly.execute[0]['operation-switch'].case;
    const [{ invoke: xyz }, { invoke: cek }, { map }] = shipping.execute;
    assert.deepEqual(
      [xyz.title, xyz['target-url'], xyz.output, xyz['stop-on-error']],
      ['invoke_xyz', '$(shipping_svc_url)?company=xyz&from_zip=90210&to_zip={zip}', 'xyz_response', []],
    );
    assert.deepEqual(
      [cek.title, cek['target-url'], cek.output, cek['stop-on-error']],
      ['invoke_cek', '$(shipping_svc_url)?company=cek&from_zip=90210&to_zip={zip}', 'cek_response', []],
    );
    assert.deepEqual(map.inputs.xyz, {
      schema: { $ref: '#/definitions/xyz_shipping_rsp' },
      variable: 'xyz_response.body',
      content: 'application/json',
    });
    assert.deepEqual(map.inputs.cek, {
      schema: { $ref: '#/definitions/cek_shipping_rsp' },
      variable: 'cek_response.body',
      content: 'application/json',
    });
    assert.equal(map.outputs.output.schema.$ref, '#/definitions/shipping');
    const expected = ['xyz', 'cek'].flatMap((vendor) =>
      ['next_day', 'two_day', 'ground'].map((rate) => ({
        set: `output.${vendor}.${rate}`,
        from: `${vendor}.rates.${rate}`,
      })),
    );
    assert.deepEqual(map.actions, expected);
  });

  test('get.stores invokes the geocoder and formats maps_link in GatewayScript', async () => {
    const doc = await load('logistics.yaml');
    const stores = doc['x-ibm-configuration'].assembly.execute[0]['operation-switch'].case[1];
    const [{ invoke }, { gatewayscript }] = stores.execute;
    assert.deepEqual(
      [invoke['target-url'], invoke.output, invoke['stop-on-error']],
      ['$(geocode_url)?&address={zip}', 'geocode_response', []],
    );
    assert.match(gatewayscript.source, /context\.get\('geocode_response\.body'\)/);
    assert.match(gatewayscript.source, /context\.get\('api\.properties\.maps_url'\)/);
    assert.deepEqual(doc.definitions.store_location.required, ['maps_link']);
  });
});

describe('product definitions', () => {
  test('Accessories: authenticated visibility, Silver 100/1hour, Gold approval and unlimited', async () => {
    const product = await load('accessories-product.yaml');
    assert.equal(product.product, '1.0.0');
    assert.deepEqual(
      [product.info.name, product.info.title, product.info.version],
      ['accessories', 'Accessories', '1.0.0'],
    );
    assert.equal(product.info.contact.email, 'watson@ibm.com');
    assert.equal(product.info.license.url, 'https://opensource.org/licenses/MIT');
    assert.equal(product.visibility.view.type, 'authenticated');
    assert.equal(product.visibility.subscribe.type, 'authenticated');
    assert.deepEqual(product.plans.silver, {
      title: 'Silver',
      description: 'Limited access to the Accessories APIs',
      approval: false,
      'rate-limits': { default: { value: '100/1hour', 'hard-limit': true } },
    });
    assert.equal(product.plans.gold.title, 'Gold');
    assert.equal(product.plans.gold.approval, true);
    assert.equal(product.plans.gold['rate-limits'], undefined);
    assert.deepEqual(product.apis, {
      financing: { name: 'financing:1.0.0' },
      logistics: { name: 'logistics:2.0.0' },
    });
  });

  test('Inventory: public view, one default plan without approval', async () => {
    const product = await load('inventory-product.yaml');
    assert.deepEqual(
      [product.info.name, product.info.title, product.info.version],
      ['inventory', 'Inventory', '1.0.0'],
    );
    assert.equal(product.visibility.view.type, 'public');
    assert.equal(product.visibility.subscribe.type, 'authenticated');
    assert.deepEqual(Object.keys(product.plans), ['default']);
    assert.equal(product.plans.default.approval, false);
    assert.deepEqual(product.apis, { inventory: { name: 'inventory:1.0.0' } });
  });

  test('every API a product names is one of the example APIs', async () => {
    const available = new Set<string>();
    for (const file of apiFiles) {
      const doc = await load(file);
      available.add(`${doc.info['x-ibm-name']}:${doc.info.version}`);
    }
    for (const file of ['accessories-product.yaml', 'inventory-product.yaml']) {
      for (const api of Object.values((await load(file)).apis) as Doc[])
        assert.ok(available.has(api.name), `${file}: ${api.name}`);
    }
  });
});

describe('definitions against the sample backends', () => {
  let samples: RunningSamples;
  before(async () => {
    samples = await startSamples({ financing: 0, shipping: 0, geocoder: 0, inventory: 0 });
  });
  after(() => samples.close());

  /** Points a demo URL (fixed 908x port) at the running sample. */
  function live(url: string, base: string): string {
    return url.replace(/^http:\/\/127\.0\.0\.1:\d+/, base);
  }

  test('the vendor URLs, filled in, reach the shipping service', async () => {
    const doc = await load('logistics.yaml');
    const base = live(doc['x-ibm-configuration'].properties.shipping_svc_url.value, samples.urls.shipping);
    for (const invoke of invokes(doc).slice(0, 2)) {
      const url = (invoke['target-url'] as string).replace('$(shipping_svc_url)', base).replace('{zip}', '90210');
      const response = await fetch(url);
      assert.equal(response.status, 200);
      const body = (await response.json()) as { company: string; rates: { ground: string } };
      assert.equal(body.rates.ground, body.company === 'xyz' ? '19.85' : '18.04');
    }
  });

  /** Runs the get.stores script against a minimal stand-in for the gateway's context object. */
  function runStoresScript(source: string, geocodeBody: unknown) {
    const written: unknown[] = [];
    const rejected: [string, string][] = [];
    const headers = new Map<string, string>();
    const variables: Record<string, unknown> = {
      'geocode_response.body': geocodeBody,
      'api.properties.maps_url': 'https://www.google.com/maps',
    };
    const context = {
      get: (name: string) => variables[name],
      reject: (name: string, message: string) => rejected.push([name, message]),
      message: {
        statusCode: '200 OK',
        header: { set: (n: string, v: string) => headers.set(n.toLowerCase(), v) },
        body: { write: (v: unknown) => written.push(v) },
      },
    };
    runInNewContext(source, { context });
    // Objects built inside the vm have another realm's prototypes: compare them as JSON.
    return {
      written: JSON.parse(JSON.stringify(written)) as unknown[],
      rejected,
      headers,
      statusCode: context.message.statusCode,
    };
  }

  test('the get.stores script turns the geocoder reply for 90210 into maps_link', async () => {
    const doc = await load('logistics.yaml');
    const script =
      doc['x-ibm-configuration'].assembly.execute[0]['operation-switch'].case[1].execute[1].gatewayscript.source;
    const geocodeUrl = live(doc['x-ibm-configuration'].properties.geocode_url.value, samples.urls.geocoder);
    const reply = await (await fetch(`${geocodeUrl}?&address=90210`)).json();
    const { written, headers } = runStoresScript(script, reply);
    const { lat, lng } = (reply as { results: { geometry: { location: { lat: number; lng: number } } }[] }).results[0]
      .geometry.location;
    assert.deepEqual(written, [{ maps_link: `https://www.google.com/maps?q=${lat},${lng}` }]);
    assert.equal(headers.get('content-type'), 'application/json');
  });

  test('the get.stores script rejects an unknown zip instead of throwing', async () => {
    const doc = await load('logistics.yaml');
    const script =
      doc['x-ibm-configuration'].assembly.execute[0]['operation-switch'].case[1].execute[1].gatewayscript.source;
    const geocodeUrl = live(doc['x-ibm-configuration'].properties.geocode_url.value, samples.urls.geocoder);
    const reply = await (await fetch(`${geocodeUrl}?&address=00000`)).json();
    const { written, rejected, statusCode } = runStoresScript(script, reply);
    assert.deepEqual(written, []);
    assert.equal(rejected[0][0], 'NotFound');
    assert.match(statusCode, /^404/);
  });

  test('inventory: property + request.path reaches every operation of the definition', async () => {
    const doc = await load('inventory.yaml');
    const [invoke] = invokes(doc);
    const origin = live(doc['x-ibm-configuration'].properties.inventory_svc_url.value, samples.urls.inventory);
    for (const [path, operations] of Object.entries(doc.paths as Doc)) {
      for (const method of Object.keys(operations).filter((key) => key !== 'parameters')) {
        // request.path on the gateway is basePath + path, below the org and catalog.
        const requestPath = `${doc.basePath}${path.replace('{id}', '3')}`;
        const url = (invoke['target-url'] as string)
          .replace('$(inventory_svc_url)', origin)
          .replace('$(request.path)', requestPath)
          .replace('$(request.search)', '');
        const body = ['post', 'put'].includes(method)
          ? JSON.stringify({ name: 'Tray', description: 'A tray', img: 'tray.jpg', price: 3 })
          : undefined;
        const response = await fetch(url, {
          method: method.toUpperCase(),
          body,
          headers: body ? { 'content-type': 'application/json' } : {},
        });
        assert.equal(response.status, 200, `${method} ${requestPath}`);
        await response.arrayBuffer();
      }
    }
  });

  test('financing: the WSDL address is the financing_svc_url property', async () => {
    const doc = await load('financing.yaml');
    const wsdl = await readFile(new URL('financing.wsdl', dir), 'utf8');
    assert.ok(wsdl.includes(`location="${doc['x-ibm-configuration'].properties.financing_svc_url.value}"`));
  });
});

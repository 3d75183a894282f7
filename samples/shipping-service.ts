// Shipping vendor service for vendors xyz and cek, the backend of the logistics API's shipping.calc.
// Reproduces the original stub (ibm-apiconnect/pot-onprem-core docker/stubsvcs/routes/shipping.js).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readOnlyResource, sendJson, startSampleServer } from './http-server.ts';
import type { RunningSample, SampleServerOptions } from './http-server.ts';

/** Path of the rate calculator. */
export const SHIPPING_PATH = '/shipping/calculate';

/** Path of the vendor response's JSON schema. */
export const SHIPPING_SCHEMA_PATH = '/shipping/schema';

/** Vendor codes the service knows. */
export const SHIPPING_COMPANIES = ['xyz', 'cek'] as const;

/** A vendor code. */
export type ShippingCompany = (typeof SHIPPING_COMPANIES)[number];

/** The vendor reply: rates are strings with two decimals, as the original sends them. */
export interface ShippingQuote {
  company: ShippingCompany;
  rates: { next_day: string; two_day: string; ground: string };
}

/** Draft-04 JSON schema of a vendor reply (the `xyz_shipping_rsp` / `cek_shipping_rsp` definitions). */
export const SHIPPING_RESPONSE_SCHEMA = {
  $schema: 'http://json-schema.org/draft-04/schema#',
  title: 'Shipping vendor response',
  type: 'object',
  properties: {
    company: { type: 'string' },
    rates: {
      type: 'object',
      properties: {
        next_day: { type: 'string' },
        two_day: { type: 'string' },
        ground: { type: 'string' },
      },
      required: ['next_day', 'two_day', 'ground'],
    },
  },
  required: ['company', 'rates'],
} as const;

const ZIP = /^\d{5}$/;

/**
 * Rates between two zip codes: (from + to) / 10000, ×1.1 for xyz; next day ×1.9, two day ×1.3, ground ×1.
 * @example shippingQuote('xyz', '90210', '90210').rates.next_day // '37.71'
 */
export function shippingQuote(company: ShippingCompany, fromZip: string, toZip: string): ShippingQuote {
  let price = (parseInt(fromZip, 10) + parseInt(toZip, 10)) / 10000;
  price = company === 'xyz' ? price * 1.1 : price;
  return {
    company,
    rates: {
      next_day: Number(price * 1.9).toFixed(2),
      two_day: Number(price * 1.3).toFixed(2),
      ground: Number(price).toFixed(2),
    },
  };
}

function isCompany(value: string): value is ShippingCompany {
  return (SHIPPING_COMPANIES as readonly string[]).includes(value);
}

/** Validates the query; returns the error message or the inputs. */
function readQuery(
  query: URLSearchParams,
): { error: string } | { company: ShippingCompany; fromZip: string; toZip: string } {
  const company = query.get('company');
  if (company === null || company === '') return { error: 'query parameter company is required (xyz or cek)' };
  if (!isCompany(company)) return { error: `unknown company "${company}" (expected xyz or cek)` };
  const fromZip = query.get('from_zip');
  const toZip = query.get('to_zip');
  for (const [name, value] of [
    ['from_zip', fromZip],
    ['to_zip', toZip],
  ] as const) {
    if (value === null || value === '') return { error: `query parameter ${name} is required` };
    if (!ZIP.test(value)) return { error: `${name} must be a 5-digit zip code, got "${value}"` };
  }
  return { company, fromZip: fromZip as string, toZip: toZip as string };
}

function calculate(url: URL, res: ServerResponse): void {
  const query = readQuery(url.searchParams);
  if ('error' in query) {
    sendJson(res, 400, { error: query.error });
    return;
  }
  sendJson(res, 200, shippingQuote(query.company, query.fromZip, query.toZip));
}

/** Request handler of the shipping service. */
export function shippingHandler(req: IncomingMessage, res: ServerResponse): void {
  const url = readOnlyResource(req, res, [SHIPPING_PATH, SHIPPING_SCHEMA_PATH]);
  if (!url) return;
  if (url.pathname === SHIPPING_SCHEMA_PATH) sendJson(res, 200, SHIPPING_RESPONSE_SCHEMA);
  else calculate(url, res);
}

/** Starts the shipping vendor service (default demo port 9082). */
export function startShippingService(options: SampleServerOptions): Promise<RunningSample> {
  return startSampleServer('shipping', shippingHandler, options);
}

type Headers = Record<string, string>;

export interface WebAnswer {
  status: number;
  location: string;
  text: string;
  headers: globalThis.Headers;
}

/** A browser-like HTTP client for the portal and the console: keeps cookies, reads the CSRF token of the last page. */
export class WebClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(private readonly base: string) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: string, path: string, form?: Headers, headers: Headers = {}): Promise<WebAnswer> {
    const formType: Headers = form ? { 'content-type': 'application/x-www-form-urlencoded' } : {};
    const answer = await fetch(`${this.base}${path}`, {
      method,
      redirect: 'manual',
      headers: { cookie: this.cookieHeader(), ...formType, ...headers },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const line of answer.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (value === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await answer.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text);
    if (token) this.csrf = token[1];
    return {
      status: answer.status,
      location: answer.headers.get('location') ?? '',
      text,
      headers: answer.headers,
    };
  }

  get(path: string) {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string> = {}, withToken = true) {
    return this.request('POST', path, withToken ? { _csrf: this.csrf, ...form } : form);
  }

  /** Opens an absolute link (from an email) on this client's portal, with its cookies. */
  openLink(link: string) {
    const url = new URL(link);
    return this.get(`${url.pathname}${url.search}`);
  }

  async signIn(email: string, password: string): Promise<number> {
    await this.get('/sign-in');
    return (await this.post('/sign-in', { email, password, next: '/' })).status;
  }
}

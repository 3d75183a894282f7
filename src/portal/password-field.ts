/** The new-password field of sign-up, change and reset: one markup, the length and rules from account-rules. */
import { passwordMinLength, passwordRules } from '../services/account-rules.ts';
import { html } from '../web/html.ts';
import type { SafeHtml } from '../web/html.ts';

export function newPasswordField(name: string, label: string): SafeHtml {
  return html`<div class="field">
    <label for="${name}">${label}</label
    ><input
      type="password"
      id="${name}"
      name="${name}"
      autocomplete="new-password"
      required
      minlength="${passwordMinLength}"
      aria-describedby="password-rules"
    />
    <p class="hint" id="password-rules">The password must be ${passwordRules}.</p>
  </div>`;
}

// Verifies webhook deliveries captured by the server package's
// TestWebhookCapture with the standardwebhooks npm package, an
// implementation of Standard Webhooks independent of onboard's: every
// delivery must verify with every one of its secrets (two during a secret
// rotation). Run by .ci/run: node verify.mjs capture.json
import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";

const captures = JSON.parse(readFileSync(process.argv[2], "utf8"));
let checked = 0;
for (const c of captures) {
  for (const secret of c.secrets) {
    // The library takes the secret with or without its whsec_ prefix,
    // and throws when no signature in the header matches.
    const payload = new Webhook(secret).verify(c.body, c.headers);
    if (payload.id !== c.headers["webhook-id"]) {
      throw new Error(`verified payload id ${payload.id} is not webhook-id ${c.headers["webhook-id"]}`);
    }
    checked++;
  }
}
if (checked < 3) {
  throw new Error(`only ${checked} signatures checked; the capture is incomplete`);
}
console.log(`standardwebhooks (npm) verified ${checked} signatures of ${captures.length} deliveries`);

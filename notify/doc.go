// Package notify owns onboard's outbound messages: the email sent to
// applicants (invites, verification codes) and webhook delivery to
// partners.
//
// Email has two transports implementing onboarding.Mailer: SMTP, which talks
// to a relay over STARTTLS or implicit TLS, and Outbox, the sandbox transport
// that writes each message as an .eml file and logs its link. Both build the
// same RFC 5322 bytes, so what the sandbox shows is what production sends.
//
// RunWebhooks is the webhook delivery pool: it claims due deliveries from
// the Service, sends them on bounded workers and has each attempt recorded.
// Webhooks implements onboarding.WebhookTransport: one signed POST per
// attempt (Standard Webhooks), no redirects, no proxy, no cookies, and in
// production an address check at connect time, so that a receiver's name
// can never be made to point the server at its own network.
package notify

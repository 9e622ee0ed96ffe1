package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"onboard/admin"
	"onboard/onboarding"
)

// WebhooksCmd groups the webhook endpoint commands (docs/cli.md,
// docs/webhooks.md).
type WebhooksCmd struct {
	Add          WebhooksAddCmd          `cmd:"" help:"Register an endpoint and print its signing secret once."`
	List         WebhooksListCmd         `cmd:"" help:"List endpoints."`
	Remove       WebhooksRemoveCmd       `cmd:"" help:"Delete an endpoint; its queued deliveries are dropped."`
	Enable       WebhooksEnableCmd       `cmd:"" help:"Turn deliveries to an endpoint back on."`
	Disable      WebhooksDisableCmd      `cmd:"" help:"Stop deliveries to an endpoint; its queued deliveries are dropped."`
	Test         WebhooksTestCmd         `cmd:"" help:"Send a webhook.test event to an endpoint and print the event id."`
	RotateSecret WebhooksRotateSecretCmd `cmd:"" help:"Give an endpoint a new signing secret and print it once; the old one keeps signing for 24 hours."`
	Deliveries   WebhooksDeliveriesCmd   `cmd:"" help:"Show the delivery log, newest first."`
	Redeliver    WebhooksRedeliverCmd    `cmd:"" help:"Queue an event for delivery again."`
}

// notDelivering is what a command that queued a delivery through a says
// on stderr: nothing through a running server, which delivers it; on the
// store opened by this process, that only a server delivers.
func notDelivering(a adminOps) string {
	l, direct := a.(localAdmin)
	switch {
	case !direct:
		return ""
	case l.shared:
		return "No onboard server is running on this data directory: a server on the same database delivers it at once, or when `onboard serve` runs.\n"
	}
	return "No onboard server is running on this data directory: the delivery happens when `onboard serve` runs.\n"
}

// WebhooksAddCmd registers an endpoint. Its --event values reach the
// domain as given (sep:"none"): kong would split them, and turn an empty
// --event value into no event types, which means every type; the domain
// splits the commas and refuses an empty type.
type WebhooksAddCmd struct {
	Org         string   `help:"Organization the endpoint belongs to." required:"" placeholder:"ORG"`
	URL         string   `help:"Where deliveries are POSTed; https in production." name:"url" required:"" placeholder:"URL"`
	Event       []string `help:"Event type to receive (repeatable, or comma-separated), such as application.submitted. Default: every type." placeholder:"TYPE" sep:"none"`
	Description string   `help:"A note on who receives the deliveries (at most 200 characters)." placeholder:"TEXT"`
}

// Run prints the secret alone on stdout and the endpoint on stderr.
func (c *WebhooksAddCmd) Run(e *env) error {
	req := admin.AddEndpoint{OrgID: c.Org, URL: c.URL, Events: c.Event, Description: c.Description}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		added, err := a.AddEndpoint(ctx, req)
		if err != nil {
			return err
		}
		ep := added.Endpoint
		if err := e.printSecret(added.Secret); err != nil {
			if rerr := a.RemoveEndpoint(ctx, ep.ID); rerr != nil {
				return fmt.Errorf("the signing secret could not be written to stdout (%v), and removing the endpoint failed (%v): remove %s with onboard webhooks remove", err, rerr, ep.ID)
			}
			return fmt.Errorf("the signing secret could not be written to stdout (%v): the endpoint was removed at once; add it again", err)
		}
		desc := ""
		if ep.Description != "" {
			desc = fmt.Sprintf(", description %q", ep.Description)
		}
		fmt.Fprintf(e.stderr, "Added webhook endpoint %s for organization %q: %s (events: %s%s).\nThe signing secret above is shown only once: store it now.\n",
			ep.ID, ep.OrgID, ep.URL, eventsOf(ep), desc)
		return nil
	})
}

// eventsOf is an endpoint's event filter as the commands show it.
func eventsOf(ep admin.Endpoint) string {
	if len(ep.Events) == 0 {
		return "all"
	}
	return strings.Join(ep.Events, ",")
}

// WebhooksListCmd lists endpoints.
type WebhooksListCmd struct {
	Org  string `help:"Only this organization's endpoints." placeholder:"ORG"`
	JSON bool   `help:"Print JSON instead of a table." name:"json"`
}

// Run prints one line per endpoint, oldest first.
func (c *WebhooksListCmd) Run(e *env) error {
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		eps, err := a.ListEndpoints(ctx, c.Org)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(e.stdout, eps)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tORG\tURL\tEVENTS\tCREATED\tSTATUS\tDESCRIPTION")
		for _, ep := range eps {
			status, desc := "enabled", cmp.Or(ep.Description, "-")
			if !ep.Enabled {
				// "disabled: by the operator", "disabled: the endpoint answered 410 Gone"
				status = "disabled: " + strings.TrimPrefix(ep.DisabledReason, "disabled ")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ep.ID, ep.OrgID, ep.URL, eventsOf(ep),
				when(&ep.CreatedAt), status, desc)
		}
		return tw.Flush()
	})
}

// printJSON writes v as one indented JSON document.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// endpointArg is the argument of the commands that act on one endpoint.
type endpointArg struct {
	ID string `arg:"" name:"ID" help:"The endpoint's id (we_...), as webhooks list shows it."`
}

// check refuses an empty ID or one with control characters, before the
// command runs (a Validate hook would run before kong sees a missing ID).
func (a endpointArg) check() error { return checkIDArg("ID", a.ID) }

// WebhooksRemoveCmd deletes an endpoint.
type WebhooksRemoveCmd struct{ endpointArg }

// Run removes the endpoint.
func (c *WebhooksRemoveCmd) Run(e *env) error {
	if err := c.check(); err != nil {
		return err
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		if err := a.RemoveEndpoint(ctx, c.ID); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Removed webhook endpoint %s; its queued deliveries were dropped.\n", c.ID)
		return nil
	})
}

// WebhooksEnableCmd enables an endpoint.
type WebhooksEnableCmd struct{ endpointArg }

// Run enables the endpoint.
func (c *WebhooksEnableCmd) Run(e *env) error {
	if err := c.check(); err != nil {
		return err
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		ep, err := a.EnableEndpoint(ctx, c.ID)
		if err != nil {
			return err
		}
		if ep.Unchanged {
			fmt.Fprintf(e.stdout, "Webhook endpoint %s (%s) is already enabled.\n", ep.ID, ep.URL)
			return nil
		}
		fmt.Fprintf(e.stdout, "Enabled webhook endpoint %s (%s).\n", ep.ID, ep.URL)
		fmt.Fprintf(e.stderr, "Events committed while it was disabled are not sent: queue one again with `onboard webhooks redeliver EVENT_ID --endpoint %s`, or the partner reads them from the events API.\n", ep.ID)
		return nil
	})
}

// WebhooksDisableCmd disables an endpoint.
type WebhooksDisableCmd struct{ endpointArg }

// Run disables the endpoint.
func (c *WebhooksDisableCmd) Run(e *env) error {
	if err := c.check(); err != nil {
		return err
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		ep, err := a.DisableEndpoint(ctx, c.ID)
		if err != nil {
			return err
		}
		if ep.Unchanged {
			fmt.Fprintf(e.stdout, "Webhook endpoint %s (%s) is already disabled (%s).\n", ep.ID, ep.URL, ep.DisabledReason)
			return nil
		}
		fmt.Fprintf(e.stdout, "Disabled webhook endpoint %s (%s); its queued deliveries were dropped.\n", ep.ID, ep.URL)
		return nil
	})
}

// WebhooksTestCmd sends a webhook.test event.
type WebhooksTestCmd struct{ endpointArg }

// Run queues the test event and prints its id alone on stdout.
func (c *WebhooksTestCmd) Run(e *env) error {
	if err := c.check(); err != nil {
		return err
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		queued, err := a.TestEndpoint(ctx, c.ID)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, queued.EventID)
		fmt.Fprintf(e.stderr, "Queued a %s event for webhook endpoint %s; follow it with `onboard webhooks deliveries --event %s`.\n",
			onboarding.EventWebhookTest, queued.EndpointID, queued.EventID)
		fmt.Fprint(e.stderr, notDelivering(a))
		return nil
	})
}

// WebhooksRotateSecretCmd rotates an endpoint's signing secret.
type WebhooksRotateSecretCmd struct{ endpointArg }

// Run prints the new secret alone on stdout, and on stderr until when the
// old one keeps signing.
func (c *WebhooksRotateSecretCmd) Run(e *env) error {
	if err := c.check(); err != nil {
		return err
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		rotated, err := a.RotateEndpointSecret(ctx, c.ID)
		if err != nil {
			return err
		}
		if err := e.printSecret(rotated.Secret); err != nil {
			// Older secrets keep signing beside it (onboarding.SecretOverlap),
			// so a second rotation loses nothing.
			return fmt.Errorf("the new signing secret could not be written to stdout (%v); deliveries are signed with it and, for %d hours, with the previous ones: rotate again to get a secret you can store", err, int(onboarding.SecretOverlap/time.Hour))
		}
		fmt.Fprintf(e.stderr, "Rotated the signing secret of webhook endpoint %s (%s).\nThe secret above is shown only once: store it now.\n",
			rotated.Endpoint.ID, rotated.Endpoint.URL)
		if !rotated.PreviousUntil.IsZero() {
			fmt.Fprintf(e.stderr, "The previous secret keeps signing deliveries beside the new one for %d hours, until %s.\n",
				int(onboarding.SecretOverlap/time.Hour), rotated.PreviousUntil.UTC().Format(time.RFC3339))
		}
		return nil
	})
}

// WebhooksDeliveriesCmd shows the delivery log.
type WebhooksDeliveriesCmd struct {
	Endpoint string `help:"Only the attempts of this endpoint." placeholder:"ID"`
	Event    string `help:"Only the attempts of this event." placeholder:"EVENT_ID"`
	Failed   bool   `help:"Only failed attempts."`
	Limit    int    `help:"At most this many attempts (default 100)." default:"100" placeholder:"N"`
	JSON     bool   `help:"Print JSON instead of a table." name:"json"`
}

// Run prints one line per attempt, newest first.
func (c *WebhooksDeliveriesCmd) Run(e *env) error {
	if c.Limit < 1 {
		return fmt.Errorf("--limit must be at least 1")
	}
	q := admin.DeliveryQuery{EndpointID: c.Endpoint, EventID: c.Event, FailedOnly: c.Failed, Limit: c.Limit}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		lines, err := a.DeliveryAttempts(ctx, q)
		if err != nil {
			return err
		}
		if c.JSON {
			return printJSON(e.stdout, lines)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "AT\tEVENT\tTYPE\tENDPOINT\tATTEMPT\tSTATUS\tLATENCY\tRESULT")
		for _, l := range lines {
			status, result := "-", "ok"
			if l.StatusCode != 0 {
				status = strconv.Itoa(l.StatusCode)
			}
			if !l.Success {
				result = l.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%dms\t%s\n", when(&l.At), l.EventID, l.EventType, l.EndpointID,
				l.Attempt, status, l.LatencyMS, result)
		}
		return tw.Flush()
	})
}

// WebhooksRedeliverCmd queues an event again.
type WebhooksRedeliverCmd struct {
	EventID  string `arg:"" name:"EVENT_ID" help:"The event's id (evt_...), as webhooks deliveries and the events API show it."`
	Endpoint string `help:"Only to this endpoint. Default: every enabled endpoint that wants the event." placeholder:"ID"`
}

// Run queues the event and says for which endpoints.
func (c *WebhooksRedeliverCmd) Run(e *env) error {
	if err := checkIDArg("EVENT_ID", c.EventID); err != nil {
		return err
	}
	return e.withAdmin(func(ctx context.Context, a adminOps) error {
		queued, err := a.Redeliver(ctx, admin.Redeliver{EventID: c.EventID, EndpointID: c.Endpoint})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Queued event %s for delivery to %s.\n", queued.EventID, strings.Join(queued.Endpoints, ", "))
		fmt.Fprint(e.stderr, notDelivering(a))
		return nil
	})
}

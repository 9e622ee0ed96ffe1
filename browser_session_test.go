package main

import (
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// sessionTimeoutConfig is the browser tests' configuration with 20-second
// sessions: the timeout warning shows after 10 seconds, and leaves 10 for
// the test to act on it, even under -race.
const sessionTimeoutConfig = browserConfig + `
[limits]
session_timeout = "20s"
`

// TestBrowserSessionTimeout: before the session ends, a dialog warns and
// offers "Stay signed in"; when it ends anyway (phone: the warning runs
// out; desktop: a post arrives after the end), what the applicant typed
// and had not saved is put back on the same page once they have
// confirmed their email address again.
func TestBrowserSessionTimeout(t *testing.T) {
	for _, size := range browserSizes {
		t.Run(size.name, func(t *testing.T) {
			b := newBrowser(t, size.width, size.height, size.mobile)
			s := startBrowserServerWith(t, sessionTimeoutConfig)
			created := s.createApplication(t, `{"primary_contact":{"email":"jo@northwind.example","name":"Jo Reed"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`)
			link := created["link"].(string)
			jo := b.tab(t)
			jo.open(link + "?auth_code=" + created["pre_auth_code"].(string))
			jo.open(link + "/s/business")
			jo.typeInto("annual_turnover.amount", "250000")
			jo.typeInto("business_description", "Wholesale of tea and coffee")

			// The warning, and staying signed in.
			jo.do("wait for the warning", chromedp.WaitVisible(byID("timeout-warning")))
			jo.wantText("You will be signed out soon", "Stay signed in")
			if got := jo.focused(); got != "stay-signed-in" {
				jo.fail("the warning's focus is on %q, want Stay signed in", got)
			}
			jo.wantTargets("#stay-signed-in")
			jo.shot("timeout-warning")
			jo.do("stay signed in", chromedp.Click(byID("stay-signed-in"), chromedp.NodeVisible))
			jo.waitUntil("the warning to close", `!document.getElementById("timeout-warning").open`)
			if got := jo.focused(); got != "business_description" {
				jo.fail("after Stay signed in the focus is on %q, want back where it was", got)
			}

			if size.mobile {
				// The warning runs out: the page reloads, asking to sign in.
				jo.do("wait for the warning", chromedp.WaitVisible(byID("timeout-warning")))
				jo.waitUntil("the sign-in page", `!!document.getElementById("send-code")`)
				jo.wantText("You have been signed out. Confirm your email address to continue: what you entered has been kept in this browser tab.")
				jo.shot("signed-out-kept")
			} else {
				// The session ends behind the page's back (its cookie is
				// gone), and the applicant saves.
				if _, err := chromedp.Call(jo.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
					jo.fail("drop the session: %v", err)
				}
				jo.clickAndWait("save-later")
				jo.wantHeading("You have been signed out")
				jo.wantText("What you entered has been kept in this browser tab.")
				jo.wantFits()
				jo.shot("post-after-end")
				jo.clickAndWait("start")
			}
			// Signing in again leads back to the page, with what was typed.
			jo.wantHeading("Confirm it is you")
			jo.clickAndWait("send-code")
			jo.typeInto("code", codeIn(t, nthMailTo(t, s.data, "jo@northwind.example", 2)))
			jo.clickAndWait("verify")
			jo.waitUntil("the business page", `location.pathname.endsWith("/s/business") && !!document.getElementById("unsaved-notice")`)
			jo.wantText("You were signed out before your answers on this page were saved. We have put back what you entered")
			if got := jo.value("annual_turnover.amount") + " | " + jo.value("business_description"); got != "250000 | Wholesale of tea and coffee" {
				jo.fail("the answers put back read %q", got)
			}
			jo.wantFits()
			jo.shot("answers-put-back")
			jo.clickAndWait("save-later")
			jo.wantText("Your answers are saved.")
		})
	}
}

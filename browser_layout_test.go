package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The layout tests measure the applicant's form in Chromium at a phone's
// 360 px and a desktop's 1280 px: the page's padding keeps notices, error
// summaries and buttons off the header and footer, long unbroken answers
// never make a page scroll sideways, touch targets are at least 44 px high,
// short inputs are as narrow as their answers and review labels sit on the
// first line of their values.

// minTarget is the least height, in CSS pixels, of a touch target.
const minTarget = 44

// spacing is what wantSpaced measures, in CSS pixels.
type spacing struct {
	PaddingTop, PaddingBottom, PaddingLeft float64 // main's computed padding
	GapTop                                 float64 // from the header's bottom to the element's top
	GapBottom                              float64 // from main's last button's bottom to the footer's top; -1 without a button
}

// wantSpaced asserts that main keeps its padding and that the first
// element matching sel, and main's last button, keep clear of the header
// and the footer.
func (tb *tab) wantSpaced(sel string) {
	tb.t.Helper()
	js := fmt.Sprintf(`(() => {
		const m = getComputedStyle(document.querySelector("main"));
		const header = document.querySelector("header").getBoundingClientRect();
		const footer = document.querySelector("footer").getBoundingClientRect();
		const e = document.querySelector(%q);
		const buttons = [...document.querySelectorAll("main button, main .button")].filter(b => b.getBoundingClientRect().height > 0);
		const last = buttons.pop();
		return JSON.stringify({
			PaddingTop: parseFloat(m.paddingTop), PaddingBottom: parseFloat(m.paddingBottom), PaddingLeft: parseFloat(m.paddingLeft),
			GapTop: e ? e.getBoundingClientRect().top - header.bottom : -1,
			GapBottom: last ? footer.top - last.getBoundingClientRect().bottom : -1,
		});
	})()`, sel)
	var got spacing
	if err := json.Unmarshal([]byte(tb.eval(js)), &got); err != nil {
		tb.fail("spacing: %v", err)
	}
	switch {
	case got.PaddingTop <= 0 || got.PaddingBottom <= 0 || got.PaddingLeft <= 0:
		tb.fail("main's padding is wiped: %+v", got)
	case got.GapTop < 8:
		tb.fail("%s is %.1f px below the header, want at least 8 (%+v)", sel, got.GapTop, got)
	case got.GapBottom != -1 && got.GapBottom < 8:
		tb.fail("main's last button is %.1f px above the footer, want at least 8 (%+v)", got.GapBottom, got)
	}
}

// wantTargets asserts that every visible element matching sel (at least
// one) is at least minTarget px high.
func (tb *tab) wantTargets(sel string) {
	tb.t.Helper()
	js := fmt.Sprintf(`JSON.stringify([...document.querySelectorAll(%q)].filter(e => e.getBoundingClientRect().width > 0).map(e => ({
		What: (e.id || e.innerText || e.tagName).slice(0, 40), Height: e.getBoundingClientRect().height })))`, sel)
	var got []struct {
		What   string
		Height float64
	}
	if err := json.Unmarshal([]byte(tb.eval(js)), &got); err != nil {
		tb.fail("targets: %v", err)
	}
	if len(got) == 0 {
		tb.fail("no %s on the page to measure", sel)
	}
	for _, e := range got {
		if e.Height < minTarget {
			tb.fail("%s %q is %.1f px high, want at least %d", sel, e.What, e.Height, minTarget)
		}
	}
}

// wantRowsClickable asserts that each task row of the overview is its
// link as a whole: a touch on the row's status tag opens the task.
func (tb *tab) wantRowsClickable() {
	tb.t.Helper()
	tb.wantTargets(".task a")
	bad := tb.eval(`[...document.querySelectorAll(".task")].filter(row => {
		const a = row.querySelector("a"), tag = row.querySelector(".tag").getBoundingClientRect();
		const hit = document.elementFromPoint(tag.left + tag.width / 2, tag.top + tag.height / 2);
		return !hit || hit.closest("a") !== a;
	}).map(row => row.querySelector("a").id).join(", ")`)
	if bad != "" {
		tb.fail("task rows not clickable as a whole: %s", bad)
	}
}

// width is the rendered width of the element with id.
func (tb *tab) width(id string) float64 {
	tb.t.Helper()
	var w float64
	if _, err := fmt.Sscan(tb.eval(fmt.Sprintf(`String(document.getElementById(%q).getBoundingClientRect().width)`, id)), &w); err != nil {
		tb.fail("width of #%s: %v", id, err)
	}
	return w
}

// wantNarrower asserts that input short is at most ratio times as wide
// as input full.
func (tb *tab) wantNarrower(short, full string, ratio float64) {
	tb.t.Helper()
	if s, f := tb.width(short), tb.width(full); s <= 0 || s > f*ratio {
		tb.fail("#%s is %.1f px wide beside #%s's %.1f px, want at most %.2f times as wide", short, s, full, f, ratio)
	}
}

// layoutConfig serves a country with no company register, so that the
// applicant types the company's name.
const layoutConfig = `
[[organizations]]
id = "acme"
name = "Acme Payments"
default_config = "acme-standard"

  [[organizations.configs]]
  id = "acme-standard"
  form = "standard"
  countries = ["DE"]
`

// TestBrowserLayout measures the form at 360 px on a touch phone and at
// 1280 px on a desktop.
func TestBrowserLayout(t *testing.T) {
	for _, size := range browserSizes {
		t.Run(size.name, func(t *testing.T) {
			b := newBrowser(t, size.width, size.height, size.mobile)
			s := startBrowserServerWith(t, layoutConfig)
			created := s.createApplication(t, `{"primary_contact":{"email":"lee@example.com","name":"Lee Chan"},"country":"DE","company_number":"HRB 12345","company_name":"Lee Trading Ltd","pre_auth":true}`)
			link := created["link"].(string)
			lee := b.tab(t)
			lee.open(link + "?auth_code=" + created["pre_auth_code"].(string))
			if w := lee.eval(`String(window.innerWidth)`); w != fmt.Sprint(size.width) {
				t.Fatalf("viewport is %s px wide, want %d", w, size.width)
			}

			// The overview: whole-row task links, each a full touch target.
			lee.wantSpaced("h1")
			lee.wantRowsClickable()
			lee.wantTargets(".tasks a")
			lee.shot("overview")

			// An error summary keeps clear of the header; a date's parts and
			// a postcode are narrow.
			lee.clickAndWait("task-company")
			lee.wantNarrower("incorporation_date.day", "company_name", 0.25)
			lee.wantNarrower("incorporation_date.year", "company_name", 0.3)
			lee.wantNarrower("registered_address.postcode", "registered_address.line1", 0.5)
			lee.typeInto("website", "not a url")
			lee.clickAndWait("save-continue")
			lee.wantText("There is a problem")
			lee.wantSpaced(".error-summary")
			lee.wantTargets("main button")
			lee.shot("company-error")

			// 200 unbroken characters of company name (the most a name
			// may have), saved; a notice keeps clear of the header.
			long := strings.Repeat("W", 200)
			lee.typeInto("website", "https://lee.example")
			lee.fill("company_name", long)
			lee.clickAndWait("save-later")
			lee.wantText("Your answers are saved.")
			lee.wantSpaced(".notice")
			lee.wantFits()
			lee.shot("saved-notice")
			lee.open(link + "/s/company")
			if got := lee.value("company_name"); got != long {
				t.Fatalf("company_name holds %d characters after the save, want 5000", len(got))
			}
			lee.wantFits()
			lee.shot("company-long")

			// The longest business description the form takes, unbroken;
			// radios and checkboxes with their labels are touch targets.
			lee.open(link + "/s/business")
			lee.wantTargets(".choice label")
			lee.wantTargets("main button")
			lee.wantNarrower("annual_turnover.amount", "business_description", 0.5)
			lee.wantNarrower("high_risk_revenue_percentage", "business_description", 0.5)
			description := strings.Repeat("x", 2000)
			lee.fill("business_description", description)
			lee.clickAndWait("save-later")
			lee.wantText("Your answers are saved.")
			lee.open(link + "/s/business")
			if got := lee.value("business_description"); got != description {
				t.Fatalf("business_description holds %d characters after the save, want 2000", len(got))
			}
			lee.wantFits()
			lee.shot("business-long")

			// People and owners: Edit and Remove are touch targets.
			lee.open(link + "/entities/new")
			lee.typeInto("name", "Lee Group Holdings Ltd")
			lee.fill("type", "holding_company")
			lee.typeInto("country", "GB")
			lee.clickAndWait("save-entity")
			lee.wantText("Lee Group Holdings Ltd has been saved.")
			lee.wantSpaced(".notice")
			lee.wantTargets(".card-actions a")
			lee.wantTargets(".card-actions button")
			lee.wantTargets("main .button")
			lee.shot("people")
			lee.open(link + "/people/new")
			lee.wantTargets(".choice label")
			lee.wantNarrower("person_date_of_birth.year", "person_full_name", 0.3)
			lee.wantNarrower("person_home_address.postcode", "person_home_address.line1", 0.5)
			lee.shot("person")

			// The review shows both long answers without sideways scrolling,
			// each label on the first line of its value.
			lee.open(link + "/review")
			lee.wantHeading("Check your answers before sending your application")
			lee.wantFits()
			lee.wantSpaced("h1")
			lee.wantTargets(".summary .change a") // (nothing to send yet: no button)
			if !size.mobile {
				gap := lee.eval(`(() => {
					const row = [...document.querySelectorAll(".summary .row")].find(r => r.querySelector("dd").innerText.length >= 2000);
					if (!row) return "no row";
					return String(Math.abs(row.querySelector("dt").getBoundingClientRect().top - row.querySelector("dd").getBoundingClientRect().top));
				})()`)
				var d float64
				if _, err := fmt.Sscan(gap, &d); err != nil || d > 2 {
					lee.fail("the long value's label is %s px off its first line, want at most 2", gap)
				}
			}
			lee.shot("review")
		})
	}
}

package main

import (
	"encoding/json"
	"errors"
	"sort"
	"testing"

	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/google/go-cmp/cmp"

	"github.com/chromedp/chromedp"
)

// Accessibility checks with axe-core (Deque's rules engine, the one
// GOV.UK's own services run). `.ci/run` installs it through npm and passes
// its path in ONBOARD_AXE_JS; the browser tests inject it into each page
// state they visit and fail on any violation. Without it (a developer's
// machine) the check is skipped with a printed reason, and with CI=true it
// fails instead, as the browser tests do without Chromium.

// axeRules are the rule sets checked: WCAG 2.2 A and AA, and axe's best
// practices (landmarks, one h1, headings in order, unique ids).
var axeRules = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"}

// axeSource reads axe-core's script once per test binary.
var axeSource = sync.OnceValues(func() (string, error) {
	path := os.Getenv("ONBOARD_AXE_JS")
	if path == "" {
		return "", fmt.Errorf("ONBOARD_AXE_JS is not set (npm install axe-core and point it at node_modules/axe-core/axe.min.js)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return string(b), nil
})

// axeViolation is one rule that failed, with the elements that fail it.
type axeViolation struct {
	ID    string `json:"id"`
	Help  string `json:"help"`
	Nodes []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

// wantAccessible runs axe-core on the page as it is now and fails the test
// with every violation found; state names the page state in the message.
func (tb *tab) wantAccessible(state string) {
	tb.t.Helper()
	violations, err := tb.axeViolations()
	if errors.Is(err, errNoAxe) {
		if os.Getenv("CI") == "true" {
			tb.t.Fatalf("axe-core is needed in CI: %v", err)
		}
		tb.t.Logf("skipping the axe-core check of %s: %v", state, err)
		return
	}
	if err != nil {
		tb.fail("axe-core on %s: %v", state, err)
	}
	if len(violations) == 0 {
		return
	}
	var b strings.Builder
	for _, v := range violations {
		fmt.Fprintf(&b, "\n- %s: %s", v.ID, v.Help)
		for i, n := range v.Nodes {
			if i == 3 {
				fmt.Fprintf(&b, "\n    … and %d more", len(v.Nodes)-3)
				break
			}
			fmt.Fprintf(&b, "\n    %v %s", n.Target, n.HTML)
		}
	}
	tb.fail("axe-core finds %d violations on %s:%s", len(violations), state, b.String())
}

// errNoAxe says that axe-core is not installed.
var errNoAxe = errors.New("axe-core is not installed")

// axeViolations injects axe-core into the page (once) and returns what it
// finds there.
func (tb *tab) axeViolations() ([]axeViolation, error) {
	src, err := axeSource()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoAxe, err)
	}
	if tb.scriptsOff {
		// axe-core is a script: let it run for the check only (the
		// page's own scripts have not run and do not run now).
		tb.setScripts(true)
		defer tb.setScripts(false)
	}
	loaded, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`typeof window.axe === "object"`))
	if err != nil {
		return nil, err
	}
	if !loaded {
		// DevTools evaluation is not bound by the page's CSP.
		if _, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](src+";true")); err != nil {
			return nil, fmt.Errorf("inject: %w", err)
		}
	}
	rules, _ := json.Marshal(axeRules)
	js := fmt.Sprintf(`axe.run(document, {runOnly: {type: "tag", values: %s}, resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, rules)
	out, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, err
	}
	var violations []axeViolation
	if err := json.Unmarshal([]byte(out), &violations); err != nil {
		return nil, err
	}
	return violations, nil
}

// TestBrowserAxeFindsViolations proves that the check can fail: an input
// without a label and an image without a text alternative, added to a
// real page, are reported.
func TestBrowserAxeFindsViolations(t *testing.T) {
	b := newBrowser(t, 1280, 900, false)
	s := startBrowserServer(t)
	created := s.createApplication(t, `{"primary_contact":{"email":"jane@northwind.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited"}`)
	tb := b.tab(t)
	tb.open(created["link"].(string))
	tb.wantAccessible("the verification page")
	tb.eval(`document.querySelector("main").insertAdjacentHTML("beforeend", '<input id="bare"><img src="/assets/none.png">'); ""`)
	violations, err := tb.axeViolations()
	if errors.Is(err, errNoAxe) && os.Getenv("CI") != "true" {
		t.Skipf("axe-core is not installed: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range violations {
		ids = append(ids, v.ID)
	}
	sort.Strings(ids)
	if diff := cmp.Diff([]string{"image-alt", "label"}, ids); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserErrors: errors speak plain words, mark only the inputs that
// are wrong, and each link of the error summary puts the focus on the
// input to fix; the browser's own checks look and sound the same. At a
// phone's size and a desktop's.
func TestBrowserErrors(t *testing.T) {
	for _, size := range browserSizes {
		t.Run(size.name, func(t *testing.T) {
			b := newBrowser(t, size.width, size.height, size.mobile)
			s := startBrowserServer(t)
			created := s.createApplication(t, `{"primary_contact":{"email":"jo@northwind.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`)
			jo := b.tab(t)
			jo.open(created["link"].(string) + "?auth_code=" + created["pre_auth_code"].(string))
			jo.clickAndWait("task-company")

			// A trading address with only its first line: the town and the
			// country are asked for, and only they are marked.
			jo.typeInto("trading_address.line1", "4 Quay Street")
			jo.clickAndWait("save-continue")
			jo.wantText("There is a problem", "Enter the town or city of the trading address", "Choose the country of the trading address")
			if strings.Contains(jo.text(), "line1") || strings.Contains(jo.text(), "missing:") {
				jo.fail("the errors speak the API's words")
			}
			marked := jo.eval(`[...document.querySelectorAll("[id^='trading_address.'][aria-invalid=true]")].map(e => e.id).join(" ")`)
			if marked != "trading_address.city trading_address.country" {
				jo.fail("marked inputs %q, want only the town and the country", marked)
			}
			jo.wantFits()
			jo.shot("address-errors")

			// The summary's link moves the focus to the town's input.
			jo.do("follow the summary link", chromedp.Click(`#error-summary a[href="#trading_address.city"]`, chromedp.NodeVisible))
			if got := jo.focused(); got != "trading_address.city" {
				jo.fail("the summary link focused %q, want trading_address.city", got)
			}

			// The browser's own check of a website: same look, same words,
			// announced.
			jo.typeInto("website", "northwind")
			jo.do("leave the website", chromedp.Focus(byID("phone"), chromedp.NodeVisible))
			jo.do("wait for the inline error", chromedp.WaitVisible(byID("website-inline-error")))
			got := jo.eval(`(() => { const e = document.getElementById("website-inline-error"); return [e.textContent, e.getAttribute("aria-live"), e.querySelector(".visually-hidden") ? "prefixed" : "bare", e.closest(".field").classList.contains("invalid"), document.getElementById("website").getAttribute("aria-invalid")].join("|") })()`)
			want := fmt.Sprintf("%s|polite|prefixed|true|true", "Error: Enter the website in the correct format, like https://www.example.com")
			if got != want {
				jo.fail("inline error %q, want %q", got, want)
			}
			jo.shot("inline-error")
		})
	}
}
